// EarleyRecognizer: incremental Earley recognition of a Cfg over bytes, with undo.
//
// One Earley set per consumed byte is kept on a stack, so Pop() undoes the last byte in O(1)
// and Rollback of tokens is just popping. Sets are immutable once built and held by
// shared_ptr, so copying a recognizer (Matcher::Clone) copies pointers (plus one small
// per-rule scratch vector), not items.
//
// Each set also records the 256-bit set of bytes some item can scan next: rejecting a byte is
// one bit test, which is what makes walking the vocabulary trie for a mask affordable.
// Nullable rules are handled as Aycock & Horspool do: predicting a nullable rule also advances
// past it immediately.
//
// Masks of EBNF grammars are cached by CanonicalState: two parse states with the same items,
// whose origin sets are (recursively) the same, accept exactly the same byte strings, so they
// share one mask however the output got there (a free-text loop reaches the same state after
// every byte).
//
// Not thread-safe; the Cfg is shared and immutable.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "grammar/cfg.h"

namespace radixlm::grammar {

class EarleyRecognizer {
 public:
  explicit EarleyRecognizer(std::shared_ptr<const Cfg> cfg);

  // Consumes one byte. Returns false and changes nothing when no parse can continue with it.
  bool Push(uint8_t byte);
  // Undoes the last successful Push. Requires consumed() > 0.
  void Pop() { sets_.pop_back(); }
  // Bytes consumed since the start.
  size_t consumed() const { return sets_.size() - 1; }
  void Truncate(size_t consumed) { sets_.resize(consumed + 1); }

  // The input so far is a complete sentence of the grammar.
  bool CanTerminate() const { return sets_.back()->accepting; }
  bool CanAccept(uint8_t byte) const { return sets_.back()->CanScan(byte); }
  // Number of distinct bytes Push would accept now; *only is set to one of them.
  int CountNextBytes(uint8_t* only) const;

  // Maps a set's canonical key to a small id (the same key always to the same id), or -1
  // when it keeps no more ids. The key: [1 if the first set else 0, 1 if accepting else 0,
  // then sorted triples (production, dot, id of the origin set or -1 for the set itself) of
  // the items that are not complete].
  using Interner = std::function<int32_t(const std::vector<int32_t>& key)>;
  // An id equal for exactly the parse states that accept the same continuations (see the
  // header comment), or -1 when `intern` ran out of ids or a set is too large to key.
  // Each set is keyed once (memoized in the shared set).
  int32_t CanonicalState(const Interner& intern) const;

 private:
  struct Item {
    int32_t production;
    int32_t dot;
    int32_t origin;  // index of the set where this production was predicted
    // The rule after the dot, or kNextTerminal / kComplete: cached so the completion scan
    // over an origin set reads only this array, not the productions.
    int32_t next_rule;
  };
  static constexpr int32_t kNextTerminal = -1;
  static constexpr int32_t kComplete = -2;
  Item MakeItem(int32_t production, int32_t dot, int32_t origin) const;
  struct Set {
    std::vector<Item> items;
    std::array<uint64_t, 4> scannable{};  // bit b: some item's next symbol accepts byte b
    bool accepting = false;
    // CanonicalState's id for this set once computed (-1: not yet). Atomic: sets are shared
    // by matchers on different threads; every writer stores the same value.
    mutable std::atomic<int32_t> canonical{-1};
    bool CanScan(uint8_t b) const { return (scannable[b >> 6] >> (b & 63)) & 1; }
  };

  // Completes `set` (which holds the kernel items) with predictions and completions; `index` is
  // its position in sets_.
  void Close(Set* set, int32_t index) const;

  std::shared_ptr<const Cfg> cfg_;
  std::vector<std::shared_ptr<const Set>> sets_;
  // Scratch for Close: rule_epoch_[r] == epoch_ means rule r was already predicted in the set
  // being closed, so its productions are added once without any duplicate check.
  mutable std::vector<uint32_t> rule_epoch_;
  mutable uint32_t epoch_ = 0;
};

}  // namespace radixlm::grammar
