// Scheduler: KV memory for the decode step — eviction, retraction, slot allocation.
#include <algorithm>

#include "scheduler/retraction.h"
#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {

void Scheduler::EvictTokens(int64_t tokens) {
  if (tokens <= 0) return;
  const CacheOpTimer timer(stats_);
  if (cache_->Evict(tokens, pool_) > 0) ++tree_version_;
}

bool Scheduler::EnsureFreePages(int64_t pages) {
  // Unpinned leaves go first; session pins (reclaimable) only when that is not enough, one at a
  // time, oldest first (scheduler_pins.cc).
  do {
    const int64_t missing = pages - pool_.available_pages();
    if (missing > 0) EvictTokens(missing * pool_.page_size());
    if (pool_.has_swa()) {
      const int64_t swa_missing = pages - pool_.swa_available_pages();
      if (swa_missing > 0) {
        const CacheOpTimer timer(stats_);
        if (cache_->EvictSwa(swa_missing * pool_.page_size(), pool_) > 0) ++tree_version_;
      }
    }
    if (pool_.available_pages() >= pages &&
        (!pool_.has_swa() || pool_.swa_available_pages() >= pages)) {
      return true;
    }
  } while (ReclaimOldestPin(nullptr, nullptr));
  return false;
}

int64_t Scheduler::SwaAvailableTokens() const {
  if (!pool_.has_swa()) return INT64_MAX;
  return pool_.swa_available() + cache_->swa_evictable_size();
}

void Scheduler::ReleaseOutOfWindowKv() {
  if (!pool_.has_swa()) return;
  const int64_t page = pool_.page_size();
  for (Request* req : running_) {
    CacheRequest& c = req->cache;
    // The next query (position kv_len) sees keys from kv_len - window + 1 on; a page of margin
    // as SGLang. Tokens of the tree-owned prefix are the tree's to release.
    const int64_t until = (req->kv_len - config_.sliding_window - page) / page * page;
    const int64_t from =
        std::max<int64_t>(c.swa_evicted_len, static_cast<int64_t>(c.prefix_slots.size()));
    if (until <= from) continue;
    if (disk_ != nullptr) WriteBeforeWindowRelease(req, until);
    pool_.FreeSwa(table_.Row(c.req_pool_index).subspan(from, until - from));
    c.swa_evicted_len = until;
  }
}

bool Scheduler::AllocateExtend(Request* req, int64_t n) {
  const int32_t last = LastSlot(*req);
  if (!EnsureFreePages(pool_.PagesNeededForExtend(last, n))) return false;
  std::optional<std::vector<int32_t>> slots = pool_.AllocateExtend(last, n);
  if (!slots.has_value()) return false;
  table_.Write(req->cache.req_pool_index, req->kv_len, *slots);
  return true;
}

int64_t Scheduler::DecodePagesNeeded() const {
  int64_t pages = 0;
  for (const Request* req : running_) pages += pool_.PagesNeededForExtend(LastSlot(*req), 1);
  return pages;
}

void Scheduler::Retract(Request* req) {
  RADIXLM_CHECK(req->state == RequestState::kDecoding || req->state == RequestState::kPrefilling);
  RemoveFromQueues(req);
  ReleaseKv(req);
  req->state = RequestState::kWaiting;
  req->match_len = -1;
  req->match_node = nullptr;
  ++req->retractions;
  ++stats_.retractions;
  if (!req->input_logprobs_done) req->input_logprobs.clear();  // recomputed on resume
  waiting_.push_back(req);
}

void Scheduler::PrepareDecodes() {
  if (running_.empty()) return;
  ReleaseOutOfWindowKv();
  if (!EnsureFreePages(DecodePagesNeeded())) {
    // Retract (SGLang's retract_decode) until the rest have room for a few steps each.
    const std::vector<Request*> order = RetractionOrder(running_);
    const int32_t page = pool_.page_size();
    for (Request* victim : order) {
      const auto remaining = static_cast<int64_t>(running_.size());
      const int64_t have =
          std::min(pool_.available() + cache_->evictable_size(), SwaAvailableTokens());
      if (remaining <= 1 ||
          have >= RetractionTarget(remaining, config_.retract_decode_steps, page)) {
        break;
      }
      Retract(victim);
    }
    new_token_ratio_ = NewTokenRatioAfterRetraction(running_, config_.retract_decode_steps);
    // A chunked prefill holds KV too; it yields before a decode is given up.
    if (!EnsureFreePages(DecodePagesNeeded()) && chunked_ != nullptr) Retract(chunked_);
    // The last resort: a lone request the pool cannot hold even with everything else gone.
    while (!running_.empty() && !EnsureFreePages(DecodePagesNeeded())) {
      Request* victim = RetractionOrder(running_).back();
      FinishRequest(victim,
                    FinishReason::Abort("The KV cache pool (" + std::to_string(pool_.size()) +
                                        " tokens) is exhausted; the request cannot continue."));
    }
  }
  for (Request* req : running_) {
    const bool extended = AllocateExtend(req, 1);
    RADIXLM_CHECK(extended) << "decode pages were ensured above";
  }
  decodes_.assign(running_.begin(), running_.end());
}

}  // namespace radixlm
