// Scheduler: construction, request lifecycle (add / abort / finish), flush, stats, invariants
// and the round driver. Admission, memory and result processing live in scheduler_*.cc.
#include "scheduler/scheduler.h"

#include <algorithm>
#include <chrono>
#include <future>

#include "sampling/sampler.h"
#include "util/check.h"

namespace radixlm {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const SchedulerConfig& config,
                                                       ModelRunner* runner,
                                                       const TokenTextCodec* codec, OutputSink sink,
                                                       ModelRunner* draft_runner) {
  if (runner == nullptr) return InvalidArgument("scheduler needs a model runner");
  RADIXLM_RETURN_IF_ERROR(config.Validate());
  int64_t context = runner->context_length();
  if (config.context_length > 0) context = std::min(context, config.context_length);
  if (config.speculative_draft_model != (draft_runner != nullptr)) {
    return InvalidArgument(draft_runner == nullptr
                               ? "draft-model speculation needs a draft model"
                               : "a draft model was given but speculative_draft_model is off");
  }
  if (draft_runner != nullptr) {
    if (draft_runner->vocab_size() != runner->vocab_size()) {
      return InvalidArgument("the draft model's vocabulary has " +
                             std::to_string(draft_runner->vocab_size()) +
                             " tokens, the target model's " + std::to_string(runner->vocab_size()) +
                             "; they must be the same");
    }
    if (draft_runner->nextn_hidden_size() > 0 && config.speculative_eagle_topk != 1) {
      return InvalidArgument("NEXTN drafts chains: --speculative-eagle-topk must be 1, got " +
                             std::to_string(config.speculative_eagle_topk));
    }
    // A hybrid target verifies chains only (its linear layers run a chain as a sequence), with
    // speculative_num_steps checkpoints of state per running request after the tree's
    // snapshots (scheduler_nextn.cc).
    const int64_t checkpoints = int64_t{config.max_running_requests} + config.state_snapshot_slots +
                                int64_t{config.max_running_requests} * config.speculative_num_steps;
    if (runner->state_slots() > 0 && config.speculative_eagle_topk != 1) {
      return InvalidArgument(
          "a hybrid (linear-attention) model verifies draft chains only: "
          "--speculative-eagle-topk must be 1");
    }
    if (runner->state_slots() > 0 && runner->state_slots() < checkpoints) {
      return InvalidArgument("the runner has " + std::to_string(runner->state_slots()) +
                             " state slots; draft verification needs " +
                             std::to_string(checkpoints) +
                             " (max_running_requests * (1 + speculative_num_steps) + "
                             "state_snapshot_slots)");
    }
    if (draft_runner->kv_slots() < runner->kv_slots() ||
        draft_runner->max_batch_tokens() < runner->max_batch_tokens() ||
        draft_runner->context_length() < context) {
      return InvalidArgument(
          "the draft model's runner needs at least the target's KV slots, batch tokens and "
          "context length");
    }
  }
  if (context < 2) return InvalidArgument("context length must be at least 2");
  if (runner->max_batch_tokens() < config.max_running_requests + config.page_size) {
    return InvalidArgument("the runner's max batch tokens (" +
                           std::to_string(runner->max_batch_tokens()) +
                           ") must exceed max_running_requests + page_size");
  }
  RADIXLM_ASSIGN_OR_RETURN(KvPool pool, KvPool::Create({.size = config.max_total_tokens,
                                                        .page_size = config.page_size,
                                                        .swa_size = config.swa_max_total_tokens}));
  if (runner->kv_slots() < pool.storage_slots()) {
    return InvalidArgument("the runner's KV storage has " + std::to_string(runner->kv_slots()) +
                           " slots; the pool needs " + std::to_string(pool.storage_slots()));
  }
  // A runner without separate sliding-window rows keeps every layer in full rows and ignores
  // the map; one with them must have room for every SWA slot.
  if (runner->swa_kv_slots() > 0 && runner->swa_kv_slots() < pool.swa_storage_slots()) {
    return InvalidArgument("the runner's sliding-window KV storage has " +
                           std::to_string(runner->swa_kv_slots()) + " rows; the pool needs " +
                           std::to_string(pool.swa_storage_slots()));
  }
  if (runner->swa_kv_slots() > 0 && !pool.has_swa()) {
    return InvalidArgument(
        "the runner keeps sliding-window KV apart but the scheduler has no "
        "SWA pool");
  }
  if (runner->state_slots() > 0 && !config.disable_radix_cache) {
    // A hybrid model: the tree resumes the linear layers from state snapshots.
    if (config.state_snapshot_slots < 1) {
      return InvalidArgument(
          "a hybrid (linear-attention) model's radix cache needs state snapshot slots "
          "(--max-mamba-cache-size at least 1), or --disable-radix-cache");
    }
    if (runner->state_slots() <
        int64_t{config.max_running_requests} + config.state_snapshot_slots) {
      return InvalidArgument(
          "the runner has " + std::to_string(runner->state_slots()) +
          " state slots; max_running_requests + state_snapshot_slots need " +
          std::to_string(int64_t{config.max_running_requests} + config.state_snapshot_slots));
    }
    if (pool.has_swa()) {
      return InvalidArgument("state snapshots with a sliding-window KV pool are not built");
    }
    // Snapshots go to disk where blocks end (scheduler_hicache_state.cc).
    if (config.hicache.enable &&
        config.hybrid_snapshot_interval % config.hicache.block_tokens != 0) {
      return InvalidArgument(
          "the disk tier keeps a hybrid model's state snapshots where its blocks end: "
          "--hybrid-snapshot-interval (" +
          std::to_string(config.hybrid_snapshot_interval) +
          ") must be a multiple of its block size (" + std::to_string(config.hicache.block_tokens) +
          " tokens)");
    }
  }
  RADIXLM_ASSIGN_OR_RETURN(
      ReqToTokenTable table,
      ReqToTokenTable::Create({.max_requests = config.max_running_requests,
                               .max_context_len = static_cast<int32_t>(context)}));
  std::unique_ptr<Scheduler> scheduler(new Scheduler(config, runner, draft_runner, codec,
                                                     std::move(sink), std::move(pool),
                                                     std::move(table), context));
  RADIXLM_RETURN_IF_ERROR(scheduler->OpenDiskTier());
  return scheduler;
}

