// EngineCore: prefill/decode disaggregation on the scheduler thread — a prefill request's
// prompt KV exported when it finishes, a decode request's prefix KV imported before it runs
// (api.h: GenerateRequest::export_kv_room / import_kv; docs/disaggregation.md).
#include <algorithm>
#include <chrono>

#include "engine/engine_core.h"
#include "engine/prefix_kv.h"

namespace radixlm {

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
  // The request's KV went to the tree in this very step: nothing can have evicted it. A hybrid
  // model's prefix ends at the snapshot the request took where its last prompt position starts
  // (RequestInput::snapshot_resume_point), unless the tree had to evict it: then at the deepest
  // one left.
  const std::vector<int32_t>& ids = *route.export_ids;
  // Under a LoRA adapter it is in the adapter's namespace, and the record names the adapter.
  const Scheduler::CachedPrefix cached = scheduler_->ExportablePrefix(ids, route.export_namespace);
  PrefixKv kv = ReadPrefixKv(*storage, scheduler_->pool(), ids, cached.slots);
  if (Status read = ReadPrefixState(*storage, cached.state_slot, &kv); !read.ok()) {
    kv_export_sink_(room, read);
    return;
  }
  kv.lora_identity = route.export_lora_identity;
  kv.lora_name = route.export_lora_name;
  kv_export_sink_(room, std::move(kv));
}

namespace {

std::string AdapterDescription(const std::string& name) {
  return name.empty() ? "the base model (no LoRA adapter)" : "LoRA adapter '" + name + "'";
}

// KV computed under one adapter must never serve another (or the base model): the record's
// adapter must be the request's, by content (the names may differ between the servers).
Status CheckImportedAdapter(const PrefixKv& kv, const RequestInput& in,
                            const std::string& lora_name) {
  if (kv.lora_identity == in.lora_identity) return Status::Ok();
  return InvalidArgument(
      "the prefill server computed this prompt's KV under " + AdapterDescription(kv.lora_name) +
      " but this request runs under " + AdapterDescription(lora_name) +
      (kv.lora_identity != 0 && in.lora_identity != 0 ? " (a different adapter file)" : "") +
      ": send both servers the same lora_path, with the same adapter loaded under it");
}

}  // namespace

Status EngineCore::ImportPrefixKv(SubmitCommand& cmd, const PrefixKv& kv) {
  model::KvCache* storage = runner_->kv_cache();
  if (storage == nullptr) return Unimplemented("this engine's model runner exposes no KV storage");
  RADIXLM_RETURN_IF_ERROR(CheckPrefixState(*storage, kv));
  const RequestInput& in = cmd.inputs.front();
  const std::vector<int32_t>& ids = in.input_ids;
  size_t shared = 0;
  const size_t limit = std::min(ids.size(), kv.tokens.size());
  while (shared < limit && ids[shared] == kv.tokens[shared]) ++shared;
  // A hybrid model's state is after all of the record's tokens: of a shorter shared prefix the
  // request can use nothing.
  if (storage->recurrent() != nullptr && shared < kv.tokens.size()) shared = 0;
  const uint64_t pin = next_pin_++;
  Scheduler::StateWriter write_state;
  if (storage->recurrent() != nullptr) {
    write_state = [&](int32_t state_slot) { return WritePrefixState(*storage, kv, state_slot); };
  }
  StatusOr<int64_t> pinned = scheduler_->ImportPrefix(
      pin, std::span<const int32_t>(ids).first(shared), in.lora_namespace,
      PrefixKvSwaValidFrom(*storage, kv),
      [&](std::span<const int32_t> slots) {
        return WritePrefixKv(*storage, scheduler_->pool(), kv, slots);
      },
      write_state);
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
    // A record of another adapter is the client's error (400); failures to get or store the
    // KV are the service's (503).
    int http = 503;
    Status status = kv.status();
    if (kv.ok()) {
      status = CheckImportedAdapter(*kv, cmd.inputs.front(), cmd.lora_name);
      if (!status.ok()) {
        http = 400;
      } else {
        status = ImportPrefixKv(cmd, *kv);
      }
    }
    cmd.import_kv = {};
    if (!status.ok()) {
      EndUnsubmitted(cmd, FinishReason::Abort(status.message(), http));
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
