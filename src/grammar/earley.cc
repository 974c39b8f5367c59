#include "grammar/earley.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace radixlm::grammar {
namespace {

uint64_t Key(int32_t production, int32_t dot, int32_t origin) {
  // production < 2^24, dot < 2^16, origin < 2^24 in any realistic grammar and output.
  return (static_cast<uint64_t>(production) << 40) | (static_cast<uint64_t>(dot) << 24) |
         static_cast<uint64_t>(origin);
}

// Sets bits lo..hi of a 256-bit set, a word at a time (this runs for every terminal item of
// every Earley set; a per-byte loop over [0x80, 0xBF] ranges dominated mask computation).
void AddByteRange(int lo, int hi, std::array<uint64_t, 4>* bits) {
  for (int w = lo >> 6; w <= hi >> 6; ++w) {
    const int from = std::max(lo, w * 64) - w * 64;
    const int to = std::min(hi, w * 64 + 63) - w * 64;  // inclusive
    const uint64_t upto = to == 63 ? ~uint64_t{0} : (uint64_t{1} << (to + 1)) - 1;
    (*bits)[w] |= upto & ~((uint64_t{1} << from) - 1);
  }
}

}  // namespace

EarleyRecognizer::EarleyRecognizer(std::shared_ptr<const Cfg> cfg)
    : cfg_(std::move(cfg)), rule_epoch_(cfg_->rule_names.size(), 0) {
  auto first = std::make_shared<Set>();
  for (int32_t p : cfg_->rule_productions[cfg_->root]) first->items.push_back(MakeItem(p, 0, 0));
  Close(first.get(), 0);
  sets_.push_back(std::move(first));
}

EarleyRecognizer::Item EarleyRecognizer::MakeItem(int32_t production, int32_t dot,
                                                  int32_t origin) const {
  const CfgProduction& prod = cfg_->productions[production];
  int32_t next = kComplete;
  if (dot < static_cast<int32_t>(prod.rhs.size())) {
    next = prod.rhs[dot].is_terminal() ? kNextTerminal : prod.rhs[dot].rule;
  }
  return {production, dot, origin, next};
}

void EarleyRecognizer::Close(Set* set, int32_t index) const {
  // Deduplication: Earley sets are usually a few dozen items, where a linear scan beats
  // hashing (this runs once per byte of every vocabulary branch during mask computation);
  // a hash set takes over only for large sets.
  constexpr size_t kLinearLimit = 48;
  std::unordered_set<uint64_t> seen;
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    std::fill(rule_epoch_.begin(), rule_epoch_.end(), 0);
    epoch_ = 1;
  }
  if (index == 0) rule_epoch_[cfg_->root] = epoch_;  // set 0's kernel is root's productions
  auto add = [&](int32_t production, int32_t dot, int32_t origin) {
    std::vector<Item>& items = set->items;
    if (items.size() < kLinearLimit) {
      for (const Item& it : items) {
        if (it.production == production && it.dot == dot && it.origin == origin) return;
      }
    } else {
      if (seen.empty()) {
        for (const Item& it : items) seen.insert(Key(it.production, it.dot, it.origin));
      }
      if (!seen.insert(Key(production, dot, origin)).second) return;
    }
    items.push_back(MakeItem(production, dot, origin));
  };
  // items grows while we walk it: index-based loop, no references kept across add().
  for (size_t i = 0; i < set->items.size(); ++i) {
    const Item item = set->items[i];
    const CfgProduction& prod = cfg_->productions[item.production];
    if (item.dot == static_cast<int32_t>(prod.rhs.size())) {
      // Completion: advance every item of the origin set waiting on this rule.
      if (prod.lhs == cfg_->root && item.origin == 0) set->accepting = true;
      // A pointer to the vector, not to its buffer: add() may grow set->items meanwhile.
      const std::vector<Item>* waiting =
          item.origin == index ? &set->items : &sets_[item.origin]->items;
      for (size_t j = 0; j < waiting->size(); ++j) {
        const Item w = (*waiting)[j];
        if (w.next_rule == prod.lhs) add(w.production, w.dot + 1, w.origin);
      }
      continue;
    }
    const CfgSymbol& next = prod.rhs[item.dot];
    if (next.is_terminal()) {
      AddByteRange(next.lo, next.hi, &set->scannable);
      continue;
    }
    if (rule_epoch_[next.rule] != epoch_) {
      // (p, 0, index) items come only from here, once per rule per set: no duplicates.
      rule_epoch_[next.rule] = epoch_;
      for (int32_t p : cfg_->rule_productions[next.rule]) {
        set->items.push_back(MakeItem(p, 0, index));
        if (!seen.empty()) seen.insert(Key(p, 0, index));
      }
    }
    if (cfg_->nullable[next.rule]) add(item.production, item.dot + 1, item.origin);
  }
}

bool EarleyRecognizer::Push(uint8_t byte) {
  const Set& current = *sets_.back();
  if (!current.CanScan(byte)) return false;
  auto next = std::make_shared<Set>();
  next->items.reserve(current.items.size() + 16);  // one allocation in the common case
  for (const Item& item : current.items) {
    if (item.next_rule != kNextTerminal) continue;
    const CfgSymbol& s = cfg_->productions[item.production].rhs[item.dot];
    if (s.lo <= byte && byte <= s.hi) {
      next->items.push_back(MakeItem(item.production, item.dot + 1, item.origin));
    }
  }
  Close(next.get(), static_cast<int32_t>(sets_.size()));
  sets_.push_back(std::move(next));
  return true;
}

int EarleyRecognizer::CountNextBytes(uint8_t* only) const {
  const Set& s = *sets_.back();
  int count = 0;
  for (int w = 0; w < 4; ++w) {
    count += std::popcount(s.scannable[w]);
    if (s.scannable[w] != 0)
      *only = static_cast<uint8_t>(w * 64 + std::countr_zero(s.scannable[w]));
  }
  return count;
}

int32_t EarleyRecognizer::CanonicalState(const Interner& intern) const {
  // Sets beyond this many items (deep right recursion) are not keyed: their keys would be
  // large and rarely repeat.
  constexpr size_t kMaxKeyItems = 512;
  std::vector<std::array<int32_t, 3>> triples;
  std::vector<int32_t> key;
  // Origins precede their sets, so keying in order finds every origin's id ready.
  for (size_t i = 0; i < sets_.size(); ++i) {
    const Set& set = *sets_[i];
    if (set.canonical.load(std::memory_order_relaxed) >= 0) continue;
    if (set.items.size() > kMaxKeyItems) return -1;
    triples.clear();
    for (const Item& item : set.items) {
      // A complete item has done its work in Close; later sets never read it (they scan
      // terminal items and complete items waiting on a rule). Leaving it out is what makes a
      // loop converge: its origin is the previous set, which would chain every key to the last.
      if (item.next_rule == kComplete) continue;
      int32_t origin = -1;
      if (static_cast<size_t>(item.origin) != i) {
        origin = sets_[item.origin]->canonical.load(std::memory_order_relaxed);
        if (origin < 0) return -1;
      }
      triples.push_back({item.production, item.dot, origin});
    }
    std::sort(triples.begin(), triples.end());
    key.assign({i == 0 ? 1 : 0, set.accepting ? 1 : 0});
    for (const auto& t : triples) key.insert(key.end(), t.begin(), t.end());
    const int32_t id = intern(key);
    if (id < 0) return -1;
    set.canonical.store(id, std::memory_order_relaxed);
  }
  return sets_.back()->canonical.load(std::memory_order_relaxed);
}

}  // namespace radixlm::grammar