Scheduler::Scheduler(const SchedulerConfig& config, ModelRunner* runner, ModelRunner* draft_runner,
                     const TokenTextCodec* codec, OutputSink sink, KvPool pool,
                     ReqToTokenTable table, int64_t context_length)
    : config_(config),
      runner_(runner),
      codec_(codec),
      sink_(std::move(sink)),
      context_length_(context_length),
      clock_(SteadySeconds),
      pool_(std::move(pool)),
      table_(std::move(table)),
      rng_(config.random_seed),
      new_token_ratio_(config.init_new_token_ratio),
      sampler_(runner->vocab_size(),
               runner->thread_pool() != nullptr ? runner->thread_pool()->size() : 1) {
  if (codec_ != nullptr) eog_token_ids_ = codec_->eog_token_ids();
  cache_ = std::make_unique<RadixCache>(RadixCacheConfig{
      .page_size = config.page_size,
      .disable = config.disable_radix_cache,
      .eviction_policy = config.radix_eviction_policy,
      .sliding_window = pool_.has_swa() ? config.sliding_window : 0,
      .snapshot_slots = runner->state_slots() > 0 ? config.state_snapshot_slots : 0,
      .first_snapshot_id = config.max_running_requests,
  });
  if (config.speculative_ngram) {
    ngram_ = std::make_unique<spec::NgramFiller>(
        config.ngram, static_cast<size_t>(config.speculative_ngram_fill_queue_tokens));
  }
  draft_runner_ = draft_runner;
  if (draft_runner != nullptr) {
    nextn_hidden_ = draft_runner->nextn_hidden_size();
    state_checkpoints_ = runner->state_slots() > 0;
    first_checkpoint_ = config.max_running_requests + config.state_snapshot_slots;
  }
}

Scheduler::~Scheduler() = default;

Status Scheduler::AddRequest(RequestInput input) {
  if (requests_.count(input.id) != 0) {
    return InvalidArgument("request id " + std::to_string(input.id) + " is already live");
  }
  const int64_t prompt_len = static_cast<int64_t>(input.input_ids.size());
  const int64_t room = std::max<int64_t>(context_length_ - prompt_len, 0);
  const int64_t max_new = std::min<int64_t>(input.params.max_new_tokens.value_or(room), room);
  const uint64_t seed = input.seed.has_value() ? *input.seed : ResolveSeed(input.params);
  auto owned = std::make_unique<Request>(std::move(input), max_new, seed);
  Request* req = owned.get();
  req->arrival_seq = next_arrival_++;
  req->arrival_time = clock_();
  req->stop = StopChecker(
      req->in.params, req->max_new_tokens, eog_token_ids_,
      codec_ != nullptr ? codec_->NewDecoder(req->in.params.skip_special_tokens) : nullptr);
  requests_.emplace(req->in.id, std::move(owned));
  if (req->in.lora_namespace != 0 && req->in.lora_identity != 0) {
    lora_identities_[req->in.lora_namespace] = req->in.lora_identity;
  }
  if (req->in.pending_grammar.valid()) {
    // A cached grammar is ready at once; otherwise the request waits in the grammar queue.
    if (req->in.pending_grammar.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      TakeGrammar(req);
    } else {
      grammar_queue_.push_back(req);
    }
    return Status::Ok();
  }
  if (JumpForwardAtStart(req)) return Status::Ok();  // the forced text finished it
  waiting_.push_back(req);
  return Status::Ok();
}

