// Scheduler: draft-model speculation with top-k trees (--speculative-algorithm STANDALONE
// --speculative-eagle-topk K, K > 1).
//
// The tree is grown by spec::TopKTreeBuilder, one draft-model step per level: step 0 runs the
// root (into its own slot, as a chain's step 0 does), step s runs the frontier nodes of depth
// s, each a one-token sequence of the draft batch whose prefix is the request's row up to
// kv_len, the root's slot and the slots of the node's ancestors, so it is at position
// kv_len + s and sees exactly its path. Frontier nodes get scratch slots for their draft KV
// while the tree grows (only free slots: drafts never evict; a node that finds none is not
// expanded). A constrained request's nodes are expanded under the grammar mask after their
// path (the matcher walks the path and rolls back), so every drafted token is one its grammar
// allows.
//
// Once grown, the scratch slots go back to the pool and the chosen tree (Build: the greedy
// chain, then the best-scoring other candidates) takes fresh slots, row positions kv_len + 1,
// ... in node order, as an n-gram tree does: the verify forward computes every node's target
// KV, and its mirror on the draft model every node's draft KV, so nothing computed while
// drafting needs to survive. Verification and everything after it are those of every draft
// (scheduler_speculative.cc); outputs do not depend on the draft.
#include <algorithm>
#include <optional>
#include <vector>

#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {

Status Scheduler::DraftTrees() {
  const size_t n_reqs = draft_reqs_.size();
  if (tree_builders_.size() < n_reqs) tree_builders_.resize(n_reqs);
  if (tree_slots_.size() < n_reqs) tree_slots_.resize(n_reqs);
  for (size_t i = 0; i < n_reqs; ++i) {
    const int32_t depth = std::min(config_.speculative_num_steps, draft_limits_[i] - 1);
    tree_builders_[i].Reset(draft_reqs_[i]->draft.token(0), config_.speculative_eagle_topk, depth);
    tree_slots_[i].clear();
  }
  Status status = Status::Ok();
  while (status.ok()) {
    draft_nodes_.clear();
    for (size_t i = 0; i < n_reqs; ++i) {
      for (int32_t node : tree_builders_[i].frontier()) draft_nodes_.emplace_back(i, node);
    }
    if (draft_nodes_.empty()) break;
    status = ExpandTreeFrontiers();
    if (!status.ok()) break;
    for (size_t i = 0; i < n_reqs; ++i) {
      spec::TopKTreeBuilder& builder = tree_builders_[i];
      builder.NextStep();
      std::vector<int32_t>& slots = tree_slots_[i];
      slots.resize(builder.candidates(), -1);
      const Request* req = draft_reqs_[i];
      const int32_t root_slot = table_.Row(req->cache.req_pool_index)[req->kv_len];
      size_t got = 0;
      for (; got < builder.frontier().size(); ++got) {
        if (pool_.available() < 1) break;
        std::optional<std::vector<int32_t>> slot = pool_.AllocateExtend(root_slot, 1);
        if (!slot.has_value()) break;
        slots[builder.frontier()[got]] = (*slot)[0];
      }
      builder.TruncateFrontier(got);
    }
  }
  // Scratch slots back to the pool; the chosen trees take fresh ones.
  for (size_t i = 0; i < n_reqs; ++i) {
    std::vector<int32_t>& slots = tree_slots_[i];
    slots.erase(std::remove(slots.begin(), slots.end(), -1), slots.end());
    if (!slots.empty()) pool_.Free(slots);
    slots.clear();
  }
  for (size_t i = 0; i < n_reqs && status.ok(); ++i) {
    Request* req = draft_reqs_[i];
    const auto free_nodes = 1 + std::min<int64_t>(pool_.available(), draft_limits_[i] - 1);
    tree_builders_[i].Build(static_cast<int32_t>(free_nodes), &req->draft);
    const auto drafted = static_cast<int64_t>(req->draft.size()) - 1;
    if (drafted == 0) continue;
    const int32_t row_index = req->cache.req_pool_index;
    const int32_t root_slot = table_.Row(row_index)[req->kv_len];
    std::optional<std::vector<int32_t>> slots = pool_.AllocateExtend(root_slot, drafted);
    if (!slots.has_value()) {
      req->draft.Reset(req->token_ids.back());
      continue;
    }
    table_.Write(row_index, req->kv_len + 1, *slots);
  }
  draft_reqs_.clear();
  draft_limits_.clear();
  return status;
}

