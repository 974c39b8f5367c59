#include "scheduler/schedule_policy.h"

#include <algorithm>
#include <unordered_map>

namespace radixlm {
namespace {

bool EarlierArrival(const Request* a, const Request* b) { return a->arrival_seq < b->arrival_seq; }

}  // namespace

void FcfsPolicy::operator()(std::vector<Request*>& waiting) const {
  std::sort(waiting.begin(), waiting.end(), EarlierArrival);
}

void LongestPrefixMatchPolicy::operator()(std::vector<Request*>& waiting) const {
  std::sort(waiting.begin(), waiting.end(), [](const Request* a, const Request* b) {
    if (a->match_len != b->match_len) return a->match_len > b->match_len;
    return EarlierArrival(a, b);
  });
}

void LongestOutputFirstPolicy::operator()(std::vector<Request*>& waiting) const {
  std::sort(waiting.begin(), waiting.end(), [](const Request* a, const Request* b) {
    if (a->max_new_tokens != b->max_new_tokens) return a->max_new_tokens > b->max_new_tokens;
    return EarlierArrival(a, b);
  });
}

void RandomPolicy::operator()(std::vector<Request*>& waiting, std::mt19937_64& rng) const {
  // Start from arrival order so the result depends only on the set of requests and the RNG.
  std::sort(waiting.begin(), waiting.end(), EarlierArrival);
  std::shuffle(waiting.begin(), waiting.end(), rng);
}

void PriorityPolicy::operator()(std::vector<Request*>& waiting) const {
  std::sort(waiting.begin(), waiting.end(), [](const Request* a, const Request* b) {
    if (a->in.priority != b->in.priority) return a->in.priority > b->in.priority;
    return EarlierArrival(a, b);
  });
}

// SGLang's _sort_by_dfs_weight, restricted to the nodes on some request's path: a node's
// weight is the number of waiting requests whose match ends in its subtree; the walk visits
// heavier children first (ties: older node) and emits a node's own requests after its children.
void DfsWeightPolicy::operator()(std::vector<Request*>& waiting) const {
  struct NodeInfo {
    int64_t weight = 0;
    std::vector<const RadixNode*> children;  // only those on some request's path
    std::vector<Request*> requests;          // requests whose match ends here
  };
  std::unordered_map<const RadixNode*, NodeInfo> info;
  const RadixNode* root = nullptr;
  std::vector<Request*> unmatched;  // no match node (should not happen; kept in order)
  std::sort(waiting.begin(), waiting.end(), EarlierArrival);
  for (Request* req : waiting) {
    const RadixNode* node = req->match_node;
    if (node == nullptr) {
      unmatched.push_back(req);
      continue;
    }
    info[node].requests.push_back(req);
    const RadixNode* child = nullptr;
    for (; node != nullptr; child = node, node = node->parent) {
      NodeInfo& ni = info[node];
      ++ni.weight;
      // A node seen for the first time on this walk gets its child listed once: the child was
      // new too (weight 1 after this request), so it was not listed before.
      if (child != nullptr && info[child].weight == 1) ni.children.push_back(child);
      if (node->parent == nullptr) root = node;
    }
  }
  waiting.clear();
  if (root != nullptr) {
    // Iterative DFS: (node, emitted-children?) frames.
    std::vector<std::pair<const RadixNode*, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      NodeInfo& ni = info[node];
      if (expanded) {
        waiting.insert(waiting.end(), ni.requests.begin(), ni.requests.end());
        continue;
      }
      stack.push_back({node, true});
      std::sort(ni.children.begin(), ni.children.end(),
                [&](const RadixNode* a, const RadixNode* b) {
                  const int64_t wa = info[a].weight, wb = info[b].weight;
                  if (wa != wb) return wa > wb;
                  return a->id < b->id;
                });
      // Push in reverse so the heaviest child is visited first.
      for (auto it = ni.children.rbegin(); it != ni.children.rend(); ++it) {
        stack.push_back({*it, false});
      }
    }
  }
  waiting.insert(waiting.end(), unmatched.begin(), unmatched.end());
}

bool StarvationBound::IsStarved(const Request& req, double now) const {
  if (max_skips > 0 && req.skipped_passes >= max_skips) return true;
  if (max_wait_s > 0 && now - req.arrival_time >= max_wait_s) return true;
  return false;
}

void StarvationBound::operator()(std::vector<Request*>& waiting, double now) const {
  auto starved_end = std::stable_partition(waiting.begin(), waiting.end(),
                                           [&](const Request* r) { return IsStarved(*r, now); });
  std::sort(waiting.begin(), starved_end, EarlierArrival);
}

void OrderWaitingQueue(SchedulePolicyKind kind, const StarvationBound& starvation, double now,
                       std::mt19937_64& rng, std::vector<Request*>& waiting) {
  switch (kind) {
    case SchedulePolicyKind::kFcfs:
      FcfsPolicy{}(waiting);
      return;  // never starves
    case SchedulePolicyKind::kPriority:
      PriorityPolicy{}(waiting);
      return;  // explicit priorities win
    case SchedulePolicyKind::kLpm:
      LongestPrefixMatchPolicy{}(waiting);
      break;
    case SchedulePolicyKind::kDfsWeight:
      DfsWeightPolicy{}(waiting);
      break;
    case SchedulePolicyKind::kLof:
      LongestOutputFirstPolicy{}(waiting);
      break;
    case SchedulePolicyKind::kRandom:
      RandomPolicy{}(waiting, rng);
      break;
  }
  starvation(waiting, now);
}

}  // namespace radixlm
