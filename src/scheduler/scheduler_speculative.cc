// Scheduler: speculative decoding with n-gram drafts (SGLang's NGRAM algorithm), and the
// verification that draft-model chains share (STANDALONE, scheduler_draft_model.cc: there the
// draft comes from DraftChains instead of the trie; everything below applies alike).
//
// The global n-gram trie is filled off the scheduler's critical path (spec/ngram_filler.h):
// at the end of each round (after verification) the scheduler copies each running request's
// new tokens, with the few before them that the new windows span, into one batch for the
// filler's thread, and a finishing request's last tokens go with it; a draft reads the trie
// under its mutex as it stands (it may lag the newest windows by a round or so: drafts depend
// on timing, outputs do not).
//
// Each round, after admission, every decoding request that may speculate (at least two tokens
// left) gets a draft tree from the trie; the draft's nodes take extra KV slots (only free ones:
// drafts never evict) and ride in the decode forward as one tree-masked sequence whose every node
// returns logits (model/forward_batch.h). Verification then walks the tree with the request's own
// sampler: the root's row is sampled exactly as a plain decode step would be; if the token
// drawn is a child of the node, that child's KV and logits are already computed, so it is
// kept and its row sampled next; the first token that is not a child ends the walk (it is the
// "bonus" token, the input of the next round). Every kept token was drawn by the request's
// sampler from the target model's logits after exactly the tokens before it, with the same
// seed and step as without speculation, so outputs are identical to plain decoding — greedy,
// seeded, penalties, logit bias, logprobs, stop conditions all included — and the token
// distribution is the model's (a drafted token is kept with the probability the model gives
// it, which is exact speculative sampling for a deterministic draft).
//
// Grammars (regex / JSON schema / EBNF): a constrained request's draft is walked with its
// matcher before verification (depth first, each node's token accepted and rolled back after
// its subtree), and nodes the grammar forbids are cut with their subtrees, so no slot or
// compute goes to them. Verification then samples each row under the grammar mask of the
// matcher as it stands after the tokens kept so far, and the matcher advances only over tokens
// the sampler picked (OnTokenSampled), never over drafted ones it did not: nothing to roll
// back. A sampled token that opens a jump-forward ends the walk (the request leaves decoding
// for its extend), and the nodes after it are freed with the rest.
//
// Kept nodes keep the slots they were computed in: the request's row is rewritten so position
// kv_len + d holds the slot of the kept node at depth d (page size 1, checked at startup), and
// the other draft slots go back to the pool. The radix tree only ever sees kept tokens.
//
// Adaptivity (so that speculation costs little where text does not repeat, or where the batch
// is large enough that verification competes with real work): spec/draft_pacing.h. A request
// backs off (skips drafting for 1, 2, 4, ... up to 16 rounds) after a draft that kept nothing
// or while the running mean of its drafts' kept share is under c(B) = B / (B + r) for the
// round's B batch tokens (about 0.11 for one sequence, 0.5 for eight with r = 8), then probes
// with a small draft. r is fitted to this server's own decode forwards (step_cost_: seconds
// against tokens, over the forwards without prefill chunks). A request's next draft has at
// most 2 * (kept + 1) nodes (between 2 and
// --speculative-num-draft-tokens); and one forward carries at most
// speculative_max_draft_tokens_per_batch drafted tokens over all requests.
#include <algorithm>
#include <array>

#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {
namespace {

// Cuts the draft nodes whose path from the root the grammar rejects (with their subtrees).
// The matcher stands after the root; it walks the tree depth first, accepting each node's token
// and rolling it back after its subtree, so it is unchanged on return.
int32_t PruneDraftForGrammar(grammar::Matcher& matcher, spec::DraftTree& draft) {
  const auto n = static_cast<int32_t>(draft.size());
  std::array<bool, spec::DraftTree::kMaxNodes> allowed{};
  allowed[0] = true;
  auto visit = [&](auto& self, int32_t node) -> void {
    for (int32_t child = node + 1; child < n; ++child) {
      if (draft.parent(child) != node || !matcher.AcceptToken(draft.token(child))) continue;
      allowed[child] = true;
      self(self, child);
      RADIXLM_CHECK_OK(matcher.Rollback(1));
    }
  };
  visit(visit, 0);
  return draft.Prune(std::span<const bool>(allowed.data(), draft.size()));
}

}  // namespace

