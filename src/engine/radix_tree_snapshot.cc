#include "engine/radix_tree_snapshot.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace radixlm {
namespace {

// One tree node in breadth-first order, so a node's children are contiguous.
struct Visited {
  const RadixNode* node = nullptr;
  int32_t first_child = 0;  // index in the visit order
  int32_t num_children = 0;
  int64_t prefix_tokens = 0;
  int64_t subtree_nodes = 1;
  int64_t subtree_tokens = 0;
  uint64_t subtree_hits = 0;
  int32_t subtree_max_lock = 0;
};

std::vector<Visited> VisitBreadthFirst(const RadixNode* root, int64_t num_nodes) {
  std::vector<Visited> order;
  order.reserve(static_cast<size_t>(num_nodes) + 1);
  order.push_back({.node = root});
  for (size_t i = 0; i < order.size(); ++i) {
    order[i].first_child = static_cast<int32_t>(order.size());
    order[i].num_children = static_cast<int32_t>(order[i].node->children.size());
    const int64_t prefix = order[i].prefix_tokens;
    for (const auto& [page, child] : order[i].node->children) {
      order.push_back({.node = child.get(), .prefix_tokens = prefix + child->size()});
    }
  }
  // Children come after their parent: accumulate subtree totals bottom-up.
  for (size_t i = order.size(); i-- > 0;) {
    Visited& v = order[i];
    if (i != 0) {
      v.subtree_tokens += v.node->size();
      v.subtree_hits += v.node->hit_count;
      v.subtree_max_lock = std::max(v.subtree_max_lock, v.node->lock_ref);
    }
    for (int32_t c = v.first_child; c < v.first_child + v.num_children; ++c) {
      v.subtree_nodes += order[c].subtree_nodes;
      v.subtree_tokens += order[c].subtree_tokens;
      v.subtree_hits += order[c].subtree_hits;
      v.subtree_max_lock = std::max(v.subtree_max_lock, order[c].subtree_max_lock);
    }
  }
  return order;
}

RadixTreeEntry MakeEntry(const Visited& v, int32_t parent, bool is_root, int32_t snippet_tokens) {
  const RadixNode& node = *v.node;
  RadixTreeEntry e;
  e.id = node.id;
  e.parent = parent;
  e.tokens = node.size();
  e.prefix_tokens = v.prefix_tokens;
  e.lock_ref =
      is_root ? 0 : node.lock_ref;  // the root's permanent lock is an implementation detail
  e.hit_count = node.hit_count;
  e.last_access = node.last_access_time;
  e.priority = node.priority;
  e.children = v.num_children;
  e.collapsed = v.num_children > 0;  // until it is expanded
  e.subtree_nodes = is_root ? v.subtree_nodes - 1 : v.subtree_nodes;
  e.subtree_tokens = v.subtree_tokens;
  e.subtree_hits = v.subtree_hits;
  e.subtree_max_lock = is_root ? 0 : v.subtree_max_lock;
  const size_t n =
      std::min<size_t>(node.key.size(), static_cast<size_t>(std::max(snippet_tokens, 0)));
  e.snippet_ids.assign(node.key.begin(), node.key.begin() + static_cast<ptrdiff_t>(n));
  // A LoRA namespace's runs are keyed token + namespace * stride: show the tokens.
  if (!node.key.empty()) e.lora_namespace = node.key[0] / RadixCache::kKeyNamespaceStride;
  for (int32_t& id : e.snippet_ids) id %= RadixCache::kKeyNamespaceStride;
  return e;
}

}  // namespace