bool Scheduler::HasReadyGrammar() const {
  for (const Request* req : grammar_queue_) {
    if (req->in.pending_grammar.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      return true;
    }
  }
  return false;
}

void Scheduler::PollGrammarQueue() {
  if (grammar_queue_.empty()) return;
  std::vector<Request*> ready;
  std::erase_if(grammar_queue_, [&](Request* req) {
    if (req->in.pending_grammar.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return false;
    }
    ready.push_back(req);
    return true;
  });
  for (Request* req : ready) TakeGrammar(req);
}

bool Scheduler::TakeGrammar(Request* req) {
  RequestInput::GrammarResult result = req->in.pending_grammar.get();
  req->in.pending_grammar = {};
  if (!result.ok()) {
    // The request's own grammar could not be built (over the state caps, or invalid): a 400
    // where the answer has not started, as the cached failure gives later requests.
    FinishRequest(req, FinishReason::Abort(std::string("grammar compilation failed (") +
                                               grammar::GrammarKindName(req->in.grammar_kind) +
                                               "): " + result.status().message(),
                                           400));
    return true;
  }
  req->in.grammar = std::move(result).value();
  if (req->in.grammar != nullptr) req->matcher.emplace(req->in.grammar);
  if (JumpForwardAtStart(req)) return true;  // the forced text finished it
  waiting_.push_back(req);
  return false;
}

bool Scheduler::Abort(uint64_t id, const std::string& message) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return false;
  FinishRequest(it->second.get(), FinishReason::Abort(message));
  return true;
}

int32_t Scheduler::LastSlot(const Request& req) const {
  if (req.kv_len == 0) return -1;
  return table_.Row(req.cache.req_pool_index)[req.kv_len - 1];
}

void Scheduler::ReleaseKv(Request* req) {
  if (req->cache.req_pool_index < 0) return;
  WriteThroughToDisk(req);
  const int32_t snapshot = SnapshotForRelease(*req);
  {
    const CacheOpTimer timer(stats_);
    cache_->CacheFinishedRequest(req->cache,
                                 std::span<const int32_t>(req->token_ids).first(req->kv_len),
                                 table_, pool_, snapshot);
  }
  ++tree_version_;
  req->kv_len = 0;
  req->fill_len = 0;
}

void Scheduler::RemoveFromQueues(Request* req) {
  auto drop = [req](std::vector<Request*>& v) {
    v.erase(std::remove(v.begin(), v.end(), req), v.end());
  };
  switch (req->state) {
    case RequestState::kWaiting:
      drop(waiting_);
      drop(grammar_queue_);
      break;
    case RequestState::kPrefilling:
      if (chunked_ == req) chunked_ = nullptr;
      break;
    case RequestState::kDecoding:
      drop(running_);
      break;
    case RequestState::kFinished:
      break;
  }
}

void Scheduler::FinishRequest(Request* req, FinishReason reason) {
  RADIXLM_CHECK(req->state != RequestState::kFinished)
      << "request " << req->in.id << " finished twice";
  RemoveFromQueues(req);
  DropDiskLoad(req);
  // Its last tokens (the final verify's) still go to the trie; a prompt never run does not.
  if (req->prompt_prefilled) QueueNgramWindows(req);
  const int64_t kv_len = req->kv_len;
  ReleaseKv(req);
  if (req->in.pin_on_finish.has_value() && !reason.is_abort()) {
    // The tokens with KV are in the tree now; the (reclaimable) pin keeps them there.
    PinReclaimable(*req->in.pin_on_finish, std::span<const int32_t>(req->token_ids).first(kv_len),
                   req->in.lora_namespace);
  }
  req->state = RequestState::kFinished;
  if (reason.is_abort()) {
    ++stats_.aborted_requests;
  } else {
    ++stats_.finished_requests;
  }
  req->finish = std::move(reason);
  EmitOutput(req);
  requests_.erase(req->in.id);  // destroys req
}

