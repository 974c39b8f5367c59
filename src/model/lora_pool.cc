#include "model/lora_pool.h"

#include <algorithm>

namespace radixlm::model {

void LoraPool::Prepare(const ForwardBatch& batch) {
  in_batch_.clear();
  for (const SequenceInput& seq : batch.sequences) {
    if (seq.lora != nullptr &&
        std::find(in_batch_.begin(), in_batch_.end(), seq.lora) == in_batch_.end()) {
      in_batch_.push_back(seq.lora);
    }
  }
  if (in_batch_.empty() && entries_.empty()) return;
  ++pass_;
  // Forget adapters that no longer exist (an expired weak pointer never matches: a new
  // adapter at a freed adapter's address is a new entry).
  std::erase_if(entries_, [](const Entry& e) { return e.adapter.expired(); });
  for (const LoraAdapter* a : in_batch_) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [a](const Entry& e) { return e.adapter.lock().get() == a; });
    if (it == entries_.end()) {
      entries_.push_back({a->weak_from_this(), pass_});
    } else {
      it->last_use = pass_;
    }
    a->MakeResident();
  }
  if (capacity_ <= 0) return;
  while (static_cast<int32_t>(entries_.size()) > capacity_) {
    auto lru = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->last_use != pass_ && (lru == entries_.end() || it->last_use < lru->last_use)) {
        lru = it;
      }
    }
    if (lru == entries_.end()) break;  // every resident adapter is in this batch
    if (std::shared_ptr<const LoraAdapter> a = lru->adapter.lock()) a->Release();
    entries_.erase(lru);
    ++releases_;
  }
}

int32_t LoraPool::resident_count() const {
  int32_t n = 0;
  for (const Entry& e : entries_) {
    if (std::shared_ptr<const LoraAdapter> a = e.adapter.lock(); a && a->resident()) ++n;
  }
  return n;
}

int64_t LoraPool::resident_bytes() const {
  int64_t n = 0;
  for (const Entry& e : entries_) {
    if (std::shared_ptr<const LoraAdapter> a = e.adapter.lock(); a && a->resident()) {
      n += a->bytes();
    }
  }
  return n;
}

}  // namespace radixlm::model