RadixTreeSnapshot SnapshotRadixTree(const RadixCache& cache, const RadixTreeQuery& query) {
  RadixTreeSnapshot snap;
  snap.version = cache.version();
  snap.clock = cache.logical_time();
  snap.disabled = cache.disabled();
  snap.page_size = cache.page_size();
  snap.num_nodes = cache.num_nodes();
  snap.total_tokens = cache.TotalSize();
  snap.evictable_tokens = cache.evictable_size();
  snap.protected_tokens = cache.protected_size();
  snap.evictions_total = cache.evictions_total();
  snap.evicted_tokens_total = cache.evicted_tokens_total();
  if (query.if_version_not != 0 && query.if_version_not == snap.version) {
    snap.unchanged = true;
    return snap;
  }
  if (query.counters_only) {
    snap.counters_only = true;
    return snap;
  }
  for (const RadixEviction& ev : cache.recent_evictions()) {
    snap.evictions.push_back(
        {.seq = ev.seq,
         .node_id = ev.node_id,
         .parent_id = ev.parent_id,
         .tokens = ev.tokens,
         .hit_count = ev.hit_count,
         .snippet_ids = std::vector<int32_t>(ev.head.begin(), ev.head.begin() + ev.head_size)});
    for (int32_t& id : snap.evictions.back().snippet_ids) id %= RadixCache::kKeyNamespaceStride;
  }

  const std::vector<Visited> order = VisitBreadthFirst(cache.root(), cache.num_nodes());
  const size_t budget = static_cast<size_t>(std::max(query.max_nodes, 1));
  snap.entries.reserve(std::min(budget, order.size()));
  snap.entries.push_back(MakeEntry(order[0], -1, /*is_root=*/true, query.snippet_tokens));

  // Best-first expansion: the entry whose subtree holds the most tokens (older first on ties).
  struct Frontier {
    int64_t tokens;
    uint64_t id;
    int32_t visit;  // index in `order`
    int32_t entry;  // index in snap.entries
    bool operator<(const Frontier& o) const {
      return tokens != o.tokens ? tokens < o.tokens : id > o.id;
    }
  };
  std::priority_queue<Frontier> frontier;
  frontier.push({order[0].subtree_tokens, order[0].node->id, 0, 0});
  std::vector<int32_t> kids;
  while (!frontier.empty() && snap.entries.size() < budget) {
    const Frontier top = frontier.top();
    frontier.pop();
    const Visited& v = order[top.visit];
    if (v.num_children == 0) continue;
    const size_t room = budget - snap.entries.size();
    const size_t n = static_cast<size_t>(v.num_children);
    if (n > room && room < 2) continue;  // stays collapsed
    kids.clear();
    for (int32_t c = v.first_child; c < v.first_child + v.num_children; ++c) kids.push_back(c);
    const size_t shown = n <= room ? n : room - 1;
    auto larger = [&order](int32_t a, int32_t b) {
      if (order[a].subtree_tokens != order[b].subtree_tokens) {
        return order[a].subtree_tokens > order[b].subtree_tokens;
      }
      return order[a].node->id < order[b].node->id;
    };
    if (shown < n) {
      std::partial_sort(kids.begin(), kids.begin() + static_cast<ptrdiff_t>(shown), kids.end(),
                        larger);
    } else {
      std::sort(kids.begin(), kids.end(), larger);
    }
    snap.entries[top.entry].collapsed = false;
    for (size_t k = 0; k < shown; ++k) {
      const int32_t entry = static_cast<int32_t>(snap.entries.size());
      snap.entries.push_back(MakeEntry(order[kids[k]], top.entry, false, query.snippet_tokens));
      frontier.push({order[kids[k]].subtree_tokens, order[kids[k]].node->id, kids[k], entry});
    }
    if (shown < n) {
      RadixTreeEntry others;
      others.kind = RadixTreeEntry::Kind::kOthers;
      others.parent = top.entry;
      others.prefix_tokens = v.prefix_tokens;
      others.collapsed = true;
      for (size_t k = shown; k < n; ++k) {
        const Visited& rest = order[kids[k]];
        ++others.merged_subtrees;
        others.subtree_nodes += rest.subtree_nodes;
        others.subtree_tokens += rest.subtree_tokens;
        others.subtree_hits += rest.subtree_hits;
        others.subtree_max_lock = std::max(others.subtree_max_lock, rest.subtree_max_lock);
        others.hit_count += rest.node->hit_count;
        others.last_access = std::max(others.last_access, rest.node->last_access_time);
      }
      snap.entries.push_back(std::move(others));
    }
  }
  for (const RadixTreeEntry& e : snap.entries) {
    if (e.collapsed) snap.truncated = true;
  }
  return snap;
}

}  // namespace radixlm
