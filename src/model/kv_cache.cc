#include "model/kv_cache.h"

#include <cstdlib>

namespace radixlm::model {

StatusOr<std::unique_ptr<KvCache>> KvCache::Create(const ModelConfig& config,
                                                   const KvCacheOptions& options) {
  if (options.n_slots < 1) return InvalidArgument("KV cache needs at least one slot");
  if (options.n_slots > INT32_MAX) {
    return InvalidArgument("KV cache slot count must fit int32");
  }
  std::unique_ptr<KvCache> cache(new KvCache());
  cache->n_layers_ = config.n_layers;
  cache->n_slots_ = options.n_slots;
  cache->row_elems_ = config.kv_size();
  cache->dtype_ = options.dtype;
  const size_t n = static_cast<size_t>(cache->n_layers_) * 2 *
                   static_cast<size_t>(cache->n_slots_) * static_cast<size_t>(cache->row_elems_);
  cache->data_.reset(static_cast<uint16_t*>(std::calloc(n, sizeof(uint16_t))));
  if (cache->data_ == nullptr) {
    return ResourceExhausted("cannot allocate a KV cache of " +
                             std::to_string(n * sizeof(uint16_t) >> 20) + " MiB");
  }
  return cache;
}

void KvCache::FreeDeleter::operator()(uint16_t* p) const { std::free(p); }

size_t KvCache::bytes() const {
  return static_cast<size_t>(n_layers_) * 2 * n_slots_ * row_elems_ * sizeof(uint16_t);
}

kernels::KvLayerView KvCache::Layer(int64_t layer) {
  const size_t plane = static_cast<size_t>(n_slots_) * row_elems_;
  uint16_t* base = data_.get() + static_cast<size_t>(layer) * 2 * plane;
  kernels::KvLayerView view;
  view.dtype = dtype_;
  view.k = base;
  view.v = base + plane;
  view.row_elems = row_elems_;
  return view;
}

}  // namespace radixlm::model
