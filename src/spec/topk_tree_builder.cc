#include "spec/topk_tree_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/check.h"

namespace radixlm::spec {

void TopKTreeBuilder::Reset(int32_t root_token, int32_t topk, int32_t max_depth) {
  RADIXLM_CHECK_GE(topk, 1);
  root_token_ = root_token;
  topk_ = topk;
  max_depth_ = max_depth;
  step_ = 0;
  nodes_.clear();
  step_nodes_.clear();
  frontier_.clear();
  if (max_depth_ >= 1) frontier_.push_back(kRoot);
}

void TopKTreeBuilder::TruncateFrontier(size_t n) {
  if (n < frontier_.size()) frontier_.resize(n);
}

void TopKTreeBuilder::Expand(int32_t node, const float* logits, int32_t vocab,
                             const int32_t* mask) {
  auto allowed = [&](int32_t t) {
    return mask == nullptr || ((static_cast<uint32_t>(mask[t >> 5]) >> (t & 31)) & 1u) != 0;
  };
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float max_logit = kNegInf;
  for (int32_t t = 0; t < vocab; ++t) {
    if (allowed(t) && logits[t] > max_logit) max_logit = logits[t];  // NaN never compares
  }
  if (!(max_logit > kNegInf) || std::isinf(max_logit)) return;
  // The log-softmax over the allowed tokens, and their top-k (ties to the lower id).
  double sum = 0;
  picked_.clear();
  const auto k = static_cast<size_t>(topk_);
  for (int32_t t = 0; t < vocab; ++t) {
    const float l = logits[t];
    if (!(l > kNegInf) || !allowed(t)) continue;
    sum += std::exp(static_cast<double>(l) - max_logit);
    if (picked_.size() == k && !(l > logits[picked_.back()])) continue;
    if (picked_.size() == k) picked_.pop_back();
    auto at = picked_.end();
    while (at != picked_.begin() && l > logits[*(at - 1)]) --at;
    picked_.insert(at, t);
  }
  const double log_sum = static_cast<double>(max_logit) + std::log(sum);
  const float base = score(node);
  const int32_t depth = this->depth(node) + 1;
  const bool parent_greedy = node == kRoot || nodes_[node].greedy;
  for (size_t i = 0; i < picked_.size(); ++i) {
    const int32_t t = picked_[i];
    const auto log_prob = static_cast<float>(std::min(0.0, logits[t] - log_sum));
    step_nodes_.push_back(static_cast<int32_t>(nodes_.size()));
    nodes_.push_back({t, node, depth, base + log_prob, parent_greedy && i == 0});
  }
}

void TopKTreeBuilder::NextStep() {
  ++step_;
  frontier_.clear();
  if (step_ < max_depth_) {
    // The greedy node first, then the best others (ties to the earlier candidate).
    order_ = step_nodes_;
    std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      if (nodes_[a].greedy != nodes_[b].greedy) return nodes_[a].greedy;
      return nodes_[a].score > nodes_[b].score;
    });
    const size_t take = std::min(order_.size(), static_cast<size_t>(topk_));
    frontier_.assign(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(take));
  }
  step_nodes_.clear();
}

void TopKTreeBuilder::Build(int32_t max_nodes, DraftTree* out) {
  out->Reset(root_token_);
  const auto n = static_cast<int32_t>(nodes_.size());
  order_.resize(n);
  for (int32_t i = 0; i < n; ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    if (nodes_[a].greedy != nodes_[b].greedy) return nodes_[a].greedy;
    return nodes_[a].score > nodes_[b].score;
  });
  const auto take = std::clamp(max_nodes - 1, 0, n);
  std::vector<int32_t>& tree_index = picked_;  // per candidate: its node in `out`, or -1
  tree_index.assign(n, -1);
  for (int32_t i = 0; i < take; ++i) tree_index[order_[i]] = 0;  // selected
  for (int32_t c = 0; c < n; ++c) {
    if (tree_index[c] < 0) continue;
    const int32_t parent = nodes_[c].parent == kRoot ? 0 : tree_index[nodes_[c].parent];
    // A parent left out takes the child with it (cannot happen with consistent scores).
    tree_index[c] = parent < 0 ? -1 : out->Add(parent, nodes_[c].token);
  }
}

void TopKTreeBuilder::Path(int32_t node, std::vector<int32_t>* tokens) const {
  tokens->clear();
  for (int32_t c = node; c != kRoot; c = nodes_[c].parent) tokens->push_back(nodes_[c].token);
  std::reverse(tokens->begin(), tokens->end());
}

}  // namespace radixlm::spec
