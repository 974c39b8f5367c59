// Scheduler: NEXTN speculation (the target model's own multi-token-prediction layer as the
// draft model, engine/nextn_runner.h), and the rollback of a hybrid model's linear-layer state
// after rejected drafts.
//
// NEXTN runs as draft-model speculation (scheduler_draft_model.cc: chains, verified as every
// draft is) with one difference: the NextN layer reads, beside each token at position p, the
// target's final-normed hidden state of position p - 1 (the state that predicted the token).
// So every target forward returns its hidden states (ForwardBatch::output_hidden), and its
// mirror on the NextN layer pairs each new token with the hidden state of the token before it:
// the previous forward's for a sequence's first new token (Request::nextn_hidden, kept per
// request at position nextn_hidden_pos; zeros where that is not the position before, e.g. a
// prefix resumed from the radix cache: a weaker draft, never another output). A draft chain's
// root pairs with the request's kept state; each drafted token with the NextN layer's own
// output hidden state of the step before (llama.cpp's draft-mtp does the same). The mirror of
// the verify forward then rewrites the drafted nodes' NextN K/V with the target's states.
// After verification the kept state is that of the last kept node.
//
// A hybrid target (linear layers, model/recurrent_state.h) advances its per-request state over
// every node of a verified chain, rejected ones included. So a drafted sequence also copies
// the state after each of its new tokens but the last into checkpoint slots (state slots
// [first_checkpoint_, ...), speculative_num_steps per request row), and after the walk the
// state after the last kept node is copied back into the request's slot (none when every node
// was kept). While the walk runs (a finish or jump-forward inside it releases the request's
// KV to the radix tree, with a snapshot of its state), Request::state_checkpoint names the
// checkpoint that holds the state after the nodes kept so far (StateSlotOf). Outputs are those
// of plain decoding: the state after the kept tokens is the one they would have produced.
#include <algorithm>
#include <cstring>

#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {

int32_t Scheduler::StateSlotOf(const Request& req) const {
  return req.state_checkpoint >= 0 ? req.state_checkpoint : req.cache.req_pool_index;
}

int32_t Scheduler::CheckpointSlot(int32_t row, int32_t token) const {
  return first_checkpoint_ + row * config_.speculative_num_steps + token;
}

void Scheduler::AttachStateCheckpoints() {
  if (!state_checkpoints_) return;
  checkpoint_scratch_.resize(decodes_.size() * spec::DraftTree::kMaxNodes);
  for (size_t s = 0; s < decodes_.size(); ++s) {
    const Request* req = decodes_[s];
    const auto n = static_cast<int32_t>(req->draft.size());
    if (n <= 1) continue;
    RADIXLM_CHECK_LE(n - 1, config_.speculative_num_steps);
    int32_t* slots = checkpoint_scratch_.data() + s * spec::DraftTree::kMaxNodes;
    // The state after the last node is the request's own: no checkpoint.
    for (int32_t t = 0; t + 1 < n; ++t) slots[t] = CheckpointSlot(req->cache.req_pool_index, t);
    slots[n - 1] = -1;
    batch_.sequences[s].state_checkpoints = std::span<const int32_t>(slots, n);
  }
}

void Scheduler::NextnRootHidden(const Request& req, float* out) const {
  const auto h = static_cast<size_t>(nextn_hidden_);
  if (req.nextn_hidden_pos == req.kv_len - 1 && req.nextn_hidden.size() == h) {
    std::memcpy(out, req.nextn_hidden.data(), h * sizeof(float));
  } else {
    std::fill_n(out, h, 0.0f);
  }
}

Status Scheduler::MirrorOnNextn() {
  const int64_t h = nextn_hidden_;
  const size_t n_seqs = batch_.sequences.size();
  RADIXLM_CHECK_EQ(forward_out_.hidden.size() % static_cast<size_t>(h), 0u);
  hidden_offset_.resize(n_seqs);
  int64_t rows = 0;
  for (size_t s = 0; s < n_seqs; ++s) {
    hidden_offset_[s] = rows;
    rows += static_cast<int64_t>(batch_.sequences[s].tokens.size());
  }
  RADIXLM_CHECK_EQ(rows * h, static_cast<int64_t>(forward_out_.hidden.size()));
  nextn_in_.resize(static_cast<size_t>(rows * h));
  draft_batch_.sequences = batch_.sequences;
  draft_batch_.output_hidden = false;
  for (size_t s = 0; s < n_seqs; ++s) {
    model::SequenceInput& seq = draft_batch_.sequences[s];
    Request* req = s < decodes_.size() ? decodes_[s] : chunks_[s - decodes_.size()].req;
    const auto n = static_cast<int64_t>(seq.tokens.size());
    const auto first = static_cast<int64_t>(seq.prefix_slots.size());
    float* in = nextn_in_.data() + hidden_offset_[s] * h;
    // Token i pairs with the hidden state of position first + i - 1.
    if (req->nextn_hidden_pos == first - 1 && std::ssize(req->nextn_hidden) == h) {
      std::memcpy(in, req->nextn_hidden.data(), static_cast<size_t>(h) * sizeof(float));
    } else {
      std::fill_n(in, h, 0.0f);
    }
    const float* out = forward_out_.hidden.data() + hidden_offset_[s] * h;
    std::memcpy(in + h, out, static_cast<size_t>((n - 1) * h) * sizeof(float));
    seq.nextn_hidden = std::span<const float>(in, static_cast<size_t>(n * h));
    seq.logits = model::LogitsMode::kNone;
    seq.lora = nullptr;
    seq.state_checkpoints = {};
    // The last new token's state (a verified chain's is corrected by OnChainVerified).
    req->nextn_hidden.assign(out + (n - 1) * h, out + n * h);
    req->nextn_hidden_pos = first + n - 1;
  }
  return draft_runner_->Forward(draft_batch_, &draft_out_);
}

void Scheduler::OnChainVerified(Request* req, size_t seq, int32_t n, int32_t accepted) {
  req->state_checkpoint = -1;
  // (A jump-forward inside the walk released the request's KV and row, its state snapshot
  // taken from the checkpoint: nothing to keep.)
  if (req->cache.req_pool_index < 0) return;
  if (nextn_hidden_ > 0 && req->state == RequestState::kDecoding) {
    const int64_t h = nextn_hidden_;
    const float* row = forward_out_.hidden.data() + (hidden_offset_[seq] + accepted) * h;
    req->nextn_hidden.assign(row, row + h);
    req->nextn_hidden_pos = req->kv_len - 1;
  }
  if (state_checkpoints_ && accepted + 1 < n) {
    const Status copied = runner_->CopyState(CheckpointSlot(req->cache.req_pool_index, accepted),
                                             req->cache.req_pool_index);
    RADIXLM_CHECK(copied.ok()) << copied.ToString();
  }
}

}  // namespace radixlm
