// KvTransferRecord: what a prefill server hands the decode server for one bootstrap room — the
// prompt's tokens and the prompt's KV rows of every layer — and its wire form (a flat
// little-endian byte string; the transport moves it as one opaque message). A record may
// instead carry an error: the prefill side could not produce the KV (its request failed or was
// aborted), and the decode side ends its request with that message.
//
// KV layout in `kv`: for each layer l in order, its K rows then its V rows for prompt positions
// [rows_from[l], prompt_ids.size()), each row the layer's width in values of `dtype`
// (KvValueBytes each; row_elems is the widest layer's). Full-attention layers send every
// position (rows_from = 0); sliding-window layers may start later (only the window the decode
// side still attends to). A latent cache (deepseek2) has no V rows.
//
// A hybrid model's record (version 3) also carries its linear layers' state after the record's
// tokens (api.h PrefixKv: state_layers layers of state_conv_floats + state_delta_floats f32
// values each; none for an empty prefix); state_layers is 0 for other models and in the records
// of versions 1 and 2.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::disagg {

struct KvTransferRecord {
  uint64_t room = 0;
  std::string error;  // non-empty: no KV follows; the prefill side's reason
  std::vector<int32_t> prompt_ids;
  uint32_t row_elems = 0;           // n_kv_heads * head_dim
  uint32_t dtype = 0;               // kernels::KvDtype as an integer (both sides must agree)
  std::vector<uint32_t> rows_from;  // [n_layers]
  std::vector<uint8_t> kv;
  // The LoRA adapter the KV was computed under (api.h PrefixKv): its content identity (0: the
  // base model) and its name on the prefill server. Version 1 records have neither (base).
  uint64_t lora_identity = 0;
  std::string lora_name;
  uint32_t state_layers = 0;
  uint64_t state_conv_floats = 0;
  uint64_t state_delta_floats = 0;
  std::vector<uint8_t> state;

  // The most bytes `kv` can hold for the fields above: two planes (K and V) of row_elems values
  // per row. A latent cache has one plane, and layers may be narrower than row_elems (the
  // widest layer's); the importing engine checks the exact size against its model's layout
  // (engine/prefix_kv.h WritePrefixKv).
  uint64_t MaxKvBytes() const;
  // Bytes `state` must hold: state_layers * (conv + delta) * 4, or 0 for an empty prefix.
  uint64_t ExpectedStateBytes() const;
};

// Bytes of one value of a KV dtype (kernels::KvDtype as an integer: 0 f16, 1 bf16 -> 2;
// 2 fp8_e5m2 -> 1); 0 for a dtype this build does not know.
uint64_t KvValueBytes(uint32_t dtype);

std::vector<uint8_t> SerializeKvTransferRecord(const KvTransferRecord& record);

// InvalidArgument naming the problem for bytes that are not a well-formed record (a wrong
// magic or version, a truncated or oversized field, kv larger than its layout allows, state of the
// wrong size).
StatusOr<KvTransferRecord> ParseKvTransferRecord(std::span<const uint8_t> bytes);

}  // namespace radixlm::disagg
