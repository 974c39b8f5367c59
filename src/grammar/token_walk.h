// WalkVocabulary: visits every token whose bytes an automaton cursor accepts from its current
// state, walking the vocabulary in sorted order as a byte trie.
//
// The cursor keeps a stack of states, one per byte pushed: Push(byte) advances (returning false
// and leaving the cursor unchanged when the byte is rejected), Pop() undoes one byte. Tokens
// sharing a prefix with the previous token reuse the pushed prefix; a rejected prefix skips
// every following token that starts with it. The cursor is back where it started on return.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "grammar/token_vocab.h"

namespace radixlm::grammar {

template <typename Cursor, typename OnAllowed>
void WalkVocabulary(const TokenVocab& vocab, Cursor& cursor, OnAllowed on_allowed) {
  const auto& ids = vocab.sorted_ids();
  const auto& lcp = vocab.lcp();
  size_t depth = 0;  // bytes currently pushed
  size_t i = 0;
  while (i < ids.size()) {
    const std::string& token = vocab.bytes(ids[i]);
    const size_t keep = std::min(static_cast<size_t>(lcp[i]), depth);
    for (; depth > keep; --depth) cursor.Pop();
    bool accepted = true;
    for (; depth < token.size(); ++depth) {
      if (!cursor.Push(static_cast<uint8_t>(token[depth]))) {
        accepted = false;
        break;
      }
    }
    if (accepted) {
      on_allowed(ids[i]);
      ++i;
      continue;
    }
    // token[0..depth] is rejected: so is every following token that starts with it.
    const size_t rejected_len = depth + 1;
    for (++i; i < ids.size() && static_cast<size_t>(lcp[i]) >= rejected_len; ++i) {
    }
  }
  for (; depth > 0; --depth) cursor.Pop();
}

}  // namespace radixlm::grammar