bool Scheduler::MaySpeculate(const Request& req) const {
  return (ngram_ != nullptr || draft_runner_ != nullptr) && req.state == RequestState::kDecoding &&
         req.remaining_new_tokens() >= 2 &&
         (!req.matcher.has_value() || !req.matcher->IsTerminated());
}

int32_t Scheduler::MaxDraftNodes() const {
  if (draft_runner_ == nullptr) return config_.ngram.num_draft_tokens;
  return config_.speculative_eagle_topk > 1 ? config_.speculative_num_draft_tokens
                                            : config_.speculative_num_steps + 1;
}

Status Scheduler::PrepareDrafts() {
  if (ngram_ == nullptr && draft_runner_ == nullptr) return Status::Ok();
  int64_t batch_tokens = static_cast<int64_t>(decodes_.size());
  for (const PrefillChunk& chunk : chunks_) batch_tokens += chunk.end - chunk.begin;
  int64_t budget = std::min<int64_t>(config_.speculative_max_draft_tokens_per_batch,
                                     runner_->max_batch_tokens() - batch_tokens);
  spec_batch_tokens_ = config_.speculative_pacing ? batch_tokens : 0;
  for (Request* req : decodes_) {
    req->draft.Reset(req->token_ids.back());
    if (!MaySpeculate(*req)) continue;
    ++req->spec_verify_ct;
    ++stats_.spec_verify_steps;
    if (!req->spec_pacer.MayDraft()) continue;  // backing off after drafts that did not pay
    if (req->draft_budget == 0) req->draft_budget = MaxDraftNodes();
    const int64_t max_nodes =
        std::min({static_cast<int64_t>(req->draft_budget), req->remaining_new_tokens(), budget + 1,
                  context_length_ - req->kv_len});
    if (max_nodes < 2) continue;
    if (draft_runner_ != nullptr) {  // chains or trees grown below, with their slots
      draft_reqs_.push_back(req);
      draft_limits_.push_back(static_cast<int32_t>(max_nodes));
      budget -= max_nodes - 1;
      continue;
    }
    ngram_->Draft(req->token_ids, static_cast<int>(max_nodes), &req->draft);
    if (req->matcher.has_value() && req->draft.size() > 1) {
      stats_.spec_grammar_pruned_tokens += PruneDraftForGrammar(*req->matcher, req->draft);
    }
    const auto drafted = static_cast<int64_t>(req->draft.size()) - 1;
    if (drafted == 0) continue;
    const int32_t root_slot = table_.Row(req->cache.req_pool_index)[req->kv_len];
    std::optional<std::vector<int32_t>> slots;
    if (pool_.available() >= drafted) slots = pool_.AllocateExtend(root_slot, drafted);
    if (!slots.has_value()) {  // no free slots: this round decodes plainly
      req->draft.Reset(req->token_ids.back());
      continue;
    }
    table_.Write(req->cache.req_pool_index, req->kv_len + 1, *slots);
    budget -= drafted;
  }
  if (draft_reqs_.empty()) return Status::Ok();
  return config_.speculative_eagle_topk > 1 ? DraftTrees() : DraftChains();
}

