#include "engine/prefix_kv.h"

#include <algorithm>
#include <cstring>

namespace radixlm {
namespace {

int32_t SwaRow(const KvPool& pool, int32_t slot) {
  return pool.swa_slot_map()[static_cast<size_t>(slot)];
}

}  // namespace

PrefixKv ReadPrefixKv(model::KvCache& kv, const KvPool& pool, std::span<const int32_t> tokens,
                      std::span<const int32_t> slots) {
  const auto n = static_cast<int64_t>(slots.size());
  PrefixKv out;
  out.tokens.assign(tokens.begin(), tokens.begin() + n);
  out.row_elems = static_cast<int32_t>(kv.row_elems());
  out.dtype = static_cast<int32_t>(kv.dtype());
  // Sliding-window rows: the longest suffix of positions that still have them.
  int64_t swa_from = n;
  while (swa_from > 0 && pool.HasSwa(slots[swa_from - 1])) --swa_from;
  for (int64_t layer = 0; layer < kv.n_layers(); ++layer) {
    const bool swa = kv.IsSwaLayer(layer);
    // A layer reading another's K/V carries none (its rows start past the end).
    const int64_t from = !kv.HasOwnKv(layer) ? n : swa ? swa_from : 0;
    const size_t row_bytes = kv.row_bytes(layer);
    out.rows_from.push_back(static_cast<uint32_t>(from));
    const kernels::KvLayerView view = kv.Layer(layer);
    for (const void* plane : {view.k, view.v}) {
      if (plane == nullptr) continue;  // a latent cache: no V plane
      const auto* base = static_cast<const uint8_t*>(plane);
      for (int64_t p = from; p < n; ++p) {
        const int32_t row = swa ? SwaRow(pool, slots[p]) : slots[p];
        const uint8_t* src = base + static_cast<size_t>(row) * row_bytes;
        out.kv.insert(out.kv.end(), src, src + row_bytes);
      }
    }
  }
  return out;
}

int64_t PrefixKvSwaValidFrom(const model::KvCache& kv, const PrefixKv& prefix) {
  int64_t from = 0;
  for (int64_t layer = 0;
       layer < kv.n_layers() && layer < static_cast<int64_t>(prefix.rows_from.size()); ++layer) {
    if (kv.IsSwaLayer(layer) && kv.HasOwnKv(layer)) {
      from = std::max<int64_t>(from, prefix.rows_from[layer]);
    }
  }
  return from;
}

Status WritePrefixKv(model::KvCache& kv, const KvPool& pool, const PrefixKv& prefix,
                     std::span<const int32_t> slots) {
  const auto n = static_cast<int64_t>(slots.size());
  const auto total = static_cast<int64_t>(prefix.tokens.size());
  if (static_cast<int64_t>(prefix.rows_from.size()) != kv.n_layers() ||
      prefix.row_elems != kv.row_elems() || prefix.dtype != static_cast<int32_t>(kv.dtype())) {
    return InvalidArgument("the transferred KV has " + std::to_string(prefix.rows_from.size()) +
                           " layers of " + std::to_string(prefix.row_elems) + " values (dtype " +
                           std::to_string(prefix.dtype) + "); this model's has " +
                           std::to_string(kv.n_layers()) + " of " + std::to_string(kv.row_elems()) +
                           " (dtype " + std::to_string(static_cast<int32_t>(kv.dtype())) +
                           "): the prefill and decode servers must serve the same model with the "
                           "same --kv-cache-dtype");
  }
  if (n > total) return InvalidArgument("the transferred KV covers fewer positions than asked");
  // Only a sliding-window layer may start late (its rows before the window are not needed); a
  // full-attention layer must hold every position, or slots would enter the tree unwritten.
  for (int64_t layer = 0; layer < kv.n_layers(); ++layer) {
    if (!kv.HasOwnKv(layer)) {
      if (prefix.rows_from[layer] < total) {
        return InvalidArgument("the transferred KV has rows for layer " + std::to_string(layer) +
                               ", which reads another layer's");
      }
      continue;
    }
    if (!kv.IsSwaLayer(layer) && prefix.rows_from[layer] != 0) {
      return InvalidArgument("the transferred KV of full-attention layer " +
                             std::to_string(layer) + " starts at position " +
                             std::to_string(prefix.rows_from[layer]) + ", not 0");
    }
  }
  uint64_t expected = 0;
  for (int64_t layer = 0; layer < kv.n_layers(); ++layer) {
    const int64_t from = prefix.rows_from[layer];
    if (from < total) {
      expected += static_cast<uint64_t>(total - from) * kv.planes() * kv.row_bytes(layer);
    }
  }
  if (expected != prefix.kv.size()) {
    return InvalidArgument("the transferred KV holds " + std::to_string(prefix.kv.size()) +
                           " bytes; its layout needs " + std::to_string(expected));
  }
  const uint8_t* src = prefix.kv.data();
  for (int64_t layer = 0; layer < kv.n_layers(); ++layer) {
    const bool swa = kv.IsSwaLayer(layer);
    const int64_t from = prefix.rows_from[layer];
    if (from >= total) continue;  // no rows (a layer reading another's K/V)
    const size_t row_bytes = kv.row_bytes(layer);
    const kernels::KvLayerView view = kv.Layer(layer);
    for (void* plane : {view.k, view.v}) {
      if (plane == nullptr) continue;  // a latent cache: no V plane
      auto* base = static_cast<uint8_t*>(plane);
      for (int64_t p = from; p < total; ++p, src += row_bytes) {
        if (p >= n) continue;  // past the slots asked for (an unaligned tail)
        const int32_t row = swa ? SwaRow(pool, slots[p]) : slots[p];
        if (swa && row == KvPool::kPaddingSlot) continue;
        std::memcpy(base + static_cast<size_t>(row) * row_bytes, src, row_bytes);
      }
    }
  }
  return Status::Ok();
}

}  // namespace radixlm
