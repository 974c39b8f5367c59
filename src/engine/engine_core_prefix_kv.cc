// EngineCore: prefill/decode disaggregation on the scheduler thread — a prefill request's
// prompt KV exported when it finishes, a decode request's prefix KV imported before it runs
// (api.h: GenerateRequest::export_kv_room / import_kv; docs/disaggregation.md).
#include <algorithm>
#include <chrono>

#include "engine/engine_core.h"
#include "engine/prefix_kv.h"

namespace radixlm {

// A hybrid model's linear layers keep a per-request state that the KV records do not carry.
constexpr char kHybridTransfer[] =
    "prefill/decode KV transfer is not supported for hybrid (linear-attention) models: their "
    "per-request state is not part of the KV records";

void EngineCore::ExportPrefixKv(const Route& route, bool aborted) {
  if (!kv_export_sink_) return;
  const uint64_t room = *route.export_room;
  if (aborted) {
    kv_export_sink_(room, Aborted("the prefill request for bootstrap_room " + std::to_string(room) +
                                  " was aborted"));
    return;
  }
  model::KvCache* storage = runner_->kv_cache();
  if (storage == nullptr) {
    kv_export_sink_(room, Unimplemented("this engine's model runner exposes no KV storage"));
    return;
  }
  if (storage->recurrent() != nullptr) {
    kv_export_sink_(room, Unimplemented(kHybridTransfer));
    return;
  }
  // The request's KV went to the tree in this very step: nothing can have evicted it.
  const std::vector<int32_t>& ids = *route.export_ids;
  const std::vector<int32_t> slots = scheduler_->CachedPrefixSlots(ids);
  kv_export_sink_(room, ReadPrefixKv(*storage, scheduler_->pool(), ids, slots));
}

Status EngineCore::ImportPrefixKv(SubmitCommand& cmd, const PrefixKv& kv) {
  model::KvCache* storage = runner_->kv_cache();
  if (storage == nullptr) return Unimplemented("this engine's model runner exposes no KV storage");
  if (storage->recurrent() != nullptr) return Unimplemented(kHybridTransfer);
  const std::vector<int32_t>& ids = cmd.inputs.front().input_ids;
  size_t shared = 0;
  const size_t limit = std::min(ids.size(), kv.tokens.size());
  while (shared < limit && ids[shared] == kv.tokens[shared]) ++shared;
  const uint64_t pin = next_pin_++;
  StatusOr<int64_t> pinned = scheduler_->ImportPrefix(
      pin, std::span<const int32_t>(ids).first(shared), PrefixKvSwaValidFrom(*storage, kv),
      [&](std::span<const int32_t> slots) {
        return WritePrefixKv(*storage, scheduler_->pool(), kv, slots);
      });
  if (!pinned.ok()) return pinned.status();
  cmd.import_pin = pin;
  return Status::Ok();
}

void EngineCore::PollKvImports() {
  for (size_t i = 0; i < awaiting_kv_.size();) {
    if (awaiting_kv_[i].import_kv.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++i;
      continue;
    }
    SubmitCommand cmd = std::move(awaiting_kv_[i]);
    awaiting_kv_.erase(awaiting_kv_.begin() + static_cast<std::ptrdiff_t>(i));
    const StatusOr<PrefixKv>& kv = cmd.import_kv.get();
    Status status = kv.ok() ? ImportPrefixKv(cmd, *kv) : kv.status();
    cmd.import_kv = {};
    if (!status.ok()) {
      EndUnsubmitted(cmd, FinishReason::Abort(status.message(), 503));
      continue;
    }
    Apply(cmd);  // routes again (now with the pin), then the scheduler
  }
}

bool EngineCore::AbortAwaitingKv(const std::string& rid, const std::string& message) {
  for (size_t i = 0; i < awaiting_kv_.size(); ++i) {
    if (awaiting_kv_[i].stream->rid() != rid) continue;
    SubmitCommand cmd = std::move(awaiting_kv_[i]);
    awaiting_kv_.erase(awaiting_kv_.begin() + static_cast<std::ptrdiff_t>(i));
    EndUnsubmitted(cmd, FinishReason::Abort(message));
    return true;
  }
  return false;
}

void EngineCore::EndUnsubmitted(SubmitCommand& cmd, FinishReason reason) {
  for (const RequestInput& in : cmd.inputs) {
    RequestOutput out;
    out.id = in.id;
    out.chunk.finish_reason = reason;
    OnOutput(std::move(out));
  }
}

}  // namespace radixlm
