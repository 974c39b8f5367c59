// Scheduler: draft-model speculation (--speculative-algorithm STANDALONE).
//
// A second, smaller model with the target's vocabulary (Scheduler::Create's draft_runner)
// proposes a chain of up to speculative_num_steps tokens per drafting request: its greedy
// argmax at each step, under the request's grammar mask when it has one (with
// --speculative-eagle-topk > 1, a top-k tree instead: scheduler_draft_tree.cc). The chain is a
// DraftTree whose nodes each have one child, verified exactly as n-gram drafts are
// (scheduler_speculative.cc): outputs do not change, only the number of forward passes.
//
// The draft model's KV cache is indexed by the target pool's slots: its runner has as many
// slots as the target's, and every target forward is mirrored on the draft model (the same
// sequences into the same slots, no logits; MirrorOnDraftModel). So every slot holding a
// token's target KV also holds its draft KV, and whatever the scheduler does with slots — prefixes
// shared through the radix tree, retraction and resumption, jump-forward extends, eviction —
// carries the draft KV along with no bookkeeping of its own. Drafting a chain of k tokens
// takes k draft forwards of one token per drafting request: step j feeds node j (the root,
// then the tokens drafted so far) into the slot the verify forward will give that node and
// reads node j + 1 off the logits. The last node's draft KV comes from the mirror of the
// verify forward; a node the target rejects loses its slot, draft KV included.
//
// Cost: the draft model computes every token the target computes, plus k tokens per drafting
// request and round. Drafts only propose: no output depends on the draft model or its KV.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {
namespace {

// The largest logit among the tokens the mask allows (all when mask is null), ties to the
// lowest id; -1 when none is allowed or no logit is finite.
int32_t ArgmaxAllowed(const float* logits, int32_t vocab, const int32_t* mask) {
  int32_t best = -1;
  float best_logit = 0;
  for (int32_t t = 0; t < vocab; ++t) {
    if (mask != nullptr && ((mask[t >> 5] >> (t & 31)) & 1) == 0) continue;
    const float l = logits[t];
    if (!(l > -std::numeric_limits<float>::infinity())) continue;  // -inf or NaN
    if (best < 0 || l > best_logit) {
      best = t;
      best_logit = l;
    }
  }
  return best;
}

}  // namespace

Status Scheduler::DraftChains() {
  const int32_t vocab = draft_runner_->vocab_size();
  // NEXTN (scheduler_nextn.cc): each chain's hidden-state input of its next step.
  const int64_t h = nextn_hidden_;
  nextn_in_.resize(draft_reqs_.size() * static_cast<size_t>(h));
  for (size_t i = 0; h > 0 && i < draft_reqs_.size(); ++i) {
    NextnRootHidden(*draft_reqs_[i], nextn_in_.data() + i * h);
  }
  draft_batch_.output_hidden = h > 0;
  Status status = Status::Ok();
  for (int32_t step = 0; status.ok(); ++step) {
    draft_batch_.sequences.clear();
    draft_active_.clear();
    for (size_t i = 0; i < draft_reqs_.size(); ++i) {
      Request* req = draft_reqs_[i];
      // A chain that did not grow last step, or is as long as it may be, is done.
      if (static_cast<int32_t>(req->draft.size()) != step + 1 ||
          static_cast<int32_t>(req->draft.size()) >= draft_limits_[i]) {
        continue;
      }
      const std::span<const int32_t> row = table_.Row(req->cache.req_pool_index);
      model::SequenceInput seq;
      seq.tokens = req->draft.tokens().subspan(step, 1);
      seq.new_slots = row.subspan(req->kv_len + step, 1);
      seq.prefix_slots = row.first(req->kv_len + step);
      seq.logits = model::LogitsMode::kLast;
      if (h > 0) seq.nextn_hidden = std::span<const float>(nextn_in_.data() + i * h, h);
      draft_batch_.sequences.push_back(seq);
      draft_active_.push_back(i);
    }
    if (draft_active_.empty()) break;
    status = draft_runner_->Forward(draft_batch_, &draft_out_);
    if (!status.ok()) break;
    for (size_t s = 0; s < draft_active_.size(); ++s) {
      Request* req = draft_reqs_[draft_active_[s]];
      if (h > 0) {  // the layer's own output state goes with the token drafted from it
        std::memcpy(nextn_in_.data() + draft_active_[s] * h, draft_out_.hidden.data() + s * h,
                    static_cast<size_t>(h) * sizeof(float));
      }
      // The matcher stands after the chain drafted so far.
      const int32_t* mask = req->matcher.has_value() ? FillGrammarMask(req, vocab) : nullptr;
      const int32_t token = ArgmaxAllowed(draft_out_.LastRow(s), vocab, mask);
      if (token < 0 || pool_.available() < 1) continue;
      if (req->matcher.has_value() && !req->matcher->AcceptToken(token)) continue;
      const int32_t row_index = req->cache.req_pool_index;
      const int32_t last_slot = table_.Row(row_index)[req->kv_len + step];
      std::optional<std::vector<int32_t>> slot = pool_.AllocateExtend(last_slot, 1);
      if (!slot.has_value()) {
        if (req->matcher.has_value()) {
          RADIXLM_CHECK_OK(req->matcher->Rollback(1));
        }
        continue;
      }
      table_.Write(row_index, req->kv_len + step + 1, *slot);
      req->draft.Add(step, token);
    }
  }
  // The matchers walked the chains; verification starts from where they stood.
  for (Request* req : draft_reqs_) {
    if (req->matcher.has_value()) {
      RADIXLM_CHECK_OK(req->matcher->Rollback(static_cast<int32_t>(req->draft.size()) - 1));
    }
  }
  draft_reqs_.clear();
  draft_limits_.clear();
  return status;
}

Status Scheduler::MirrorOnDraftModel() {
  if (nextn_hidden_ > 0) return MirrorOnNextn();
  draft_batch_.sequences = batch_.sequences;
  draft_batch_.output_hidden = false;
  for (model::SequenceInput& seq : draft_batch_.sequences) {
    seq.logits = model::LogitsMode::kNone;
    seq.lora = nullptr;  // adapters fit the target model's matrices, not the draft's
    seq.state_checkpoints = {};
  }
  return draft_runner_->Forward(draft_batch_, &draft_out_);
}

}  // namespace radixlm
