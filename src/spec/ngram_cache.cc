#include "spec/ngram_cache.h"

#include <algorithm>
#include <queue>
#include <tuple>

#include "util/check.h"

namespace radixlm::spec {

Status NgramConfig::Validate() const {
  if (num_draft_tokens < 2 || num_draft_tokens > DraftTree::kMaxNodes) {
    return InvalidArgument("--speculative-num-draft-tokens must be in [2, " +
                           std::to_string(DraftTree::kMaxNodes) + "], got " +
                           std::to_string(num_draft_tokens));
  }
  if (min_bfs_breadth < 1 || max_bfs_breadth < min_bfs_breadth) {
    return InvalidArgument(
        "--speculative-ngram-min-bfs-breadth must be >= 1 and <= "
        "--speculative-ngram-max-bfs-breadth");
  }
  if (max_trie_depth < 2 || max_trie_depth > 1024) {
    return InvalidArgument("--speculative-ngram-max-trie-depth must be in [2, 1024], got " +
                           std::to_string(max_trie_depth));
  }
  if (capacity < 4 * max_trie_depth) {
    return InvalidArgument("--speculative-ngram-capacity must be at least 4 x the trie depth (" +
                           std::to_string(4 * max_trie_depth) + " nodes)");
  }
  return Status::Ok();
}

StatusOr<NgramMatchType> ParseNgramMatchType(const std::string& name) {
  if (name == "BFS") return NgramMatchType::kBfs;
  if (name == "PROB") return NgramMatchType::kProb;
  return InvalidArgument("--speculative-ngram-match-type must be BFS or PROB, got '" + name + "'");
}

NgramCache::NgramCache(const NgramConfig& config) : config_(config) { nodes_.emplace_back(); }

int32_t NgramCache::FindChild(int32_t node, int32_t token) const {
  const auto it = child_.find(Key(node, token));
  return it == child_.end() ? -1 : it->second;
}

int32_t NgramCache::GetOrAddChild(int32_t node, int32_t token) {
  const int32_t found = FindChild(node, token);
  if (found >= 0) return found;
  int32_t i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
    nodes_[i] = Node{};
  } else {
    i = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[i].token = token;
  nodes_[i].parent = node;
  nodes_[node].children.push_back(i);
  child_.emplace(Key(node, token), i);
  ++live_nodes_;
  Touch(i);
  return i;
}

void NgramCache::Unlink(int32_t i) {
  Node& n = nodes_[i];
  if (n.lru_prev >= 0) {
    nodes_[n.lru_prev].lru_next = n.lru_next;
  } else if (lru_head_ == i) {
    lru_head_ = n.lru_next;
  }
  if (n.lru_next >= 0) {
    nodes_[n.lru_next].lru_prev = n.lru_prev;
  } else if (lru_tail_ == i) {
    lru_tail_ = n.lru_prev;
  }
  n.lru_prev = n.lru_next = -1;
}

void NgramCache::Touch(int32_t i) {
  if (i == kRoot) return;
  if (lru_head_ == i) return;
  Unlink(i);
  nodes_[i].lru_next = lru_head_;
  if (lru_head_ >= 0) nodes_[lru_head_].lru_prev = i;
  lru_head_ = i;
  if (lru_tail_ < 0) lru_tail_ = i;
}

void NgramCache::EvictToCapacity() {
  while (live_nodes_ > config_.capacity && lru_tail_ >= 0) {
    const int32_t i = lru_tail_;
    Node& n = nodes_[i];
    RADIXLM_DCHECK(n.children.empty()) << "the least recent node is a leaf";
    Unlink(i);
    std::vector<int32_t>& siblings = nodes_[n.parent].children;
    siblings.erase(std::find(siblings.begin(), siblings.end(), i));
    child_.erase(Key(n.parent, n.token));
    n = Node{};
    free_.push_back(i);
    --live_nodes_;
  }
}

void NgramCache::Add(std::span<const int32_t> tokens, size_t old_len) {
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t depth = config_.max_trie_depth;
  const auto old = static_cast<int64_t>(std::min(old_len, tokens.size()));
  if (old == n) return;
  // The new windows (start i, length d) are those ending past old: i + d > old.
  for (int64_t i = std::max<int64_t>(0, old + 1 - depth); i < n; ++i) {
    path_.clear();
    int32_t node = kRoot;
    for (int64_t d = 1; d <= depth && i + d <= n; ++d) {
      node = GetOrAddChild(node, tokens[i + d - 1]);
      if (i + d > old) ++nodes_[node].count;
      path_.push_back(node);
    }
    // Deepest first, so parents stay more recent than their children.
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) Touch(*it);
    EvictToCapacity();
  }
}

