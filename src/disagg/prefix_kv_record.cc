#include "disagg/prefix_kv_record.h"

#include <algorithm>
#include <utility>

namespace radixlm::disagg {

namespace {

// PrefixKv and KvTransferRecord carry the same KV fields (the tokens apart: tokens /
// prompt_ids); moves them from one to the other.
template <typename From, typename To>
void MoveKvFields(From& from, To* to) {
  to->row_elems = static_cast<decltype(to->row_elems)>(from.row_elems);
  to->dtype = static_cast<decltype(to->dtype)>(from.dtype);
  to->rows_from = std::move(from.rows_from);
  to->kv = std::move(from.kv);
  to->lora_identity = from.lora_identity;
  to->lora_name = std::move(from.lora_name);
  to->state_layers = from.state_layers;
  to->state_conv_floats = from.state_conv_floats;
  to->state_delta_floats = from.state_delta_floats;
  to->state = std::move(from.state);
}

}  // namespace

PrefixKv PrefixKvFromRecord(KvTransferRecord&& record) {
  PrefixKv kv;
  kv.tokens = std::move(record.prompt_ids);
  MoveKvFields(record, &kv);
  return kv;
}

uint64_t MaxKvRecordBytes(int64_t max_tokens, int64_t kv_token_bytes, int64_t state_bytes) {
  const auto tokens = static_cast<uint64_t>(std::max<int64_t>(max_tokens, 0));
  const auto per_token = static_cast<uint64_t>(std::max<int64_t>(kv_token_bytes, 0));
  const auto state = static_cast<uint64_t>(std::max<int64_t>(state_bytes, 0));
  return tokens * (per_token + sizeof(int32_t)) + state + kRecordSlackBytes;
}

KvTransferRecord RecordFromPrefixKv(uint64_t room, StatusOr<PrefixKv>&& kv) {
  KvTransferRecord record;
  record.room = room;
  if (!kv.ok()) {
    record.error = kv.status().message();
    return record;
  }
  record.prompt_ids = std::move(kv->tokens);
  MoveKvFields(*kv, &record);
  return record;
}

}  // namespace radixlm::disagg
