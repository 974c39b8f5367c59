#include "model/kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace radixlm::model {

StatusOr<std::unique_ptr<KvCache>> KvCache::Create(const ModelConfig& config,
                                                   const KvCacheOptions& options) {
  if (options.n_slots < 1) return InvalidArgument("KV cache needs at least one slot");
  if (options.n_slots > INT32_MAX || options.n_swa_slots > INT32_MAX) {
    return InvalidArgument("KV cache slot count must fit int32");
  }
  if (options.n_swa_slots < 0) return InvalidArgument("KV cache SWA slot count is negative");
  std::unique_ptr<KvCache> cache(new KvCache());
  cache->n_layers_ = config.n_layers;
  cache->n_slots_ = options.n_slots;
  cache->n_swa_slots_ = options.n_swa_slots;
  cache->row_elems_ = config.MaxKvSize();
  cache->dtype_ = options.dtype;
  cache->planes_ = config.KvPlanes();
  int64_t n_windowed = 0;
  for (int64_t l = 0; l < config.n_layers; ++l) {
    const bool windowed = config.LayerAttention(l).sliding_window > 0;
    n_windowed += windowed ? 1 : 0;
    cache->swa_layer_.push_back(windowed ? 1 : 0);
  }
  if (options.n_swa_slots > 0 && (n_windowed == 0 || n_windowed == config.n_layers)) {
    return InvalidArgument(
        "a separate sliding-window KV pool needs a model with both sliding-window and "
        "full-attention layers");
  }
  size_t n = 0;
  for (int64_t l = 0; l < config.n_layers; ++l) {
    const int64_t rows = cache->IsSwaLayer(l) ? cache->n_swa_slots_ : cache->n_slots_;
    const int64_t source = config.LayerAttention(l).kv_layer;
    const int64_t elems = config.LayerKvSize(l);
    cache->kv_source_.push_back(source);
    cache->layer_row_elems_.push_back(elems);
    cache->layer_rows_.push_back(rows);
    if (source != l) {  // reads an earlier layer's K/V: no rows of its own
      cache->layer_offset_.push_back(cache->layer_offset_[source]);
      continue;
    }
    cache->layer_offset_.push_back(n);
    n += static_cast<size_t>(cache->planes_) * static_cast<size_t>(rows) *
         static_cast<size_t>(elems);
    cache->token_bytes_ += cache->planes_ * elems * kernels::KvDtypeBytes(options.dtype);
  }
  const size_t bytes = n * static_cast<size_t>(kernels::KvDtypeBytes(options.dtype));
  cache->data_.reset(static_cast<uint8_t*>(std::calloc(bytes, 1)));
  if (cache->data_ == nullptr) {
    return ResourceExhausted("cannot allocate a KV cache of " + std::to_string(bytes >> 20) +
                             " MiB");
  }
  cache->total_bytes_ = bytes;
  if (config.IsHybrid()) {
    RADIXLM_ASSIGN_OR_RETURN(cache->recurrent_,
                             RecurrentState::Create(config, std::max<int64_t>(1, options.n_state_slots)));
  }
  return cache;
}

void KvCache::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

size_t KvCache::bytes() const { return total_bytes_; }

kernels::KvLayerView KvCache::Layer(int64_t layer) {
  layer = kv_source_[layer];
  const size_t plane = static_cast<size_t>(layer_rows_[layer]) * row_bytes(layer);
  uint8_t* base = data_.get() + layer_offset_[layer] * elem_bytes();
  kernels::KvLayerView view;
  view.dtype = dtype_;
  view.k = base;
  view.v = planes_ == 2 ? base + plane : nullptr;  // (a latent cache has no V plane)
  view.row_elems = layer_row_elems_[layer];
  return view;
}

Status KvCache::CheckCopy(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                          size_t bytes) const {
  if (bytes != slots.size() * static_cast<size_t>(token_bytes())) {
    return InvalidArgument("KV copy of " + std::to_string(bytes) + " bytes for " +
                           std::to_string(slots.size()) + " tokens");
  }
  if (n_swa_slots_ > 0 && swa_slots.size() != slots.size()) {
    return InvalidArgument("KV copy needs a sliding-window row per slot");
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] <= 0 || slots[i] >= n_slots_) return InvalidArgument("KV copy: slot out of range");
    if (n_swa_slots_ > 0 && (swa_slots[i] <= 0 || swa_slots[i] >= n_swa_slots_)) {
      return InvalidArgument("KV copy: sliding-window row out of range or released");
    }
  }
  return Status::Ok();
}

Status KvCache::CopyOut(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                        std::span<uint8_t> out) const {
  RADIXLM_RETURN_IF_ERROR(CheckCopy(slots, swa_slots, out.size()));
  uint8_t* dst = out.data();
  for (size_t i = 0; i < slots.size(); ++i) {
    for (int64_t l = 0; l < n_layers_; ++l) {
      if (!HasOwnKv(l)) continue;
      const size_t row_bytes = this->row_bytes(l);
      const size_t row = static_cast<size_t>(IsSwaLayer(l) ? swa_slots[i] : slots[i]);
      const size_t plane = static_cast<size_t>(layer_rows_[l]) * row_bytes;
      const uint8_t* k = data_.get() + layer_offset_[l] * elem_bytes() + row * row_bytes;
      std::memcpy(dst, k, row_bytes);
      if (planes_ == 2) std::memcpy(dst + row_bytes, k + plane, row_bytes);
      dst += planes_ * row_bytes;
    }
  }
  return Status::Ok();
}

Status KvCache::CopyIn(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                       std::span<const uint8_t> in) {
  RADIXLM_RETURN_IF_ERROR(CheckCopy(slots, swa_slots, in.size()));
  const uint8_t* src = in.data();
  for (size_t i = 0; i < slots.size(); ++i) {
    for (int64_t l = 0; l < n_layers_; ++l) {
      if (!HasOwnKv(l)) continue;
      const size_t row_bytes = this->row_bytes(l);
      const size_t row = static_cast<size_t>(IsSwaLayer(l) ? swa_slots[i] : slots[i]);
      const size_t plane = static_cast<size_t>(layer_rows_[l]) * row_bytes;
      uint8_t* k = data_.get() + layer_offset_[l] * elem_bytes() + row * row_bytes;
      std::memcpy(k, src, row_bytes);
      if (planes_ == 2) std::memcpy(k + plane, src + row_bytes, row_bytes);
      src += planes_ * row_bytes;
    }
  }
  return Status::Ok();
}

}  // namespace radixlm::model
