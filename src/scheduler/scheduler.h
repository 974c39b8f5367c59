// Scheduler: continuous batching over one RadixCache (SGLang's Scheduler event loop, minus the
// IPC). It owns the KV pool, the request→token table, the radix tree and every request; one
// thread drives it (the engine's scheduler thread, or a test) and nothing else touches them.
//
// One Step() is one round:
//   1. decode memory: every running request needs one more KV slot; if the pool is short,
//      evict from the tree, then retract requests (retraction.h);
//   2. admission: the continuing chunked request first, then waiting requests in policy order
//      (schedule_policy.h) while the PrefillAdder's budgets allow (prefill_adder.h); each
//      admitted request's cached prefix is matched and locked, and slots are allocated;
//   3. one forward over decodes and prefill chunks together (batch_builder.h);
//   4. results: input logprobs, sampling (BatchSampler), stop checks; a completed prefill is
//      inserted into the tree (CacheUnfinishedRequest) so others share it at once, a middle
//      chunk too; a finished request's KV goes to the tree (CacheFinishedRequest).
// Outputs go to the OutputSink, called on the driving thread inside AddRequest / Abort / Step.
//
// Invariant (CheckInvariants): every pool slot is free, owned by the tree, or owned by exactly
// one request holding KV; when idle, every slot is free or in the tree.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/disk_store.h"
#include "cache/kv_pool.h"
#include "cache/radix_cache.h"
#include "cache/req_to_token.h"
#include "model/forward_batch.h"
#include "sampling/batch_sampler.h"
#include "scheduler/batch_builder.h"
#include "scheduler/model_runner.h"
#include "scheduler/prefill_deferral.h"
#include "scheduler/request.h"
#include "scheduler/request_output.h"
#include "scheduler/schedule_policy.h"
#include "scheduler/scheduler_config.h"
#include "spec/ngram_filler.h"
#include "spec/topk_tree_builder.h"
#include "tokenizer/text_codec.h"

namespace radixlm {

struct SchedulerStats {
  int64_t running_requests = 0;     // decoding
  int64_t prefilling_requests = 0;  // mid chunked prefill
  int64_t waiting_requests = 0;
  // Tokens of the waiting requests, and of those the part their last prefix match did not find
  // in the tree (an estimate: the tree may have changed since; never matched counts as all).
  int64_t waiting_tokens = 0;
  int64_t waiting_uncached_tokens = 0;
  int64_t grammar_queue_requests = 0;  // waiting for their grammar to compile
  bool paused = false;                 // Pause without Continue since
  int64_t pool_size = 0;               // usable KV token slots
  int64_t pool_free = 0;
  int64_t pool_used = 0;
  int64_t evictable_tokens = 0;
  int64_t protected_tokens = 0;
  // Sliding-window pool (0 without one): its slots, the free ones, and the tree's tokens that
  // still hold windowed KV outside / inside a lock's window. Tree tokens without windowed KV
  // (tombstones) are evictable_tokens + protected_tokens - these two.
  int64_t swa_pool_size = 0;
  int64_t swa_pool_free = 0;
  int64_t swa_evictable_tokens = 0;
  int64_t swa_protected_tokens = 0;
  // A hybrid model's state snapshots in the tree (RadixCache "State snapshots"): held, the
  // most there may be, those held by locked nodes, and the bytes held (count x slot bytes);
  // taken and resumed from (cumulative).
  int64_t state_snapshots = 0;
  int64_t state_snapshot_capacity = 0;
  int64_t state_snapshots_protected = 0;
  int64_t state_snapshot_bytes = 0;
  int64_t state_snapshots_taken = 0;
  int64_t state_snapshot_resumes = 0;
  int64_t cache_hit_tokens = 0;  // tokens supplied by the tree at admissions (cumulative)
  int64_t prefill_tokens = 0;    // tokens computed by prefill chunks (cumulative)
  int64_t decode_tokens = 0;     // tokens computed by decode steps (cumulative)
  int64_t retractions = 0;
  int64_t reclaimed_pins = 0;  // reclaimable (session) pins released for memory or a flush
  int64_t forward_passes = 0;
  int64_t finished_requests = 0;
  int64_t aborted_requests = 0;
  double new_token_ratio = 0;
  // Wall time inside radix-cache operations (match, insert, evict, lock/unlock; cumulative)
  // and how many were timed: the tree's share of runtime. Two steady_clock reads per operation.
  double cache_op_seconds = 0;
  int64_t cache_ops = 0;
  // Constrained decoding (cumulative): jump-forwards taken, output tokens they placed, and the
  // time spent building grammar masks (one per constrained row sampled) next to the time spent
  // in the model's forward passes.
  int64_t jump_forwards = 0;
  int64_t jump_forward_tokens = 0;
  int64_t grammar_masks = 0;
  double grammar_mask_seconds = 0;
  double forward_seconds = 0;
  // Steps that ran only decodes while a long prefill waited (scheduler/prefill_deferral.h).
  int64_t deferred_prefill_steps = 0;
  // Disk tier (--enable-hierarchical-cache; all zero without it). disk_hit_tokens: tokens a
  // match gained from blocks loaded off disk (cumulative; also counted in cache_hit_tokens once
  // admitted); disk: the store's counters; disk_block_tokens: tokens per block.
  bool hicache_enabled = false;
  int64_t disk_hit_tokens = 0;
  int64_t disk_block_tokens = 0;
  DiskStoreStats disk;
  // Speculative decoding (cumulative): decode rounds of requests that could speculate, the
  // draft tokens verified and those kept.
  int64_t spec_verify_steps = 0;
  int64_t spec_drafted_tokens = 0;
  int64_t spec_accepted_tokens = 0;
  // Drafted tokens cut before verification because the request's grammar forbids them.
  int64_t spec_grammar_pruned_tokens = 0;
  // NGRAM: new tokens whose windows were dropped unseen by the trie because the background
  // filler's queue was full (spec/ngram_filler.h).
  int64_t spec_ngram_dropped_tokens = 0;
};

using OutputSink = std::function<void(RequestOutput&&)>;

class Scheduler {
 public:
  // How Pause treats the requests in flight (SGLang's PauseGenerationReqInput.mode).
  enum class PauseMode {
    kAbort,    // every live request finishes with an abort
    kRetract,  // requests holding KV go back to waiting (KV to the tree); re-prefilled later
    kInPlace,  // requests stay where they are, KV kept; nothing runs until Continue
  };

