// KvCache: the K and V tensors of every layer, one row per token slot.
//
// A latent cache (multi-head latent attention, ModelConfig::IsMla) has one plane per layer:
// each row is the token's latent and roped key part, and the V the attention reads is the
// first mla_kv_rank values of that row (Layer().v is null; kernels/attention.h).
//
// Per layer, K and V are [n_slots, n_kv_heads * head_dim] arrays of the KV dtype (F16, BF16 or
// E5M2; kernels/attention.h), of the layer's own width (gemma4's sliding and global layers
// differ); a layer that reads another's K/V (ModelConfig::n_kv_layers) has none of its own, and
// Layer() gives it its source's. With
// n_swa_slots > 0, sliding-window layers have [n_swa_slots, ...] arrays of their own instead
// (rows addressed through ForwardBatch::swa_slot_map). Which slot
// holds which token of which request is decided outside the model (cache/KvPool hands out
// slot indices); the forward pass only writes the slots it is given and reads the slots it is
// told belong to a sequence's prefix. Not thread-safe: one forward at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/attention.h"
#include "model/model_config.h"
#include "model/recurrent_state.h"
#include "util/status.h"

namespace radixlm::model {

struct KvCacheOptions {
  int64_t n_slots = 0;  // token slots per layer (KvPool::storage_slots())
  // Rows of each sliding-window layer (KvPool::swa_storage_slots()); 0: n_slots like the rest.
  int64_t n_swa_slots = 0;
  kernels::KvDtype dtype = kernels::KvDtype::kF16;
  // Slots of the linear layers' state (a hybrid model's; recurrent_state.h): at most this many
  // sequences run at once, each with its own SequenceInput::state_slot. < 1: one.
  int64_t n_state_slots = 0;
};

class KvCache {
 public:
  // Allocates KvPlanes() (2, or 1 for a latent cache) * kv_size values of options.dtype
  // (zero-filled) per slot of every layer.
  // InvalidArgument if n_slots < 1, or n_swa_slots > 0 for a model without both sliding-window
  // and full layers; ResourceExhausted if the allocation fails.
  static StatusOr<std::unique_ptr<KvCache>> Create(const ModelConfig& config,
                                                   const KvCacheOptions& options);

  int64_t n_layers() const { return n_layers_; }
  int64_t n_slots() const { return n_slots_; }
  int64_t n_swa_slots() const { return n_swa_slots_; }  // 0: windowed layers use n_slots rows
  // Whether `layer` addresses its rows through the SWA slot map.
  bool IsSwaLayer(int64_t layer) const { return n_swa_slots_ > 0 && swa_layer_[layer]; }
  // The widest layer's n_kv_heads * head_dim (every layer's, in most models).
  int64_t row_elems() const { return row_elems_; }
  int64_t row_elems(int64_t layer) const { return layer_row_elems_[layer]; }
  // Whether `layer` stores K/V of its own (else Layer() is that of the layer it reads).
  bool HasOwnKv(int64_t layer) const { return kv_source_[layer] == layer; }
  kernels::KvDtype dtype() const { return dtype_; }
  int64_t elem_bytes() const { return kernels::KvDtypeBytes(dtype_); }
  size_t row_bytes() const { return static_cast<size_t>(row_elems_ * elem_bytes()); }
  size_t row_bytes(int64_t layer) const {
    return static_cast<size_t>(layer_row_elems_[layer] * elem_bytes());
  }
  size_t bytes() const;

  kernels::KvLayerView Layer(int64_t layer);
  // The linear layers' per-sequence state (a hybrid model's), else null.
  RecurrentState* recurrent() { return recurrent_.get(); }

  // K and V planes per layer: 2, or 1 for a latent cache (V inside the K row).
  int64_t planes() const { return planes_; }
  // Bytes of one token's K and V over every layer with its own (the unit of CopyOut / CopyIn).
  int64_t token_bytes() const { return token_bytes_; }
  // Token-major copies of the KV of `slots` ([slots.size()][token_bytes()]: per token, per
  // layer with K/V of its own, the K row then the V row; the K row alone in a latent cache).
  // Windowed layers with rows of their own use swa_slots (same length as slots). InvalidArgument on
  // a size mismatch or a row out of range.
  Status CopyOut(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                 std::span<uint8_t> out) const;
  Status CopyIn(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                std::span<const uint8_t> in);

 private:
  KvCache() = default;
  // Checks the arguments of CopyOut / CopyIn.
  Status CheckCopy(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                   size_t bytes) const;

  int64_t n_layers_ = 0;
  int64_t n_slots_ = 0;
  int64_t n_swa_slots_ = 0;
  std::vector<uint8_t> swa_layer_;        // [n_layers]
  std::vector<size_t> layer_offset_;      // [n_layers]: first element (not byte) of the K plane
  std::vector<int64_t> layer_rows_;       // [n_layers]
  std::vector<int64_t> layer_row_elems_;  // [n_layers]
  std::vector<int64_t> kv_source_;        // [n_layers]: the layer whose K/V it reads
  int64_t row_elems_ = 0;
  int64_t planes_ = 2;
  int64_t token_bytes_ = 0;
  size_t total_bytes_ = 0;
  kernels::KvDtype dtype_ = kernels::KvDtype::kF16;
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  // Per layer [planes_ (K, V)][rows][row_elems] values of dtype_, layers back to back; calloc'ed,
  // so untouched pages cost no memory until a slot is written.
  std::unique_ptr<uint8_t, FreeDeleter> data_;
  std::unique_ptr<RecurrentState> recurrent_;  // hybrid models only
};

}  // namespace radixlm::model
