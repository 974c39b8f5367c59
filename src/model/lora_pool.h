// LoraPool: which LoRA adapters hold their working form in memory (model/lora_adapter.h's
// residency), as SGLang's adapter memory pool of --max-loras-per-batch slots. Before each
// forward pass the runner hands it the pass's batch: the batch's adapters are made resident,
// and while more than `capacity` adapters are, the least recently used one outside the batch
// is released (its converted matrices freed, its file's pages dropped; the next pass that
// needs it makes it resident again from its file). The scheduler admits at most
// --max-loras-per-batch adapters among the requests holding KV, so a batch never needs more.
//
// Adapters are held weakly: one unloaded whose last request has finished is gone (and its
// memory with it); the pool forgets it. Used only by the thread that runs forward passes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/forward_batch.h"
#include "model/lora_adapter.h"

namespace radixlm::model {

class LoraPool {
 public:
  // <= 0: no bound (every adapter met stays resident).
  void set_capacity(int32_t capacity) { capacity_ = capacity; }
  int32_t capacity() const { return capacity_; }

  void Prepare(const ForwardBatch& batch);

  int32_t resident_count() const;  // adapters the pool holds resident
  int64_t resident_bytes() const;
  int64_t releases() const { return releases_; }  // adapters released for room, in all

 private:
  struct Entry {
    std::weak_ptr<const LoraAdapter> adapter;
    uint64_t last_use = 0;  // the pass that last used it
  };

  int32_t capacity_ = 0;
  uint64_t pass_ = 0;
  int64_t releases_ = 0;
  std::vector<Entry> entries_;
  std::vector<const LoraAdapter*> in_batch_;  // scratch
};

}  // namespace radixlm::model
