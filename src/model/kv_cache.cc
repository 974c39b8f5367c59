#include "model/kv_cache.h"

#include <cstdlib>

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
  cache->row_elems_ = config.kv_size();
  cache->dtype_ = options.dtype;
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
    cache->layer_offset_.push_back(n);
    cache->layer_rows_.push_back(rows);
    n += 2 * static_cast<size_t>(rows) * static_cast<size_t>(cache->row_elems_);
  }
  cache->data_.reset(static_cast<uint16_t*>(std::calloc(n, sizeof(uint16_t))));
  if (cache->data_ == nullptr) {
    return ResourceExhausted("cannot allocate a KV cache of " +
                             std::to_string(n * sizeof(uint16_t) >> 20) + " MiB");
  }
  cache->total_elems_ = n;
  return cache;
}

void KvCache::FreeDeleter::operator()(uint16_t* p) const { std::free(p); }

size_t KvCache::bytes() const { return total_elems_ * sizeof(uint16_t); }

kernels::KvLayerView KvCache::Layer(int64_t layer) {
  const size_t plane = static_cast<size_t>(layer_rows_[layer]) * row_elems_;
  uint16_t* base = data_.get() + layer_offset_[layer];
  kernels::KvLayerView view;
  view.dtype = dtype_;
  view.k = base;
  view.v = base + plane;
  view.row_elems = row_elems_;
  return view;
}

}  // namespace radixlm::model
