#include "grammar/earley.h"

#include <bit>
#include <unordered_set>

namespace radixlm::grammar {
namespace {

uint64_t Key(int32_t production, int32_t dot, int32_t origin) {
  // production < 2^24, dot < 2^16, origin < 2^24 in any realistic grammar and output.
  return (static_cast<uint64_t>(production) << 40) | (static_cast<uint64_t>(dot) << 24) |
         static_cast<uint64_t>(origin);
}

}  // namespace

EarleyRecognizer::EarleyRecognizer(std::shared_ptr<const Cfg> cfg) : cfg_(std::move(cfg)) {
  auto first = std::make_shared<Set>();
  for (int32_t p : cfg_->rule_productions[cfg_->root]) first->items.push_back({p, 0, 0});
  Close(first.get(), 0);
  sets_.push_back(std::move(first));
}

void EarleyRecognizer::Close(Set* set, int32_t index) const {
  std::unordered_set<uint64_t> seen;
  seen.reserve(set->items.size() * 4);
  for (const Item& it : set->items) seen.insert(Key(it.production, it.dot, it.origin));
  auto add = [&](int32_t production, int32_t dot, int32_t origin) {
    if (seen.insert(Key(production, dot, origin)).second) {
      set->items.push_back({production, dot, origin});
    }
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
        const CfgProduction& wp = cfg_->productions[w.production];
        if (w.dot < static_cast<int32_t>(wp.rhs.size()) && wp.rhs[w.dot].rule == prod.lhs) {
          add(w.production, w.dot + 1, w.origin);
        }
      }
      continue;
    }
    const CfgSymbol& next = prod.rhs[item.dot];
    if (next.is_terminal()) {
      for (int b = next.lo; b <= next.hi; ++b) set->scannable[b >> 6] |= uint64_t{1} << (b & 63);
      continue;
    }
    for (int32_t p : cfg_->rule_productions[next.rule]) add(p, 0, index);
    if (cfg_->nullable[next.rule]) add(item.production, item.dot + 1, item.origin);
  }
}

bool EarleyRecognizer::Push(uint8_t byte) {
  const Set& current = *sets_.back();
  if (!current.CanScan(byte)) return false;
  auto next = std::make_shared<Set>();
  for (const Item& item : current.items) {
    const CfgProduction& prod = cfg_->productions[item.production];
    if (item.dot < static_cast<int32_t>(prod.rhs.size())) {
      const CfgSymbol& s = prod.rhs[item.dot];
      if (s.is_terminal() && s.lo <= byte && byte <= s.hi) {
        next->items.push_back({item.production, item.dot + 1, item.origin});
      }
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
    if (s.scannable[w] != 0) *only = static_cast<uint8_t>(w * 64 + std::countr_zero(s.scannable[w]));
  }
  return count;
}

}  // namespace radixlm::grammar