void Scheduler::QueueNgramWindows(Request* req) {
  if (ngram_ == nullptr) return;
  // Windows never reach into an image: its ids are not tokens to draft.
  size_t skip = 0;
  if (!req->in.images.empty()) {
    skip = static_cast<size_t>(req->in.images.back().begin + req->in.images.back().n);
  }
  const std::span<const int32_t> all = std::span<const int32_t>(req->token_ids).subspan(skip);
  ngram_windows_.Append(all, req->ngram_added > skip ? req->ngram_added - skip : 0,
                        config_.ngram.max_trie_depth);
  req->ngram_added = req->token_ids.size();
}

void Scheduler::SubmitNgramWindows() {
  if (ngram_ == nullptr) return;
  for (Request* req : running_) QueueNgramWindows(req);
  if (ngram_windows_.empty()) return;
  ngram_->Submit(std::move(ngram_windows_));
  ngram_windows_ = spec::NgramWindows();
}

void Scheduler::FlushNgramFills() {
  if (ngram_ == nullptr) return;
  SubmitNgramWindows();
  ngram_->Flush();
}

void Scheduler::VerifyDraft(Request* req, size_t seq) {
  // A copy: finishing the request (a stop inside the draft) destroys it and its draft.
  const spec::DraftTree draft = req->draft;
  const uint64_t id = req->in.id;
  const auto n = static_cast<int32_t>(draft.size());
  RADIXLM_CHECK_EQ(forward_out_.row_count[seq], n);
  const int64_t root_pos = req->kv_len - 1;  // ProcessResults counted the root's KV
  const int32_t row_index = req->cache.req_pool_index;
  std::array<int32_t, spec::DraftTree::kMaxNodes> node_slot;
  for (int32_t i = 0; i < n; ++i) node_slot[i] = table_.Row(row_index)[root_pos + i];
  uint64_t kept = 1;
  int32_t node = 0, accepted = 0;
  bool live = true;
  while (true) {
    // A finish or jump-forward here snapshots the state after the nodes kept so far.
    if (state_checkpoints_) {
      req->state_checkpoint = node + 1 < n ? CheckpointSlot(row_index, node) : -1;
    }
    FillSampleRow(req,
                  forward_out_.logits.data() +
                      (forward_out_.row_offset[seq] + node) * forward_out_.vocab_size,
                  spec_row_);
    sampler_.SampleAll(std::span<BatchSamplingRow>(&spec_row_, 1));
    const int32_t token = spec_row_.result.token;
    OnTokenSampled(req, spec_row_);
    live = requests_.count(id) != 0;
    if (!live || req->state != RequestState::kDecoding) break;
    const int32_t child = draft.Child(node, token);
    if (child < 0) break;
    // The child's KV is computed: it becomes the KV of position kv_len.
    table_.Write(row_index, req->kv_len, std::span<const int32_t>(&node_slot[child], 1));
    ++req->kv_len;
    kept |= uint64_t{1} << child;
    node = child;
    ++accepted;
  }
  // The other nodes' slots: not in the row's first kv_len positions, nor in the tree.
  std::array<int32_t, spec::DraftTree::kMaxNodes> rejected;
  size_t n_rejected = 0;
  for (int32_t i = 1; i < n; ++i) {
    if (((kept >> i) & 1) == 0) rejected[n_rejected++] = node_slot[i];
  }
  if (n_rejected > 0) pool_.Free(std::span<const int32_t>(rejected.data(), n_rejected));
  stats_.spec_drafted_tokens += n - 1;
  stats_.spec_accepted_tokens += accepted;
  stats_.decode_tokens += accepted;
  if (!live) return;
  if (state_checkpoints_ || nextn_hidden_ > 0) OnChainVerified(req, seq, n, accepted);
  req->drafted_tokens += n - 1;
  req->accepted_tokens += accepted;
  req->draft_budget = std::clamp(2 * (accepted + 1), 2, MaxDraftNodes());
  req->spec_pacer.OnVerified(n - 1, accepted, spec_batch_tokens_, step_cost_.WeightPassTokens());
  req->draft.Reset(req->token_ids.back());
}

}  // namespace radixlm
