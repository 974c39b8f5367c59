#include "engine/prefix_kv.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace radixlm {
namespace {

int32_t SwaRow(const KvPool& pool, int32_t slot) {
  return pool.swa_slot_map()[static_cast<size_t>(slot)];
}

// Whether `layer` keeps K/V rows of its own: not one reading another layer's, nor a hybrid
// model's linear layer (a state instead, of zero-width rows).
bool HasRows(const model::KvCache& kv, int64_t layer) {
  return kv.HasOwnKv(layer) && kv.row_elems(layer) > 0;
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
    // A layer reading another's K/V, or a linear layer, carries none (its rows start past the
    // end).
    const int64_t from = !HasRows(kv, layer) ? n : swa ? swa_from : 0;
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

namespace {

std::string StateShape(uint64_t layers, uint64_t conv, uint64_t delta) {
  if (layers == 0) return "no linear-attention layers";
  return std::to_string(layers) + " linear-attention layers of " + std::to_string(conv) +
         " conv and " + std::to_string(delta) + " state values";
}

}  // namespace

Status ReadPrefixState(model::KvCache& kv, int32_t state_slot, PrefixKv* prefix) {
  model::RecurrentState* state = kv.recurrent();
  if (state == nullptr) return Status::Ok();
  prefix->state_layers = static_cast<uint32_t>(state->linear_layers());
  prefix->state_conv_floats = static_cast<uint64_t>(state->conv_floats());
  prefix->state_delta_floats = static_cast<uint64_t>(state->delta_floats());
  prefix->state.clear();
  if (prefix->tokens.empty()) return Status::Ok();
  prefix->state.resize(static_cast<size_t>(state->slot_bytes()));
  return state->ReadSlot(state_slot, prefix->state);
}

Status CheckPrefixState(model::KvCache& kv, const PrefixKv& prefix) {
  const model::RecurrentState* state = kv.recurrent();
  const uint64_t layers = state != nullptr ? static_cast<uint64_t>(state->linear_layers()) : 0;
  const uint64_t conv = state != nullptr ? static_cast<uint64_t>(state->conv_floats()) : 0;
  const uint64_t delta = state != nullptr ? static_cast<uint64_t>(state->delta_floats()) : 0;
  if (prefix.state_layers != layers ||
      (layers > 0 && (prefix.state_conv_floats != conv || prefix.state_delta_floats != delta))) {
    return InvalidArgument(
        "the transferred prefix has " +
        StateShape(prefix.state_layers, prefix.state_conv_floats, prefix.state_delta_floats) +
        "; this model has " + StateShape(layers, conv, delta) +
        ": the prefill and decode servers must serve the same model");
  }
  const uint64_t bytes = layers * (conv + delta) * sizeof(float);
  if (prefix.state.size() != (prefix.tokens.empty() ? 0 : bytes)) {
    return InvalidArgument("the transferred linear-layer state holds " +
                           std::to_string(prefix.state.size()) + " bytes; " +
                           std::to_string(prefix.tokens.size()) + " tokens of this model need " +
                           std::to_string(prefix.tokens.empty() ? 0 : bytes));
  }
  return Status::Ok();
}

Status WritePrefixState(model::KvCache& kv, const PrefixKv& prefix, int32_t state_slot) {
  RADIXLM_RETURN_IF_ERROR(CheckPrefixState(kv, prefix));
  if (kv.recurrent() == nullptr || prefix.state.empty()) {
    return InvalidArgument("the transferred prefix carries no linear-layer state to write");
  }
  return kv.recurrent()->WriteSlot(state_slot, prefix.state);
}

int64_t PrefixKvSwaValidFrom(const model::KvCache& kv, const PrefixKv& prefix) {
  int64_t from = 0;
  for (int64_t layer = 0;
       layer < kv.n_layers() && layer < static_cast<int64_t>(prefix.rows_from.size()); ++layer) {
    if (kv.IsSwaLayer(layer) && HasRows(kv, layer)) {
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
    if (!HasRows(kv, layer)) {
      if (prefix.rows_from[layer] < total) {
        return InvalidArgument("the transferred KV has rows for layer " + std::to_string(layer) +
                               ", which keeps none of its own");
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