int32_t NgramCache::MatchSuffix(std::span<const int32_t> context, int longest, int* length) {
  const auto n = static_cast<int64_t>(context.size());
  for (int64_t len = std::min<int64_t>({n, longest, config_.max_trie_depth - 1}); len >= 1; --len) {
    int32_t node = kRoot;
    for (int64_t k = n - len; k < n && node >= 0; ++k) node = FindChild(node, context[k]);
    if (node >= 0 && !nodes_[node].children.empty()) {
      *length = static_cast<int>(len);
      for (int32_t up = node; up != kRoot; up = nodes_[up].parent) Touch(up);
      return node;
    }
  }
  *length = 0;
  return -1;
}

void NgramCache::Draft(std::span<const int32_t> tokens, int max_nodes, DraftTree* out) {
  RADIXLM_CHECK(!tokens.empty());
  out->Reset(tokens.back());
  max_nodes = std::min({max_nodes, config_.num_draft_tokens, DraftTree::kMaxNodes});
  if (max_nodes < 2) return;
  // A trie path holds at most max_trie_depth tokens, so a match of length L leaves at most
  // max_trie_depth - L tokens to draft: the match is kept short enough for the whole budget.
  const int longest = std::max(1, config_.max_trie_depth - (max_nodes - 1));
  int match_len = 0;
  const int32_t from = MatchSuffix(tokens, longest, &match_len);
  if (from < 0) return;
  if (config_.match_type == NgramMatchType::kProb) {
    DraftProb(from, max_nodes, out);
  } else {
    DraftBfs(from, match_len, max_nodes, out);
  }
}

void NgramCache::DraftBfs(int32_t from, int match_len, int max_nodes, DraftTree* out) {
  const int lo = config_.min_bfs_breadth, hi = config_.max_bfs_breadth;
  const int longest = std::max(1, config_.max_trie_depth - 2);
  const int first_breadth = std::clamp(hi - (hi - lo) * (match_len - 1) / longest, lo, hi);
  std::queue<std::pair<int32_t, int32_t>> frontier;  // (trie node, tree node)
  frontier.emplace(from, 0);
  std::vector<int32_t> kids;
  while (!frontier.empty() && static_cast<int>(out->size()) < max_nodes) {
    const auto [trie_node, tree_node] = frontier.front();
    frontier.pop();
    const int breadth = tree_node == 0 ? first_breadth : lo;
    kids = nodes_[trie_node].children;
    const auto take = std::min<size_t>(kids.size(), static_cast<size_t>(breadth));
    std::partial_sort(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(take), kids.end(),
                      [&](int32_t a, int32_t b) {
                        return std::tie(nodes_[b].count, nodes_[a].token) <
                               std::tie(nodes_[a].count, nodes_[b].token);
                      });
    for (size_t k = 0; k < take && static_cast<int>(out->size()) < max_nodes; ++k) {
      const int32_t added = out->Add(tree_node, nodes_[kids[k]].token);
      if (added < 0) return;
      frontier.emplace(kids[k], added);
    }
  }
}

void NgramCache::DraftProb(int32_t from, int max_nodes, DraftTree* out) {
  // (path probability, trie node, tree parent); ties to the lower token for determinism.
  using Candidate = std::tuple<double, int32_t, int32_t>;
  auto worse = [&](const Candidate& a, const Candidate& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
    return nodes_[std::get<1>(a)].token > nodes_[std::get<1>(b)].token;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  auto push_children = [&](int32_t trie_node, int32_t tree_node, double prob) {
    int64_t total = 0;
    for (int32_t c : nodes_[trie_node].children) total += nodes_[c].count;
    if (total <= 0) return;
    for (int32_t c : nodes_[trie_node].children) {
      heap.emplace(prob * static_cast<double>(nodes_[c].count) / static_cast<double>(total), c,
                   tree_node);
    }
  };
  push_children(from, 0, 1.0);
  while (!heap.empty() && static_cast<int>(out->size()) < max_nodes) {
    const auto [prob, trie_node, parent] = heap.top();
    heap.pop();
    const int32_t added = out->Add(parent, nodes_[trie_node].token);
    if (added < 0) return;
    push_children(trie_node, added, prob);
  }
}

}  // namespace radixlm::spec
