#include "scheduler/scheduler_config.h"

#include <string>

namespace radixlm {

StatusOr<SchedulePolicyKind> ParseSchedulePolicy(std::string_view name) {
  if (name == "fcfs") return SchedulePolicyKind::kFcfs;
  if (name == "lpm") return SchedulePolicyKind::kLpm;
  if (name == "dfs-weight") return SchedulePolicyKind::kDfsWeight;
  if (name == "lof") return SchedulePolicyKind::kLof;
  if (name == "random") return SchedulePolicyKind::kRandom;
  if (name == "priority") return SchedulePolicyKind::kPriority;
  return InvalidArgument("unknown schedule policy \"" + std::string(name) +
                         "\"; expected one of fcfs, lpm, dfs-weight, lof, random, priority");
}

const char* SchedulePolicyName(SchedulePolicyKind kind) {
  switch (kind) {
    case SchedulePolicyKind::kFcfs:
      return "fcfs";
    case SchedulePolicyKind::kLpm:
      return "lpm";
    case SchedulePolicyKind::kDfsWeight:
      return "dfs-weight";
    case SchedulePolicyKind::kLof:
      return "lof";
    case SchedulePolicyKind::kRandom:
      return "random";
    case SchedulePolicyKind::kPriority:
      return "priority";
  }
  return "?";
}

Status SchedulerConfig::Validate() const {
  auto bad = [](const std::string& field, const std::string& rule, auto value) {
    return InvalidArgument(field + " must be " + rule + ", got " + std::to_string(value));
  };
  if (page_size < 1) return bad("page_size", "at least 1", page_size);
  if (max_total_tokens < 2 * static_cast<int64_t>(page_size)) {
    return bad("max_total_tokens", "at least two pages", max_total_tokens);
  }
  if (max_prefill_tokens < 1) return bad("max_prefill_tokens", "at least 1", max_prefill_tokens);
  if (swa_max_total_tokens < 0)
    return bad("swa_max_total_tokens", "at least 0", swa_max_total_tokens);
  if (swa_max_total_tokens > 0) {
    if (sliding_window < 1)
      return bad("sliding_window", "at least 1 with an SWA pool", sliding_window);
    // One request must fit: its locked window, a decode page and a prefill page, twice over.
    const int64_t least = 2 * (sliding_window + 2 * static_cast<int64_t>(page_size));
    if (swa_max_total_tokens < least && swa_max_total_tokens < max_total_tokens) {
      return InvalidArgument("the sliding-window KV pool holds " +
                             std::to_string(swa_max_total_tokens) + " tokens; it needs at least " +
                             std::to_string(least) +
                             " (twice the window plus two pages) unless it matches the full "
                             "pool: raise --swa-full-tokens-ratio or the KV memory");
    }
  }
  if (max_running_requests < 1) {
    return bad("max_running_requests", "at least 1", max_running_requests);
  }
  if (state_snapshot_slots < 0)
    return bad("state_snapshot_slots", "at least 0", state_snapshot_slots);
  if (state_snapshot_slots > 0 &&
      (hybrid_snapshot_interval < 1 || hybrid_snapshot_interval % page_size != 0)) {
    return bad("hybrid_snapshot_interval", "a positive multiple of page_size",
               hybrid_snapshot_interval);
  }
  if (chunked_prefill_size > 0 && chunked_prefill_size < page_size) {
    return bad("chunked_prefill_size", "-1 or at least page_size", chunked_prefill_size);
  }
  if (!(defer_long_prefill_s >= 0)) {
    return bad("defer_long_prefill_s", "at least 0 seconds", defer_long_prefill_s);
  }
  if (!(init_new_token_ratio > 0 && init_new_token_ratio <= 1)) {
    return bad("init_new_token_ratio", "in (0, 1]", init_new_token_ratio);
  }
  if (!(min_new_token_ratio_factor > 0 && min_new_token_ratio_factor <= 1)) {
    return bad("min_new_token_ratio_factor", "in (0, 1]", min_new_token_ratio_factor);
  }
  if (new_token_ratio_decay_steps < 1) {
    return bad("new_token_ratio_decay_steps", "at least 1", new_token_ratio_decay_steps);
  }
  if (clip_max_new_tokens < 1) return bad("clip_max_new_tokens", "at least 1", clip_max_new_tokens);
  if (retract_decode_steps < 1) {
    return bad("retract_decode_steps", "at least 1", retract_decode_steps);
  }
  if (!(waiting_timeout_s >= 0)) return bad("waiting_timeout_s", "at least 0", waiting_timeout_s);
  if (!(running_timeout_s >= 0)) return bad("running_timeout_s", "at least 0", running_timeout_s);
  if (lpm_rematch_max_requests < 1) {
    return bad("lpm_rematch_max_requests", "at least 1", lpm_rematch_max_requests);
  }
  if (max_logprob_rows_per_batch < 1) {
    return bad("max_logprob_rows_per_batch", "at least 1", max_logprob_rows_per_batch);
  }
  if (speculative_ngram && speculative_draft_model) {
    return InvalidArgument("speculative decoding takes one draft source: NGRAM or a draft model");
  }
  if (speculative_nextn && (!speculative_draft_model || speculative_eagle_topk != 1)) {
    return InvalidArgument(
        "NEXTN speculation drafts chains with the NextN layer as the draft "
        "model (speculative_draft_model, speculative_eagle_topk 1)");
  }
  if (speculative_draft_model &&
      (speculative_num_steps < 1 || speculative_num_steps >= spec::DraftTree::kMaxNodes)) {
    return InvalidArgument("--speculative-num-steps must be in [1, " +
                           std::to_string(spec::DraftTree::kMaxNodes - 1) + "], got " +
                           std::to_string(speculative_num_steps));
  }
  if (speculative_draft_model && (speculative_eagle_topk < 1 || speculative_eagle_topk > 16)) {
    return InvalidArgument("--speculative-eagle-topk must be in [1, 16], got " +
                           std::to_string(speculative_eagle_topk));
  }
  if (speculative_draft_model && speculative_eagle_topk > 1 &&
      (speculative_num_draft_tokens < 2 ||
       speculative_num_draft_tokens > spec::DraftTree::kMaxNodes)) {
    return InvalidArgument("--speculative-num-draft-tokens must be in [2, " +
                           std::to_string(spec::DraftTree::kMaxNodes) +
                           "] with --speculative-eagle-topk > 1, got " +
                           std::to_string(speculative_num_draft_tokens));
  }
  if (speculative_ngram || speculative_draft_model) {
    if (speculative_ngram) {
      RADIXLM_RETURN_IF_ERROR(ngram.Validate());
      if (speculative_ngram_fill_queue_tokens < 1) {
        return bad("speculative_ngram_fill_queue_tokens", "at least 1",
                   speculative_ngram_fill_queue_tokens);
      }
    }
    // Accepted draft nodes keep the slots they were computed in, reordered in the request's
    // row: each slot must be its own page.
    if (page_size != 1) {
      return InvalidArgument("speculative decoding needs --page-size 1, got " +
                             std::to_string(page_size));
    }
    if (speculative_max_draft_tokens_per_batch < 1) {
      return bad("speculative_max_draft_tokens_per_batch", "at least 1",
                 speculative_max_draft_tokens_per_batch);
    }
  }
  if (hicache.enable) {
    if (hicache.dir.empty()) {
      return InvalidArgument("--enable-hierarchical-cache needs --hicache-storage-dir");
    }
    if (hicache.capacity_bytes == 0) {
      return InvalidArgument("--hicache-storage-size must be more than 0 GB");
    }
    if (hicache.block_tokens < 1 || hicache.block_tokens % page_size != 0) {
      return bad("hicache block tokens", "a positive multiple of page_size", hicache.block_tokens);
    }
  }
  return Status::Ok();
}

}  // namespace radixlm
