#include "tokenizer/bpe.h"

#include <algorithm>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t offset;  // into the byte-encoded word
  uint32_t size;    // bytes; 0 once merged into its left neighbour
  int32_t id;       // token of this symbol's text, or -1
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  uint32_t size;   // left.size + right.size when queued; stale if that changed
  int32_t result;  // token id of the merged text, or -1
};

// Lowest rank first; among equal ranks the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

// Buffers reused across the words of one EncodeWords call.
struct BpeEncoder::Scratch {
  std::string encoded;
  std::vector<Symbol> symbols;
  std::vector<Bigram> heap;
};

BpeEncoder::BpeEncoder(const TokenIndex* index, const std::vector<std::string>& merges,
                       Options options)
    : index_(index), options_(options) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    byte_symbol_ids_[b] = index_->Find(ByteToUnicode(b));
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    const char raw = static_cast<char>(b);
    // Byte-level, llama.cpp looks up each byte of the encoded text as a one-char token.
    byte_fallback_ids_[b] = options_.spm_style ? index_->Find(std::string_view(name, 6))
                                               : index_->Find(std::string_view(&raw, 1));
  }
  pair_merges_.reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // As llama.cpp: split at the first space after the first byte; no space = empty halves.
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    const std::string_view whole = m;
    const std::string_view left = space == std::string::npos ? "" : whole.substr(0, space);
    const std::string_view right = space == std::string::npos ? "" : whole.substr(space + 1);
    const int32_t left_id = index_->Find(left);
    const int32_t right_id = index_->Find(right);
    if (left_id >= 0 && right_id >= 0) {
      joined.assign(left);
      joined.append(right);
      pair_merges_.emplace(PairKey(left_id, right_id),
                           Merge{static_cast<int32_t>(rank), index_->Find(joined)});
    } else {
      joined.assign(left);
      joined.push_back(' ');
      joined.append(right);
      text_merges_.emplace(joined, static_cast<int32_t>(rank));
    }
  }
  merge_count_ = merges.size();
}

int32_t BpeEncoder::FindRank(std::string_view left_text, int32_t left_id,
                             std::string_view right_text, int32_t right_id, int32_t* result) const {
  if (left_id >= 0 && right_id >= 0) {
    auto it = pair_merges_.find(PairKey(left_id, right_id));
    if (it == pair_merges_.end()) return -1;
    *result = it->second.result;
    return it->second.rank;
  }
  if (text_merges_.empty()) return -1;
  std::string key(left_text);
  key.push_back(' ');
  key.append(right_text);
  auto it = text_merges_.find(key);
  if (it == text_merges_.end()) return -1;
  key.erase(left_text.size(), 1);
  *result = index_->Find(key);
  return it->second;
}

void BpeEncoder::EncodeWords(const std::vector<std::string_view>& words,
                             std::vector<int32_t>* out) const {
  Scratch scratch;
  for (std::string_view word : words) EncodeWord(word, &scratch, out);
}

bool BpeEncoder::SplitSymbols(std::string_view word, Scratch* scratch,
                              std::vector<int32_t>* out) const {
  std::string& encoded = scratch->encoded;
  std::vector<Symbol>& symbols = scratch->symbols;
  encoded.clear();
  symbols.clear();
  if (options_.spm_style) {
    encoded.assign(word);
    if (options_.ignore_merges || word.find_first_not_of('\n') == std::string_view::npos) {
      const int32_t whole = index_->Find(word);
      if (whole >= 0) {
        out->push_back(whole);
        return false;
      }
    }
    for (size_t pos = 0; pos < word.size();) {
      const size_t len =
          std::min(word.size() - pos, Utf8LenFromLead(static_cast<uint8_t>(word[pos])));
      const auto index = static_cast<int32_t>(symbols.size());
      symbols.push_back(Symbol{index - 1, index + 1, static_cast<uint32_t>(pos),
                               static_cast<uint32_t>(len), index_->Find(word.substr(pos, len))});
      pos += len;
    }
  } else {
    for (char c : word) {
      const auto byte = static_cast<uint8_t>(c);
      const std::string& u = ByteToUnicode(byte);
      const auto index = static_cast<int32_t>(symbols.size());
      symbols.push_back(Symbol{index - 1, index + 1, static_cast<uint32_t>(encoded.size()),
                               static_cast<uint32_t>(u.size()), byte_symbol_ids_[byte]});
      encoded.append(u);
    }
    if (options_.ignore_merges) {
      const int32_t whole = index_->Find(encoded);
      if (whole >= 0) {
        out->push_back(whole);
        return false;
      }
    }
  }
  symbols.back().next = -1;
  return true;
}

void BpeEncoder::EncodeWord(std::string_view word, Scratch* scratch,
                            std::vector<int32_t>* out) const {
  if (word.empty() || !SplitSymbols(word, scratch, out)) return;
  const std::string& encoded = scratch->encoded;
  std::vector<Symbol>& symbols = scratch->symbols;

  const std::string_view text = encoded;
  auto sym_text = [&](const Symbol& s) { return text.substr(s.offset, s.size); };
  // A binary heap (as std::priority_queue keeps it) in a buffer reused across words.
  std::vector<Bigram>& heap = scratch->heap;
  heap.clear();
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    int32_t result = -1;
    const int32_t rank = FindRank(sym_text(l), l.id, sym_text(r), r.id, &result);
    if (rank < 0) return;
    heap.push_back(Bigram{rank, left, right, l.size + r.size, result});
    std::push_heap(heap.begin(), heap.end(), BigramOrder());
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramOrder());
    const Bigram bigram = heap.back();
    heap.pop_back();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != bigram.size) continue;
    left.size += right.size;
    left.id = bigram.result;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (s.id >= 0) {
      out->push_back(s.id);
      continue;
    }
    // Not a token: llama.cpp falls back to the single bytes of the (encoded) text.
    for (char c : sym_text(s)) {
      const int32_t id = byte_fallback_ids_[static_cast<uint8_t>(c)];
      if (id >= 0) out->push_back(id);
    }
  }
}

}  // namespace radixlm::tokenizer
