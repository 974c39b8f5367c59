// The engine's PrefixKv (engine/api.h) and the wire record (kv_transfer_record.h) as the two
// ends of prefill/decode disaggregation convert them (pd_transfer.h), and the record size a
// decode server accepts. Built with or without UCX.
#pragma once

#include <cstdint>

#include "disagg/kv_transfer_record.h"
#include "engine/api.h"
#include "util/status.h"

namespace radixlm::disagg {

PrefixKv PrefixKvFromRecord(KvTransferRecord&& record);

// The longest record a decode server accepts: `max_tokens` prompt positions (its context length)
// of KV at `kv_token_bytes` per position (every layer's K and V rows), their token ids, a
// hybrid model's linear-layer state (`state_bytes`, one state slot; 0 for other models), and
// kRecordSlackBytes for the fixed header, the per-layer fields and an error message. A record
// of the same model's prompt never exceeds it (sliding-window layers only send fewer rows).
inline constexpr uint64_t kRecordSlackBytes = uint64_t{1} << 20;
uint64_t MaxKvRecordBytes(int64_t max_tokens, int64_t kv_token_bytes, int64_t state_bytes = 0);
KvTransferRecord RecordFromPrefixKv(uint64_t room, StatusOr<PrefixKv>&& kv);

}  // namespace radixlm::disagg
