// KvCache: the K and V tensors of every layer, one row per token slot.
//
// Per layer, K and V are [n_slots, n_kv_heads * head_dim] arrays of F16 or BF16. Which slot
// holds which token of which request is decided outside the model (cache/KvPool hands out
// slot indices); the forward pass only writes the slots it is given and reads the slots it is
// told belong to a sequence's prefix. Not thread-safe: one forward at a time.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/attention.h"
#include "model/model_config.h"
#include "util/status.h"

namespace radixlm::model {

struct KvCacheOptions {
  int64_t n_slots = 0;  // token slots per layer (KvPool::storage_slots())
  kernels::KvDtype dtype = kernels::KvDtype::kF16;
};

class KvCache {
 public:
  // Allocates n_layers * 2 * n_slots * kv_size half-precision values (zero-filled).
  // InvalidArgument if n_slots < 1; ResourceExhausted if the allocation fails.
  static StatusOr<std::unique_ptr<KvCache>> Create(const ModelConfig& config,
                                                   const KvCacheOptions& options);

  int64_t n_layers() const { return n_layers_; }
  int64_t n_slots() const { return n_slots_; }
  int64_t row_elems() const { return row_elems_; }  // n_kv_heads * head_dim
  kernels::KvDtype dtype() const { return dtype_; }
  size_t bytes() const;

  kernels::KvLayerView Layer(int64_t layer);

 private:
  KvCache() = default;

  int64_t n_layers_ = 0;
  int64_t n_slots_ = 0;
  int64_t row_elems_ = 0;
  kernels::KvDtype dtype_ = kernels::KvDtype::kF16;
  struct FreeDeleter {
    void operator()(uint16_t* p) const;
  };
  // [n_layers][2 (K, V)][n_slots][row_elems] of uint16_t bits; calloc'ed, so untouched pages
  // cost no memory until a slot is written.
  std::unique_ptr<uint16_t, FreeDeleter> data_;
};

}  // namespace radixlm::model