Status Scheduler::ExpandTreeFrontiers() {
  const int32_t vocab = draft_runner_->vocab_size();
  const auto max_tokens =
      static_cast<size_t>(std::max<int64_t>(1, draft_runner_->max_batch_tokens()));
  for (size_t begin = 0; begin < draft_nodes_.size(); begin += max_tokens) {
    const size_t n = std::min(draft_nodes_.size() - begin, max_tokens);
    // Tokens and prefixes first: the sequences' spans point into them.
    draft_step_tokens_.resize(n);
    if (draft_prefixes_.size() < n) draft_prefixes_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const auto [i, node] = draft_nodes_[begin + k];
      const spec::TopKTreeBuilder& builder = tree_builders_[i];
      const Request* req = draft_reqs_[i];
      const std::span<const int32_t> row = table_.Row(req->cache.req_pool_index);
      draft_step_tokens_[k] = builder.token(node);
      std::vector<int32_t>& prefix = draft_prefixes_[k];
      prefix.assign(row.begin(), row.begin() + req->kv_len);
      if (node == spec::TopKTreeBuilder::kRoot) continue;
      prefix.push_back(row[req->kv_len]);  // the root
      const size_t ancestors_at = prefix.size();
      for (int32_t up = builder.parent(node); up != spec::TopKTreeBuilder::kRoot;
           up = builder.parent(up)) {
        prefix.push_back(tree_slots_[i][up]);
      }
      std::reverse(prefix.begin() + static_cast<std::ptrdiff_t>(ancestors_at), prefix.end());
    }
    draft_batch_.sequences.clear();
    for (size_t k = 0; k < n; ++k) {
      const auto [i, node] = draft_nodes_[begin + k];
      const Request* req = draft_reqs_[i];
      model::SequenceInput seq;
      seq.tokens = std::span<const int32_t>(&draft_step_tokens_[k], 1);
      seq.new_slots = node == spec::TopKTreeBuilder::kRoot
                          ? table_.Row(req->cache.req_pool_index).subspan(req->kv_len, 1)
                          : std::span<const int32_t>(&tree_slots_[i][node], 1);
      seq.prefix_slots = draft_prefixes_[k];
      seq.logits = model::LogitsMode::kLast;
      draft_batch_.sequences.push_back(seq);
    }
    RADIXLM_RETURN_IF_ERROR(draft_runner_->Forward(draft_batch_, &draft_out_));
    for (size_t k = 0; k < n; ++k) {
      const auto [i, node] = draft_nodes_[begin + k];
      Request* req = draft_reqs_[i];
      const int32_t* mask = nullptr;
      if (req->matcher.has_value()) {  // the mask after the node's path
        tree_builders_[i].Path(node, &path_scratch_);
        int32_t walked = 0;
        while (walked < static_cast<int32_t>(path_scratch_.size()) &&
               req->matcher->AcceptToken(path_scratch_[walked])) {
          ++walked;
        }
        const bool whole_path = walked == static_cast<int32_t>(path_scratch_.size());
        if (whole_path) mask = FillGrammarMask(req, vocab);
        if (walked > 0) {
          RADIXLM_CHECK_OK(req->matcher->Rollback(walked));
        }
        if (!whole_path) continue;  // cannot happen: every node was drafted under its mask
      }
      tree_builders_[i].Expand(node, draft_out_.LastRow(k), vocab, mask);
    }
  }
  return Status::Ok();
}

}  // namespace radixlm
