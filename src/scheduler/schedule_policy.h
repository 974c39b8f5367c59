// Scheduling policies: the order in which waiting requests are offered to the PrefillAdder.
//
// Each policy is a small const functor that reorders the waiting list in place, best candidate
// first, from fields the scheduler keeps on each request (arrival order, cached prefix match
// length, match node, priority, max_new_tokens). They are deterministic given their inputs
// (random draws from the RNG it is handed), so they are tested directly.
//
//   fcfs        arrival order
//   lpm         longest cached prefix match first (Request::match_len), then arrival
//   dfs-weight  depth-first over the tree of matched prefixes, heavier subtrees first, so a
//               subtree is drained while it is cached (Request::match_node must be fresh)
//   lof         longest max_new_tokens first, then arrival
//   random      a shuffle
//   priority    higher Request priority first, then arrival
//
// Starvation bound (all but fcfs and priority): a request passed over starvation_max_skips
// times, or waiting starvation_max_wait_s seconds, moves to the front (oldest first).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "scheduler/request.h"
#include "scheduler/scheduler_config.h"

namespace radixlm {

struct FcfsPolicy {
  void operator()(std::vector<Request*>& waiting) const;
};
struct LongestPrefixMatchPolicy {
  void operator()(std::vector<Request*>& waiting) const;
};
struct DfsWeightPolicy {
  void operator()(std::vector<Request*>& waiting) const;
};
struct LongestOutputFirstPolicy {
  void operator()(std::vector<Request*>& waiting) const;
};
struct RandomPolicy {
  void operator()(std::vector<Request*>& waiting, std::mt19937_64& rng) const;
};
struct PriorityPolicy {
  void operator()(std::vector<Request*>& waiting) const;
};

struct StarvationBound {
  int32_t max_skips = 0;  // <= 0: no bound on skips
  double max_wait_s = 0;  // <= 0: no bound on time
  bool IsStarved(const Request& req, double now) const;
  // Moves starved requests to the front, oldest first; the rest keep their order.
  void operator()(std::vector<Request*>& waiting, double now) const;
};

// Applies `kind` and then (where it applies) the starvation bound.
void OrderWaitingQueue(SchedulePolicyKind kind, const StarvationBound& starvation, double now,
                       std::mt19937_64& rng, std::vector<Request*>& waiting);

// Whether the policy reads Request::match_len / match_node (and in-batch dedup applies).
inline bool IsCacheAware(SchedulePolicyKind kind) {
  return kind == SchedulePolicyKind::kLpm || kind == SchedulePolicyKind::kDfsWeight;
}

}  // namespace radixlm
