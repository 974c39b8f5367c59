// Scheduler: admission of prefill work — prefix matching (incremental for LPM), policy order,
// in-batch prefix dedup, the PrefillAdder budgets, locking and slot allocation.
#include <algorithm>
#include <optional>
#include <vector>

#include "scheduler/prefill_adder.h"
#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {
namespace {

// In-batch prefix dedup. SGLang holds back a waiting request whose cache match is short but
// whose first n tokens equal those of a request admitted this round, so the tree fills first.
// radixlm applies the same test past the cached prefix: a request whose next n uncached tokens
// (and everything before them) equal a request admitted this round waits a round, whatever its
// match. Nested sharing (instruction, then documents, then questions) is then computed once per
// level instead of once per request at the second level.
class InBatchSharing {
 public:
  explicit InBatchSharing(int64_t n) : n_(n) {}
  bool enabled() const { return n_ > 0; }
  void Add(const Request& req) {
    if (enabled()) admitted_.push_back(&req);
  }
  // Whether a request admitted this round has the same first match_len + n tokens as req.
  bool SharesBeyondMatch(const Request& req, int64_t match_len) const {
    const int64_t need = match_len + n_;
    const auto& mine = req.token_ids;
    if (!enabled() || static_cast<int64_t>(mine.size()) < need) return false;
    // Most recent first, a bounded number: a pass stays cheap however many were admitted.
    int compared = 0;
    for (auto it = admitted_.rbegin(); it != admitted_.rend() && compared < kMaxCompared;
         ++it, ++compared) {
      const auto& other = (*it)->token_ids;
      if (static_cast<int64_t>(other.size()) < need) continue;
      // The uncached window first: it rejects almost every non-sibling at once.
      if (std::equal(other.begin() + match_len, other.begin() + need, mine.begin() + match_len) &&
          std::equal(other.begin(), other.begin() + match_len, mine.begin())) {
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr int kMaxCompared = 64;
  int64_t n_;
  std::vector<const Request*> admitted_;
};

// Whether the adder refused (or would cut to nothing) candidate c for want of KV memory, so
// that releasing session pins may let it in.
bool RefusedForMemory(const PrefillAdder& adder, const PrefillCandidate& c, int32_t clip,
                      int32_t page) {
  const int64_t reserve = std::min<int64_t>(c.max_new_tokens, clip);
  if (!c.force && static_cast<double>(c.extend_len + reserve) > adder.rem_total_tokens()) {
    return true;
  }
  return adder.cur_rem_tokens() < page;
}

}  // namespace

bool Scheduler::IsHeldForSibling(const Request& req) const {
  if (!req.in.prefill_after.has_value() || cache_->disabled()) return false;
  auto it = requests_.find(*req.in.prefill_after);
  return it != requests_.end() && !it->second->prompt_prefilled;
}

void Scheduler::MatchWaiting(Request* req) {
  const CacheOpTimer timer(stats_);
  RadixCache::MatchResult m =
      cache_->MatchPrefix(std::span<const int32_t>(req->token_ids).first(req->MaxPrefixLen()),
                          req->cache.key_namespace);
  req->match_len = static_cast<int64_t>(m.slots.size());
  req->match_version = tree_version_;
  req->match_node = m.last_node;
}

// LPM: only requests whose cached match is stale (the tree changed since) are re-matched, at
// most lpm_rematch_max_requests / _max_tokens per pass: never-matched first, then the longest
// stale. Cost per pass is bounded however many wait; a stale length only affects the order
// (admission always matches afresh). dfs-weight needs fresh nodes: it matches everyone.
void Scheduler::RefreshPrefixMatches() {
  if (cache_->disabled()) return;
  if (config_.schedule_policy == SchedulePolicyKind::kDfsWeight) {
    for (Request* req : waiting_) MatchWaiting(req);
    return;
  }
  if (config_.schedule_policy != SchedulePolicyKind::kLpm) return;
  std::vector<Request*>& stale = order_scratch_;
  stale.clear();
  for (Request* req : waiting_) {
    if (req->match_len < 0 || req->match_version != tree_version_) stale.push_back(req);
  }
  const auto budget = static_cast<size_t>(config_.lpm_rematch_max_requests);
  auto by_staleness = [](const Request* a, const Request* b) {
    if ((a->match_len < 0) != (b->match_len < 0)) return a->match_len < 0;
    if (a->match_version != b->match_version) return a->match_version < b->match_version;
    return a->arrival_seq < b->arrival_seq;
  };
  if (stale.size() > budget) {
    std::nth_element(stale.begin(), stale.begin() + static_cast<int64_t>(budget), stale.end(),
                     by_staleness);
    stale.resize(budget);
  }
  std::sort(stale.begin(), stale.end(), by_staleness);
  int64_t tokens = 0;
  for (Request* req : stale) {
    if (tokens >= config_.lpm_rematch_max_tokens) break;
    MatchWaiting(req);
    tokens += req->match_len + 1;
  }
}

double Scheduler::LockForAdmission(RadixNode* node, uint64_t* swa_lock_id, bool lock,
                                   AdmissionBudget* budget) {
  const CacheOpTimer timer(stats_);
  const int64_t swa_before = cache_->swa_evictable_size();
  int64_t delta = 0;
  if (lock) {
    delta = cache_->IncLockRef(node, swa_lock_id);
  } else {
    delta = cache_->DecLockRef(node, *swa_lock_id);
    *swa_lock_id = 0;
  }
  // The adder's budget is the smaller of the two pools' (SchedulePrefills): move it by what
  // the smaller one becomes.
  const double before = std::min(budget->full, budget->swa);
  budget->full += static_cast<double>(delta);
  budget->swa += static_cast<double>(cache_->swa_evictable_size() - swa_before);
  return std::min(budget->full, budget->swa) - before;
}

namespace {

int64_t UncachedTokens(const Request& req) {
  const auto tokens = static_cast<int64_t>(req.token_ids.size());
  return tokens - std::clamp<int64_t>(req.match_len, 0, tokens);
}

}  // namespace

int64_t Scheduler::DecodeStepsLeft() const {
  int64_t steps_left = 0;
  for (const Request* req : decodes_) {
    steps_left = std::max(
        steps_left, std::min<int64_t>(req->remaining_new_tokens(), config_.clip_max_new_tokens));
  }
  return steps_left;
}

bool Scheduler::DefersPrefill(int64_t prefill_tokens) {
  if (decodes_.empty() || !(config_.defer_long_prefill_s > 0)) return false;
  if (!ShouldDeferPrefill(step_times_, prefill_tokens, DecodeStepsLeft(),
                          config_.defer_long_prefill_s)) {
    return false;
  }
  ++stats_.deferred_prefill_steps;
  return true;
}

bool Scheduler::PassesDeferredHead(const Request& req, int64_t head_tokens) const {
  const std::optional<double> prefill = step_times_.PrefillSeconds(UncachedTokens(req));
  if (!prefill.has_value() || *prefill >= config_.defer_long_prefill_s) return false;
  const int64_t own_steps = std::min<int64_t>(std::max<int64_t>(req.remaining_new_tokens(), 0),
                                              config_.clip_max_new_tokens);
  return ShouldDeferPrefill(step_times_, head_tokens, std::max(DecodeStepsLeft(), own_steps),
                            config_.defer_long_prefill_s);
}

void Scheduler::SchedulePrefills() {
  PollDiskLoads();
  if (waiting_.empty() && chunked_ == nullptr) return;
  const int32_t page = pool_.page_size();
  const auto n_decodes = static_cast<int64_t>(decodes_.size());
  const auto holding = static_cast<int32_t>(running_.size() + (chunked_ != nullptr ? 1 : 0));

  PrefillBudgets budgets;
  budgets.page_size = page;
  budgets.clip_max_new_tokens = config_.clip_max_new_tokens;
  AdmissionBudget budget;
  budget.full = static_cast<double>(pool_.available() + cache_->evictable_size());
  double swa_reserve = 0;
  for (const Request* req : running_) {
    const int64_t remaining = std::min<int64_t>(std::max<int64_t>(req->remaining_new_tokens(), 0),
                                                config_.clip_max_new_tokens);
    budgets.running_reserve += static_cast<double>(remaining) * new_token_ratio_;
    // A decode releases windowed KV as it goes: it never holds more than a window of its own.
    swa_reserve += static_cast<double>(std::min<int64_t>(
                       remaining, config_.sliding_window + 2 * static_cast<int64_t>(page))) *
                   new_token_ratio_;
  }
  // Both pools bound a prefill (SGLang: the smaller of the two); the adder subtracts the
  // full-pool reserve, so the windowed side is given its own reserve instead.
  budget.swa = pool_.has_swa() ? static_cast<double>(SwaAvailableTokens()) +
                                     budgets.running_reserve - swa_reserve
                               : budget.full;
  budgets.available_tokens = std::min(budget.full, budget.swa);
  budgets.input_tokens = config_.max_prefill_tokens - n_decodes;
  if (config_.chunked_prefill_size > 0) {
    budgets.chunk_tokens = config_.chunked_prefill_size - n_decodes;
  }
  budgets.batch_tokens = runner_->max_batch_tokens() - n_decodes;
  budgets.whole_prompts = runner_->runs_whole_prompts();
  budgets.logprob_rows = config_.max_logprob_rows_per_batch;
  budgets.request_slots = config_.max_running_requests - holding;
  PrefillAdder adder(budgets);
  InBatchSharing in_batch(IsCacheAware(config_.schedule_policy) && !cache_->disabled()
                              ? config_.in_batch_prefix_threshold
                              : 0);

  const StarvationBound starvation{config_.starvation_max_skips, config_.starvation_max_wait_s};
  const double now = clock_();
  // Deferred prefills (prefill_deferral.h) wait for the running decodes: the chunked request's
  // rest, or the head of the queue. Requests whose whole work is less than the shorter of them
  // pass meanwhile (PassesDeferredHead) until it is starved; past a deferred chunked request
  // only whole prompts (the chunked request stays the only one mid-prefill).
  int64_t deferred_tokens = -1;  // the shortest deferred prefill; -1: none
  Request* deferred_chunked = nullptr;
  // 1. The chunked request continues first (SGLang: add_chunked_req).
  if (Request* req = chunked_; req != nullptr && DefersPrefill(req->fill_len - req->kv_len)) {
    if (starvation.IsStarved(*req, now) || cache_->snapshots_enabled()) return;
    deferred_chunked = req;
    deferred_tokens = req->fill_len - req->kv_len;
  } else if (req != nullptr) {
    const std::vector<std::pair<int64_t, int64_t>> whole = req->WholeRanges(req->kv_len);
    const PrefillCandidate c{
        .extend_len = req->fill_len - req->kv_len,
        .max_new_tokens = req->remaining_new_tokens(),
        .needs_logprob_rows = req->wants_input_logprobs() && req->kv_len < req->prompt_len,
        .whole_ranges = whole};
    std::optional<int64_t> extend = adder.AddChunked(c);
    double change = 0;
    while (!extend.has_value() && adder.cur_rem_tokens() < page &&
           ReclaimOldestPin(&budget, &change)) {
      adder.OnEvictableChange(static_cast<int64_t>(change));
      extend = adder.AddChunked(c);
    }
    if (!extend.has_value()) return;  // retry next round
    const int64_t begin = req->kv_len;
    const int64_t end = SnapshotChunkEnd(*req, begin, begin + *extend);
    if (!AllocateExtend(req, end - begin)) return;
    chunks_.push_back({req, begin, end, ChunkLogitsMode(*req, begin, end)});
    in_batch.Add(*req);
    if (adder.has_partial() || end < req->fill_len) return;
  }
  if (waiting_.empty()) return;
  // 2. Waiting requests in policy order. Their matches are refreshed even when no request can
  // be admitted this round: the load report's waiting uncached tokens come from them.
  RefreshPrefixMatches();
  if (budgets.request_slots <= 0) return;
  std::vector<Request*>& order = order_scratch_;
  order.assign(waiting_.begin(), waiting_.end());
  const SchedulePolicyKind kind = cache_->disabled() && IsCacheAware(config_.schedule_policy)
                                      ? SchedulePolicyKind::kFcfs
                                      : config_.schedule_policy;
  OrderWaitingQueue(kind, starvation, now, rng_, order);
  // No prefill runs this step yet: the head of the queue may wait for the running decodes.
  const Request* deferred_head = nullptr;
  if (chunks_.empty()) {
    for (const Request* req : order) {
      if (IsHeldForSibling(*req) || req->disk_load_pending) continue;
      if (const int64_t tokens = UncachedTokens(*req); DefersPrefill(tokens)) {
        if (starvation.IsStarved(*req, now)) return;
        deferred_head = req;
        deferred_tokens = deferred_tokens < 0 ? tokens : std::min(deferred_tokens, tokens);
      }
      break;
    }
  }

  const bool nothing_holds_kv = running_.empty() && chunked_ == nullptr && chunks_.empty();
  // --max-loras-per-batch: the adapters of the requests holding KV, which share forwards.
  std::vector<const model::LoraAdapter*> adapters;
  if (config_.max_loras_per_batch > 0) {
    auto note = [&adapters](const Request* r) {
      if (r != nullptr && r->in.lora != nullptr &&
          std::find(adapters.begin(), adapters.end(), r->in.lora.get()) == adapters.end()) {
        adapters.push_back(r->in.lora.get());
      }
    };
    for (const Request* r : running_) note(r);
    note(chunked_);
  }
  size_t admitted = 0;
  for (Request* req : order) {
    if (IsHeldForSibling(*req) || req->disk_load_pending) continue;
    if (deferred_tokens >= 0 &&
        (req == deferred_head || !PassesDeferredHead(*req, deferred_tokens))) {
      continue;
    }
    const bool new_adapter =
        config_.max_loras_per_batch > 0 && req->in.lora != nullptr &&
        std::find(adapters.begin(), adapters.end(), req->in.lora.get()) == adapters.end();
    if (new_adapter && static_cast<int32_t>(adapters.size()) >= config_.max_loras_per_batch) {
      continue;  // waits until an adapter in use has no running request
    }
    RadixCache::MatchResult m = [&] {
      const CacheOpTimer timer(stats_);
      return cache_->MatchPrefix(
          std::span<const int32_t>(req->token_ids).first(req->MaxPrefixLen()),
          req->cache.key_namespace);
    }();
    if (config_.hicache.async_load) {
      if (SubmitDiskLoad(req, static_cast<int64_t>(m.slots.size()))) continue;
    } else {
      LoadFromDisk(req, &m);
    }
    const auto prefix = static_cast<int64_t>(m.slots.size());
    req->match_len = prefix;
    req->match_version = tree_version_;
    if (in_batch.enabled() && !starvation.IsStarved(*req, now) &&
        in_batch.SharesBeyondMatch(*req, prefix)) {
      continue;  // a sibling admitted this round fills the tree first
    }
    adder.OnEvictableChange(LockForAdmission(m.last_node, &req->cache.swa_lock_id, true, &budget));
    const std::vector<std::pair<int64_t, int64_t>> whole = req->WholeRanges(prefix);
    const PrefillCandidate c{.extend_len = static_cast<int64_t>(req->token_ids.size()) - prefix,
                             .max_new_tokens = req->remaining_new_tokens(),
                             .needs_logprob_rows = req->wants_input_logprobs(),
                             .whole_ranges = whole,
                             .force = nothing_holds_kv && admitted == 0};
    int64_t extend = 0;
    PrefillAdder::Result result = adder.AddOne(c, &extend);
    // Session KV is evicted last but never keeps a request out: release session pins, oldest
    // first, while memory is what refuses it.
    double change = 0;
    while (extend == 0 && RefusedForMemory(adder, c, config_.clip_max_new_tokens, page) &&
           ReclaimOldestPin(&budget, &change)) {
      adder.OnEvictableChange(static_cast<int64_t>(change));
      result = adder.AddOne(c, &extend);
    }
    if (extend == 0 || (deferred_chunked != nullptr && extend < c.extend_len)) {
      const CacheOpTimer timer(stats_);
      adder.OnEvictableChange(
          LockForAdmission(m.last_node, &req->cache.swa_lock_id, false, &budget));
      break;
    }
    // Admit: row, prefix, slots for the first chunk.
    const std::optional<int32_t> row = table_.Allocate();
    RADIXLM_CHECK(row.has_value()) << "max_running_requests bounds the rows in use";
    req->cache.req_pool_index = *row;
    req->cache.prefix_slots = std::move(m.slots);
    req->cache.last_node = m.last_node;
    req->cache.snapshot_due = m.kv_match > prefix ? m.kv_match : 0;
    if (req->in.snapshot_resume_point && cache_->snapshots_enabled()) {
      const int64_t resume = req->MaxPrefixLen() / page * page;
      if (resume > prefix) req->cache.snapshot_due = resume;
    }
    table_.Write(*row, 0, req->cache.prefix_slots);
    req->kv_len = prefix;
    req->fill_len = static_cast<int64_t>(req->token_ids.size());
    // A hybrid model's chunk ends where a state snapshot is due (that makes it partial).
    extend = SnapshotChunkEnd(*req, prefix, prefix + extend) - prefix;
    if (!AllocateExtend(req, extend)) {  // the budgets make this rare: undo and stop
      table_.Free(*row);
      {
        const CacheOpTimer timer(stats_);
        cache_->DecLockRef(req->cache.last_node, req->cache.swa_lock_id);
      }
      req->cache = CacheRequest();
      req->cache.priority = req->in.priority;
      req->cache.key_namespace = req->in.lora_namespace;
      req->kv_len = 0;
      req->fill_len = 0;
      break;
    }
    if (new_adapter) adapters.push_back(req->in.lora.get());
    if (!req->admitted_once) {
      req->admitted_once = true;
      req->first_admission_time = clock_();
      req->cached_tokens = std::min(prefix, req->prompt_len);
    }
    stats_.cache_hit_tokens += prefix;
    ResumeFromSnapshot(*req, req->cache.last_node);
    req->state = RequestState::kPrefilling;
    req->skipped_passes = 0;
    req->match_node = nullptr;
    chunks_.push_back(
        {req, prefix, prefix + extend, ChunkLogitsMode(*req, prefix, prefix + extend)});
    in_batch.Add(*req);
    ++admitted;
    if (result != PrefillAdder::Result::kContinue || prefix + extend < req->fill_len) break;
  }

  if (admitted > 0) {
    waiting_.erase(
        std::remove_if(waiting_.begin(), waiting_.end(),
                       [](const Request* r) { return r->state != RequestState::kWaiting; }),
        waiting_.end());
    for (Request* req : waiting_) ++req->skipped_passes;
    if (deferred_chunked != nullptr) ++deferred_chunked->skipped_passes;
  }
}

}  // namespace radixlm