  // runner must outlive the scheduler; codec may be null (no text, no stop strings).
  // draft_runner: the draft model, required with config.speculative_draft_model (else null);
  // it must outlive the scheduler, have the runner's vocabulary size (the caller checks that
  // the tokens are the same), at least as many KV slots, the same batch size and context.
  // InvalidArgument for a bad config or a runner whose KV storage is smaller than the pool.
  static StatusOr<std::unique_ptr<Scheduler>> Create(const SchedulerConfig& config,
                                                     ModelRunner* runner,
                                                     const TokenTextCodec* codec, OutputSink sink,
                                                     ModelRunner* draft_runner = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request. InvalidArgument if its id is live already.
  // Precondition: the caller validated the request (the engine's request validator,
  // engine/request_validation.h): a non-empty prompt of in-vocabulary ids that, with its
  // max_new_tokens, fits the context length and the pool, and logprob options in range. The
  // scheduler only decides when the memory to run it is there (a full pool is a scheduling
  // decision: the request waits, or is retracted and resumed).
  Status AddRequest(RequestInput input);

  // Aborts a live request at any stage, frees what it holds and sends its final output.
  // False if no such live request.
  bool Abort(uint64_t id, const std::string& message = "Aborted by the user");

  // One round (see above). OK and nothing done when there is no work. A runner failure aborts
  // the requests of that batch (their KV freed) and is returned; the scheduler goes on.
  Status Step();

  // Pausing (scheduler_pause.cc, SGLang's pause_generation / continue_generation). While
  // paused, Step runs no forward pass and checks no timeout; AddRequest still queues, and a
  // compiled grammar still moves its request to waiting. Pause while paused applies the new
  // mode to what is live (an in-place pause can be turned into an abort). Continue resumes;
  // an in-place-paused request then goes on exactly where it stopped.
  void Pause(PauseMode mode);
  void Continue();
  bool paused() const { return paused_; }

  // Any live request, including those whose grammar is still compiling (Step polls them).
  bool HasWork() const { return HasRunnableWork() || !grammar_queue_.empty(); }
  // Requests Step can make progress on now, without waiting for a grammar compilation (none
  // while paused).
  bool HasRunnableWork() const {
    return !paused_ && (!waiting_.empty() || !running_.empty() || chunked_ != nullptr);
  }
  // Requests in the grammar queue (their grammar compiling), and whether one of them is ready
  // to leave it (a compilation finished). A driver with only pending grammars should wait for
  // HasReadyGrammar rather than call Step in a hot loop.
  size_t grammar_queue_size() const { return grammar_queue_.size(); }
  bool HasReadyGrammar() const;

  // Drops every cached prefix and resets the pool. Only when no request is live (as SGLang's
  // flush_cache), or while paused with no request holding KV (after a retract pause: the
  // waiting requests recompute their prefixes after Continue); otherwise Aborted with the
  // reason, nothing changed.
  Status FlushCache();
  // Deletes the disk tier's blocks of this model (SGLang's /clear_hicache_storage_backend;
  // DiskStore::Clear) and returns how many; the RAM tier is untouched. InvalidArgument without
  // a disk tier.
  StatusOr<int64_t> ClearDiskTier();

  // Pins (the frontend's fork, scheduler_pins.cc): keeps the longest cached prefix of `ids`
  // from eviction, as a running request's lock does, until UnpinPrefix(pin). Returns the
  // pinned token count (0 when nothing is cached or the cache is disabled). InvalidArgument if
  // `pin` is in use. A cache flush is refused while pins are held, reclaimable ones aside.
  // A session turn's pin (RequestInput::pin_on_finish) is reclaimable: released, oldest first,
  // when the pool cannot otherwise hold what admission or a decode needs (and by a cache
  // flush); UnpinPrefix of a reclaimed pin returns false.
  // key_namespace: the tree namespace of ids (RadixCache "Namespaces"; a LoRA adapter's).
  StatusOr<int64_t> PinPrefix(uint64_t pin, std::span<const int32_t> ids,
                              int32_t key_namespace = 0);
  bool UnpinPrefix(uint64_t pin);  // false if no such pin
  size_t pinned_prefixes() const { return pins_.size(); }
  size_t reclaimable_pins() const { return reclaimable_by_seq_.size(); }

  // NGRAM: returns once every token window handed to the background trie filler is in the
  // trie (or was dropped), so the next drafts see them. Drafts never need it for correctness;
  // tests call it between waves for deterministic acceptance. No-op without NGRAM.
  void FlushNgramFills();
  // Prefill/decode disaggregation (scheduler_prefix_kv.cc; the engine copies the KV rows,
  // engine/prefix_kv.h). CachedPrefixSlots: the slots of the longest cached prefix of `ids`
  // in namespace key_namespace (lent: read them before the next step). ImportPrefix: takes
  // slots for the page-aligned part
  // of `ids` (evicting as needed), has `write` fill them with KV, releases their windowed KV
  // before position `swa_valid_from` (what `write` could not fill), inserts them into the tree
  // and pins the prefix under `pin` (UnpinPrefix releases it). Returns the pinned token count;
  // ResourceExhausted when the pool cannot hold the prefix, Unimplemented with the radix cache
  // disabled, `write`'s error (nothing changed) when it fails.
  // With state snapshots (a hybrid model) the KV alone cannot resume the linear layers:
  // ImportPrefix also takes a snapshot id (evicting another if none is free), has `write_state`
  // fill it with the state after all of `ids`, and attaches it to the node ending there. When
  // `ids` are not whole pages or no snapshot id can be had, nothing is imported and the root is
  // pinned (0 tokens: the request computes its prompt).
  // ExportablePrefix: the cached prefix of `ids` a request with this prompt would start from,
  // as its lent slots and, with state snapshots, the state slot of the snapshot after them
  // (-1: none, the empty prefix): the longest cached prefix, or with snapshots the deepest one
  // within ids[0, size - 1) (a request's last prompt position is always computed).
  using PrefixWriter = std::function<Status(std::span<const int32_t> slots)>;
  using StateWriter = std::function<Status(int32_t state_slot)>;
  std::vector<int32_t> CachedPrefixSlots(std::span<const int32_t> ids, int32_t key_namespace = 0);
  struct CachedPrefix {
    std::vector<int32_t> slots;
    int32_t state_slot = -1;
  };
  CachedPrefix ExportablePrefix(std::span<const int32_t> ids, int32_t key_namespace = 0);
  StatusOr<int64_t> ImportPrefix(uint64_t pin, std::span<const int32_t> ids, int32_t key_namespace,
                                 int64_t swa_valid_from, const PrefixWriter& write,
                                 const StateWriter& write_state = nullptr);

  SchedulerStats GetStats() const;
  // Pool / tree / table consistency, including request ownership of slots (see above).
  Status CheckInvariants() const;

  const SchedulerConfig& config() const { return config_; }
  int64_t context_length() const { return context_length_; }
  const RadixCache& cache() const { return *cache_; }
  const KvPool& pool() const { return pool_; }
  DiskStore* disk_store_for_testing() { return disk_.get(); }  // null without a disk tier
  // Seconds on the scheduler's clock (steady clock by default; tests may replace it).
  void set_clock(std::function<double()> clock) { clock_ = std::move(clock); }

 private:
  Scheduler(const SchedulerConfig& config, ModelRunner* runner, ModelRunner* draft_runner,
            const TokenTextCodec* codec, OutputSink sink, KvPool pool, ReqToTokenTable table,
            int64_t context_length);

  // --- lifecycle (scheduler.cc) ---
  void FinishRequest(Request* req, FinishReason reason);
  void ReleaseKv(Request* req);  // KV to the tree (CacheFinishedRequest), row freed
  void EmitOutput(Request* req);
  void RemoveFromQueues(Request* req);
  // --- disk tier (scheduler_hicache.cc) ---
  Status OpenDiskTier();  // with config_.hicache.enable; called once by Create
  // The disk blocks' key domain (PrefixHasher) of a tree namespace: 0 for the base model, the
  // LoRA adapter's identity for an adapter's namespace; nullopt for a namespace whose adapter
  // identity is unknown (nothing of it goes to or comes from disk).
  std::optional<uint64_t> DiskDomain(int32_t key_namespace) const;
  // Queues for writing every block of tokens / slots (a prefix from position 0, with KV held
  // for all of it; the token ids themselves, not namespaced) that ends after position `from`
  // and is not on disk yet, keyed in `domain`.
  void WriteBlocksToDisk(std::span<const int32_t> tokens, std::span<const int32_t> slots,
                         int64_t from, uint64_t domain);
  void WriteNodeToDisk(const RadixNode& node);  // the radix cache's release observer
  // The path root -> node as token ids (without their namespace) and slots, appended to
  // *tokens / *slots, and its disk key domain; nullopt (nothing appended) for the root or a
  // namespace that does not go to disk.
  std::optional<uint64_t> NodePath(const RadixNode& node, std::vector<int32_t>* tokens,
                                   std::vector<int32_t>* slots, int32_t* key_namespace) const;
  // A hybrid model's state snapshots on disk (scheduler_hicache_state.cc). WriteStateToDisk
  // queues the state in `state_slot`, the state after `tokens` (token ids), when
  // tokens.size() is a whole number of blocks. WriteSnapshotToDisk: the radix cache's snapshot
  // observer (node's path blocks, then its snapshot). WriteThroughState: write_through, a
  // snapshot req just took of its state after kv_len tokens. PlanStateLoad cuts plan's blocks
  // at the deepest one with a snapshot on disk beyond `matched` (false: none).
  // AttachLoadedState gives node (the end of loaded blocks) a snapshot holding `state`; false
  // when no snapshot id is free (the node keeps one it has: true). Under the caller's
  // CacheOpTimer.
  void WriteStateToDisk(std::span<const int32_t> tokens, int32_t state_slot, uint64_t domain);
  void WriteSnapshotToDisk(const RadixNode& node);
  void WriteThroughState(const Request& req, int32_t state_slot);
  // Writes, for every path below `node`, the block that ends at block_end (tokens / slots: the
  // path from the root to node's end, token ids without their namespace; restored on return).
  void WriteStraddlingBlocks(const RadixNode& node, int64_t block_end, std::vector<int32_t>& tokens,
                             std::vector<int32_t>& slots, int32_t key_namespace, uint64_t domain);
  void WriteThroughToDisk(Request* req);  // write_through: req's KV so far
  // Before req releases the windowed KV of its own tokens [.., until): offers the blocks that
  // release reaches into whose KV is all computed (else they could never be stored).
  void WriteBeforeWindowRelease(Request* req, int64_t until);
  // The disk blocks that would extend a match of `matched` tokens (at least one block beyond
  // it), or nullopt.
  struct DiskLoadPlan {
    int64_t start = 0;  // block-aligned position of the first block
    std::vector<BlockKey> keys;
    std::optional<BlockKey> state_key;  // a hybrid model's snapshot after the last block
  };
  std::optional<DiskLoadPlan> PlanDiskLoad(const Request& req, int64_t matched) const;
  bool PlanStateLoad(int64_t matched, DiskLoadPlan* plan) const;
  bool AttachLoadedState(RadixNode* node, std::span<const uint8_t> state);
  // Puts n_blocks loaded blocks of req's tokens from `start` (their KV bytes) into the tree
  // where they extend what it holds now; returns the tokens gained. A hybrid model's blocks
  // need `state`, the snapshot after the last one (empty: nothing is inserted).
  int64_t InsertLoadedBlocks(Request* req, int64_t start, std::span<const uint8_t> bytes,
                             int64_t n_blocks, std::span<const uint8_t> state = {});
  // Synchronous load: extends `match` (req's fresh match) with blocks read from disk now.
  void LoadFromDisk(Request* req, RadixCache::MatchResult* match);
  // Asynchronous load: sends req to the load queue if disk blocks extend its match; true if so.
  bool SubmitDiskLoad(Request* req, int64_t matched);
  void PollDiskLoads();             // inserts finished loads (each round, before admission)
  void DropDiskLoad(Request* req);  // req ends while its load runs: the result is dropped
  // With loads in flight: waits briefly for one (a round with nothing else to do); true then.
  bool WaitForDiskLoads();
  static constexpr int32_t kMaxDiskLoadAttempts = 4;

  // Grammar queue: moves requests whose grammar has compiled to waiting_ (or finishes them
  // with the compile error).
  void PollGrammarQueue();
  // Takes req's compiled grammar (its future is ready); true if that finished the request
  // (compile error, or the grammar's forced text ended it); else req is in waiting_.
  bool TakeGrammar(Request* req);
  int32_t LastSlot(const Request& req) const;

  // --- memory (scheduler_memory.cc) ---
  // Ensures the running requests each have their next slot and writes it to their rows;
  // evicts, retracts or (as a last resort) aborts to get there.
  void PrepareDecodes();
  int64_t DecodePagesNeeded() const;
  bool EnsureFreePages(int64_t pages);  // evicts as needed; true if available now
  void Retract(Request* req);
  void EvictTokens(int64_t tokens);
  // Sliding-window pool: free plus releasable windowed-KV tokens (INT64_MAX without one).
  int64_t SwaAvailableTokens() const;
  // Releases the windowed KV of running requests' own tokens that no window can see again.
  void ReleaseOutOfWindowKv();
  // Free plus evictable tokens of each pool during one admission pass (swa == full without
  // an SWA pool); the prefill budget is the smaller.
  struct AdmissionBudget {
    double full = 0;
    double swa = 0;
  };
  // Admission's lock (lock) or its undo on node; updates budget and returns the change to the
  // prefill budget.
  double LockForAdmission(RadixNode* node, uint64_t* swa_lock_id, bool lock,
                          AdmissionBudget* budget);
  // Allocates slots for tokens [kv_len, kv_len + n) of req and writes them to its row.
  bool AllocateExtend(Request* req, int64_t n);
  // --- reclaimable pins (scheduler_pins.cc) ---
  void PinReclaimable(uint64_t pin, std::span<const int32_t> ids, int32_t key_namespace);
  // Releases the oldest reclaimable pin; false if none. With a budget (admission), adds what
  // became evictable to it (*budget_change: the change to the prefill budget).
  bool ReclaimOldestPin(AdmissionBudget* budget, double* budget_change);
  void ReclaimAllPins();

  // --- timeouts (scheduler_pause.cc) ---
  // Finishes the waiting and running requests past config_.waiting_timeout_s /
  // running_timeout_s (no-op when both are 0). Once per Step.
  void AbortTimedOut();

  // --- state snapshots of a hybrid model (scheduler_snapshots.cc) ---
  // After CacheUnfinishedRequest: saves req's state at its tree node when kv_len ends one.
  void SnapshotAtNode(Request* req);
  // Before CacheFinishedRequest: an allocated id holding req's state after kv_len tokens, or
  // -1 (no snapshots, kv_len not page-aligned, none free, or the state not trusted).
  int32_t SnapshotForRelease(const Request& req);
  // At admission with a matched prefix: copies the snapshot at `node` into req's state slot.
  void ResumeFromSnapshot(const Request& req, const RadixNode* node);
  // Where req's prefill chunk [begin, end) of a hybrid model must end instead: at the next
  // multiple of hybrid_snapshot_interval after begin, or before it at req's snapshot_due
  // (end itself without snapshots).
  int64_t SnapshotChunkEnd(const Request& req, int64_t begin, int64_t end) const;
  // Set while a failed forward's requests are aborted: their state is half-advanced.
  bool state_untrusted_ = false;

  // --- admission (scheduler_admission.cc) ---
  void SchedulePrefills();
  // Whether this step runs only the decodes, a prefill of prefill_tokens tokens waiting
  // (scheduler/prefill_deferral.h); counts the deferral.
  bool DefersPrefill(int64_t prefill_tokens);
  // The most output tokens a running decode may still produce (clipped as the budgets are).
  int64_t DecodeStepsLeft() const;
  // Whether a waiting request may be admitted while a deferred prefill of head_tokens tokens
  // waits: its own prefill is not long, and that prefill would still be deferred with it
  // decoding too (its work is less, so shortest-remaining-work order puts it first).
  bool PassesDeferredHead(const Request& req, int64_t head_tokens) const;
  void RefreshPrefixMatches();
  void MatchWaiting(Request* req);
  bool IsHeldForSibling(const Request& req) const;

  // Adds the wall time of its scope to stats_.cache_op_seconds (wraps every cache_-> call that
  // touches the tree).
  class CacheOpTimer {
   public:
    explicit CacheOpTimer(SchedulerStats& stats)
        : stats_(stats), start_(std::chrono::steady_clock::now()) {}
    ~CacheOpTimer() {
      stats_.cache_op_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      ++stats_.cache_ops;
    }
    CacheOpTimer(const CacheOpTimer&) = delete;
    CacheOpTimer& operator=(const CacheOpTimer&) = delete;

   private:
    SchedulerStats& stats_;
    std::chrono::steady_clock::time_point start_;
  };

  // --- step (scheduler_step.cc) ---
  void ProcessResults();
  void ComputeInputLogprobs(Request* req, const PrefillChunk& chunk, size_t seq);
  // An embedding request's chunk: its hidden-state rows into the request's pooled vector.
  void PoolChunk(Request* req, const PrefillChunk& chunk, size_t seq);
  void SampleRows();
  // The sampling row of req over `logits` ([vocab], edited in place by the sampler).
  void FillSampleRow(Request* req, float* logits, BatchSamplingRow& row);
  // req->grammar_mask filled with the tokens req's matcher allows where it stands, over
  // BitmaskWords(max(vocab, the grammar's vocabulary)) words (tokens past the grammar's
  // vocabulary stay clear); returns its data. req must have a matcher.
  const int32_t* FillGrammarMask(Request* req, int64_t vocab);
  void OnTokenSampled(Request* req, BatchSamplingRow& row);

  // --- speculative decoding (scheduler_speculative.cc) ---
  bool MaySpeculate(const Request& req) const;
  // Nodes (root included) a draft may have at most.
  int32_t MaxDraftNodes() const;
  // After admission: drafts for the decodes that may speculate (n-gram trees, or draft-model
  // chains), their slots allocated. Fails only when the draft model's forward fails.
  Status PrepareDrafts();
  // After the forward: keeps the draft nodes req's sampler picks (row group `seq`), frees the
  // other nodes' slots.
  void VerifyDraft(Request* req, size_t seq);
  // Adds req's tokens not yet handed to the n-gram filler to this round's windows.
  void QueueNgramWindows(Request* req);
  // After a round's results: hands the round's windows to the filler (SubmitNgramWindows).
  void SubmitNgramWindows();
  // --- draft-model speculation (scheduler_draft_model.cc) ---
  // Grows the chains of draft_reqs_ (each up to its draft_limits_ nodes) with the draft
  // model's greedy tokens, one draft forward per step; clears draft_reqs_.
  Status DraftChains();
  // With speculative_eagle_topk > 1 (scheduler_draft_tree.cc): grows top-k trees instead,
  // each up to its draft_limits_ nodes and speculative_num_steps levels; clears draft_reqs_.
  Status DraftTrees();
  // One draft step of DraftTrees: runs the nodes of draft_nodes_ on the draft model (in
  // batches of its max_batch_tokens) and expands each with its logits.
  Status ExpandTreeFrontiers();
  // Runs batch_ (the target's forward of this round) on the draft model, without logits, so
  // its KV cache holds every token the target's does, in the same slots.
  Status MirrorOnDraftModel();

  // --- NEXTN speculation and a hybrid model's drafts (scheduler_nextn.cc) ---
  // The state slot holding req's linear-layer state after its kv_len tokens.
  int32_t StateSlotOf(const Request& req) const;
  // The checkpoint slot of request row `row` after new token `token` of a verified chain.
  int32_t CheckpointSlot(int32_t row, int32_t token) const;
  // A hybrid model: batch_'s drafted sequences get their state checkpoints.
  void AttachStateCheckpoints();
  // MirrorOnDraftModel for a NextN draft runner: each token beside the target's hidden state
  // of the position before it; keeps each sequence's last hidden state in its request.
  Status MirrorOnNextn();
  // The NextN input of req's draft root (its kept hidden state, or zeros) into `out` [h].
  void NextnRootHidden(const Request& req, float* out) const;
  // After VerifyDraft's walk of sequence `seq` (a chain of n nodes) kept `accepted` drafted
  // nodes: req's kept hidden state and (a hybrid model) its linear-layer state follow.
  void OnChainVerified(Request* req, size_t seq, int32_t n, int32_t accepted);

  // --- jump-forward (scheduler_jump_forward.cc) ---
  // After req (decoding) sampled a token its grammar accepted: if the grammar now forces
  // bytes, retokenizes the sampled token + forced text, hands the computed KV to the tree and
  // re-queues req as an extend of its new tokens (or finishes it); if the grammar can only end,
  // appends EOS and finishes it. True when it did either (the request's output is emitted).
  bool TryJumpForward(Request* req);
  // Before the first prefill (req waiting, no outputs): appends the text its grammar forces at
  // the start. True if that finished the request.
  bool JumpForwardAtStart(Request* req);
  // Appends an EOS the grammar accepts (not sampled) and finishes req; false if none exists.
  bool AppendUnsampledEos(Request* req);
  bool JumpForwardEnabled(const Request& req) const;
  // A jump: the tokens replacing the newest `replaced` (0 or 1) outputs, their text, the text
  // the grammar forced (the part that is new) and the matcher after them.
  struct JumpPlan {
    std::vector<int32_t> tokens;
    std::string text;
    grammar::Matcher matcher;
    std::string forced_text;
    size_t kept = 0;  // 1 when the replaced token is also the first new one
  };
  std::optional<JumpPlan> PlanJump(const Request& req, int32_t replaced) const;
  // Applies a plan to req's tokens, matcher, penalties, logprobs and stop checks; true if that
  // finished the request.
  bool ApplyJump(Request* req, int32_t replaced, JumpPlan plan);
  void AbortBatch(const std::string& message);

  SchedulerConfig config_;
  ModelRunner* runner_;
  const TokenTextCodec* codec_;
  OutputSink sink_;
  std::vector<int32_t> eog_token_ids_;
  int64_t context_length_;
  std::function<double()> clock_;

  KvPool pool_;
  ReqToTokenTable table_;
  std::unique_ptr<RadixCache> cache_;
  uint64_t tree_version_ = 1;  // bumped on every change to the tree's contents

  std::unordered_map<uint64_t, std::unique_ptr<Request>> requests_;  // every live request
  std::vector<Request*> waiting_;
  std::vector<Request*> grammar_queue_;  // kWaiting, grammar still compiling, in arrival order
  std::vector<Request*> running_;        // decoding
  Request* chunked_ = nullptr;           // the one request mid chunked prefill, if any
  uint64_t next_arrival_ = 0;
  bool paused_ = false;
  std::mt19937_64 rng_;
  double new_token_ratio_;

  // This round's work and the buffers reused across rounds.
  std::vector<Request*> decodes_;
  std::vector<PrefillChunk> chunks_;
  model::ForwardBatch batch_;
  model::ForwardOutput forward_out_;
  BatchSampler sampler_;
  std::vector<BatchSamplingRow> sample_rows_;
  std::vector<Request*> sample_reqs_;
  std::vector<size_t> sample_seqs_;  // sequence (output row group) of each sampled request
  std::vector<size_t> verify_reqs_;  // sequences (decodes_ indices) carrying a draft
  std::vector<Request*> order_scratch_;

  std::unique_ptr<spec::NgramFiller> ngram_;  // null: no n-gram speculation
  spec::NgramWindows ngram_windows_;          // collected this round, submitted at its end
  int64_t spec_batch_tokens_ = 0;  // this round's batch tokens before drafts (draft pacing)
  spec::StepCostFit step_cost_;    // decode forwards' seconds against tokens (draft pacing)
  StepTimes step_times_;           // forward passes on clock_ (prefill deferral)
  BatchSamplingRow spec_row_;
  ModelRunner* draft_runner_ = nullptr;  // null: no draft-model speculation
  std::vector<Request*> draft_reqs_;     // drafting with the draft model this round
  std::vector<int32_t> draft_limits_;    // their most draft nodes, root included
  std::vector<size_t> draft_active_;     // draft_reqs_ indices in this draft step's batch
  model::ForwardBatch draft_batch_;
  model::ForwardOutput draft_out_;
  int64_t nextn_hidden_ = 0;        // > 0: the draft runner is a NextN layer of this width
  bool state_checkpoints_ = false;  // a hybrid target verifying drafts: checkpoint its state
  int32_t first_checkpoint_ = 0;    // the first checkpoint state slot
  std::vector<int32_t> checkpoint_scratch_;  // batch_'s sequences' checkpoint slots
  std::vector<float> nextn_in_;              // the NextN inputs' hidden states of a forward
  std::vector<int64_t> hidden_offset_;       // batch_'s sequences' first rows in hidden
  // Top-k draft trees (DraftTrees): per draft_reqs_ entry, its builder and the scratch slot
  // of each candidate expanded (-1: none); per draft step sequence, its (draft_reqs_ index,
  // node), token and prefix slots.
  std::vector<spec::TopKTreeBuilder> tree_builders_;
  std::vector<std::vector<int32_t>> tree_slots_;
  std::vector<std::pair<size_t, int32_t>> draft_nodes_;
  std::vector<int32_t> draft_step_tokens_;
  std::vector<std::vector<int32_t>> draft_prefixes_;
  std::vector<int32_t> path_scratch_;

  SchedulerStats stats_;
  std::unique_ptr<DiskStore> disk_;   // null: no disk tier
  std::vector<uint8_t> disk_buffer_;  // synchronous loads' KV bytes, reused
  // Tree namespace -> its LoRA adapter's identity (RequestInput::lora_identity), learnt from
  // the requests: the release observer sees a node, not its request. Namespaces are never
  // reused for another adapter while the process runs. Empty: no adapter was seen, and the
  // tree's keys are plain token ids.
  std::unordered_map<int32_t, uint64_t> lora_identities_;
  std::vector<int32_t> disk_key_scratch_;  // a loaded run's namespaced key, reused
  struct PendingDiskLoad {
    Request* req = nullptr;
    int64_t start = 0;
  };
  std::unordered_map<uint64_t, PendingDiskLoad> disk_loads_;  // ticket -> load in flight
  uint64_t next_disk_ticket_ = 1;
  // pin id -> the node whose path it locks, and the lock's swa_lock_id.
  std::unordered_map<uint64_t, std::pair<RadixNode*, uint64_t>> pins_;
  // The reclaimable ones among them, oldest first (seq -> pin), and pin -> seq.
  std::map<uint64_t, uint64_t> reclaimable_by_seq_;
  std::unordered_map<uint64_t, uint64_t> reclaimable_seq_;
  uint64_t next_reclaim_seq_ = 0;
};

}  // namespace radixlm