void Scheduler::EmitOutput(Request* req) {
  RequestOutput out;
  out.id = req->in.id;
  GenerateOutput& c = out.chunk;
  const std::span<const int32_t> outputs = req->output_ids();
  c.output_ids.assign(outputs.begin() + static_cast<int64_t>(req->reported_tokens), outputs.end());
  req->reported_tokens = outputs.size();
  c.text = req->stop.TakeText();
  c.output_token_logprobs = std::move(req->output_logprobs);
  req->output_logprobs.clear();
  const bool final = req->finish.has_value();
  if (!req->input_logprobs_reported && (final || !c.output_ids.empty())) {
    c.input_token_logprobs = std::move(req->input_logprobs);
    req->input_logprobs_reported = true;
  }
  if (!final && c.output_ids.empty() && c.text.empty()) return;
  c.finish_reason = req->finish;
  if (final) c.embedding = std::move(req->embedding);
  c.meta.prompt_tokens = req->prompt_len;
  c.meta.completion_tokens = req->output_len();
  c.meta.cached_tokens = req->cached_tokens;
  c.meta.jump_forward_tokens = req->jump_forward_tokens;
  c.meta.forward_passes_saved = req->output_len() - req->sampled_tokens;
  c.meta.forward_passes = req->forward_passes;
  c.meta.spec_verify_ct = req->spec_verify_ct;
  c.meta.spec_accepted_tokens = req->accepted_tokens;
  c.meta.spec_drafted_tokens = req->drafted_tokens;
  if (sink_) sink_(std::move(out));
}

Status Scheduler::Step() {
  PollGrammarQueue();
  if (paused_) return Status::Ok();
  AbortTimedOut();
  if (!HasRunnableWork()) return Status::Ok();
  if (running_.empty() && chunked_ == nullptr) new_token_ratio_ = config_.init_new_token_ratio;
  decodes_.clear();
  chunks_.clear();
  PrepareDecodes();
  SchedulePrefills();
  if (Status drafted = PrepareDrafts(); !drafted.ok()) {
    AbortBatch("The draft model's forward pass failed: " + drafted.ToString());
    return drafted;
  }
  if (decodes_.empty() && chunks_.empty()) {
    if (WaitForDiskLoads()) return Status::Ok();  // a request waits for its disk blocks
    // Nothing runs, nothing could be admitted although nothing holds KV: the head request can
    // never run (admission guarantees progress otherwise). Do not spin on it.
    if (running_.empty() && chunked_ == nullptr && !waiting_.empty()) {
      Request* head = *std::min_element(
          waiting_.begin(), waiting_.end(),
          [](const Request* a, const Request* b) { return a->arrival_seq < b->arrival_seq; });
      if (!IsHeldForSibling(*head)) {
        FinishRequest(head, FinishReason::Abort("the request cannot be scheduled: not enough "
                                                "KV cache memory"));
      }
    }
    return Status::Ok();
  }
  BuildForwardBatch(decodes_, chunks_, table_, &batch_);
  batch_.swa_slot_map = pool_.swa_slot_map();
  batch_.output_hidden = nextn_hidden_ > 0;  // the NextN layer's inputs
  AttachStateCheckpoints();
  const auto forward_start = std::chrono::steady_clock::now();
  const double clock_start = clock_();
  Status status = runner_->Forward(batch_, &forward_out_);
  const double forward_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - forward_start).count();
  stats_.forward_seconds += forward_seconds;
  if (status.ok()) {
    int64_t prefill_tokens = 0;
    for (const PrefillChunk& c : chunks_) prefill_tokens += c.end - c.begin;
    step_times_.Observe(prefill_tokens, static_cast<int64_t>(decodes_.size()),
                        clock_() - clock_start);
  }
  if (status.ok() && chunks_.empty() && spec_batch_tokens_ > 0) {  // a decode step, pacing on
    step_cost_.Add(forward_out_.n_rows, forward_seconds);
  }
  ++stats_.forward_passes;
  if (!status.ok()) {
    AbortBatch("The model forward pass failed: " + status.ToString());
    return status;
  }
  if (draft_runner_ != nullptr) {
    if (status = MirrorOnDraftModel(); !status.ok()) {
      AbortBatch("The draft model's forward pass failed: " + status.ToString());
      return status;
    }
  }
  ProcessResults();
  if (!decodes_.empty()) {
    const double min_ratio = config_.init_new_token_ratio * config_.min_new_token_ratio_factor;
    const double decay =
        (config_.init_new_token_ratio - min_ratio) / config_.new_token_ratio_decay_steps;
    new_token_ratio_ = std::max(new_token_ratio_ - decay, min_ratio);
  }
  // The whole pool / table / tree accounting: a walk over every request and node, so debug only.
  RADIXLM_DCHECK_OK(CheckInvariants()) << "after a scheduler step";
  return Status::Ok();
}

Status Scheduler::FlushCache() {
  // Waiting requests hold no KV, rows or locks, so a paused scheduler with nothing running may
  // drop the tree under them (SGLang allows it after a retract-mode pause).
  const bool only_waiting = running_.empty() && chunked_ == nullptr;
  if (!requests_.empty() && !(paused_ && only_waiting)) {
    return Aborted("Cache not flushed: " + std::to_string(requests_.size()) +
                   " requests are waiting or running.");
  }
  // Session KV goes with the rest of the cache (as SGLang's flush drops its session slots);
  // a hard pin (the frontend's fork) refuses the flush.
  if (pins_.size() > reclaimable_by_seq_.size()) {
    const size_t hard = pins_.size() - reclaimable_by_seq_.size();
    return Aborted("Cache not flushed: " + std::to_string(hard) + " prefixes are pinned.");
  }
  ReclaimAllPins();
  cache_->Reset();
  pool_.Reset();
  table_.Reset();
  ++tree_version_;
  return Status::Ok();
}

SchedulerStats Scheduler::GetStats() const {
  SchedulerStats s = stats_;
  s.running_requests = static_cast<int64_t>(running_.size());
  s.prefilling_requests = chunked_ != nullptr ? 1 : 0;
  s.waiting_requests = static_cast<int64_t>(waiting_.size());
  for (const Request* req : waiting_) {
    const auto tokens = static_cast<int64_t>(req->token_ids.size());
    s.waiting_tokens += tokens;
    s.waiting_uncached_tokens += tokens - std::clamp<int64_t>(req->match_len, 0, tokens);
  }
  s.grammar_queue_requests = static_cast<int64_t>(grammar_queue_.size());
  s.paused = paused_;
  s.pool_size = pool_.size();
  s.pool_free = pool_.available();
  s.pool_used = pool_.size() - pool_.available();
  s.evictable_tokens = cache_->evictable_size();
  s.protected_tokens = cache_->protected_size();
  s.swa_pool_size = pool_.swa_size();
  s.swa_pool_free = pool_.swa_available();
  s.swa_evictable_tokens = cache_->swa_evictable_size();
  s.swa_protected_tokens = cache_->swa_protected_size();
  s.state_snapshots = cache_->snapshot_count();
  s.state_snapshot_capacity = cache_->snapshot_capacity();
  s.state_snapshots_protected = cache_->protected_snapshots();
  s.state_snapshot_bytes = s.state_snapshots * runner_->state_slot_bytes();
  s.new_token_ratio = new_token_ratio_;
  if (disk_ != nullptr) {
    s.hicache_enabled = true;
    s.disk_block_tokens = config_.hicache.block_tokens;
    s.disk = disk_->stats();
  }
  if (ngram_ != nullptr) s.spec_ngram_dropped_tokens = ngram_->stats().dropped_tokens;
  return s;
}

Status Scheduler::CheckInvariants() const {
  RADIXLM_RETURN_IF_ERROR(pool_.CheckInvariants());
  const int64_t page = pool_.page_size();
  int64_t in_flight = 0;
  int32_t rows = 0;
  for (const auto& [id, owned] : requests_) {
    const Request& req = *owned;
    const bool holds =
        req.state == RequestState::kPrefilling || req.state == RequestState::kDecoding;
    if (holds != (req.cache.req_pool_index >= 0)) {
      return Internal("request " + std::to_string(id) + " row ownership does not match state");
    }
    if (!holds) continue;
    ++rows;
    const auto prefix = static_cast<int64_t>(req.cache.prefix_slots.size());
    if (prefix > req.kv_len || prefix % page != 0) {
      return Internal("request " + std::to_string(id) + " prefix is not a page-aligned part");
    }
    const std::span<const int32_t> row = table_.Row(req.cache.req_pool_index);
    if (!std::equal(req.cache.prefix_slots.begin(), req.cache.prefix_slots.end(), row.begin())) {
      return Internal("request " + std::to_string(id) + " row does not start with its prefix");
    }
    in_flight += (req.kv_len - prefix + page - 1) / page * page;
    if (req.state == RequestState::kDecoding &&
        req.kv_len + 1 != static_cast<int64_t>(req.token_ids.size())) {
      return Internal("decoding request " + std::to_string(id) +
                      " has kv_len off by more "
                      "than its newest token");
    }
  }
  if (table_.max_requests() - table_.available() != rows) {
    return Internal("request rows in use do not match requests holding KV");
  }
  return cache_->CheckInvariants(pool_, in_flight);
}

}  // namespace radixlm
