// RadixCache debugging: pretty-printing and invariant checks (tests call CheckInvariants after
// every operation; it is O(tree size)).
#include "cache/radix_cache.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace radixlm {

namespace {

constexpr size_t kPrintedIds = 8;

void PrintRun(std::ostringstream& out, const std::vector<int32_t>& run) {
  out << '[';
  for (size_t i = 0; i < run.size() && i < kPrintedIds; ++i) out << (i ? " " : "") << run[i];
  if (run.size() > kPrintedIds) out << " ...";
  out << ']';
}

std::string NodeName(const RadixNode& node) { return "node #" + std::to_string(node.id); }

}  // namespace

std::string RadixCache::DebugString() const {
  std::ostringstream out;
  out << "RadixCache(page_size=" << page_size_ << ", policy=" << EvictionPolicyName(policy_)
      << (disable_ ? ", disabled" : "") << ", nodes=" << num_nodes_
      << ", evictable=" << evictable_size_ << ", protected=" << protected_size_ << ")\n";
  // Depth-first, children in ascending id order so the output is deterministic.
  std::vector<std::pair<const Node*, int>> stack = {{root_.get(), 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    out << std::string(2 * depth, ' ');
    if (node == root_.get()) {
      out << "root";
    } else {
      out << '#' << node->id << " len=" << node->size() << " key=";
      PrintRun(out, node->key);
      out << " slots=";
      PrintRun(out, node->value);
      out << " lock=" << node->lock_ref << " t=" << node->last_access_time
          << " hits=" << node->hit_count << " prio=" << node->priority;
      if (swa_aware()) {
        out << (node->swa_tombstone ? " swa=tombstone" : " swa=held")
            << " swa_lock=" << node->swa_lock_ref;
      }
    }
    out << '\n';
    std::vector<const Node*> children;
    for (const auto& [page, child] : node->children) children.push_back(child.get());
    std::sort(children.begin(), children.end(),
              [](const Node* a, const Node* b) { return a->id > b->id; });
    for (const Node* child : children) stack.push_back({child, depth + 1});
  }
  return out.str();
}

Status RadixCache::CheckInvariants() const {
  if (root_->parent != nullptr || !root_->key.empty() || !root_->value.empty()) {
    return Internal("RadixCache: root has a parent or a key");
  }
  int64_t evictable = 0;
  int64_t protected_tokens = 0;
  int64_t swa_evictable = 0;
  int64_t swa_protected = 0;
  int64_t nodes = 0;
  int64_t leaves = 0;
  std::vector<const Node*> stack = {root_.get()};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const auto& [page, child_ptr] : node->children) {
      const Node* child = child_ptr.get();
      const std::string name = NodeName(*child);
      if (child->parent != node) return Internal("RadixCache: " + name + " has a wrong parent");
      if (child->key.empty() || child->key.size() != child->value.size()) {
        return Internal("RadixCache: " + name + " key/value lengths " +
                        std::to_string(child->key.size()) + "/" +
                        std::to_string(child->value.size()));
      }
      if (child->size() % page_size_ != 0) {
        return Internal("RadixCache: " + name + " length " + std::to_string(child->size()) +
                        " is not a multiple of page_size");
      }
      if (static_cast<int64_t>(page.size()) != page_size_ ||
          !PageEqual()(page, std::span<const int32_t>(child->key).first(page_size_))) {
        return Internal("RadixCache: " + name + " is keyed by a page other than its first");
      }
      for (int64_t p = 0; p < child->size(); p += page_size_) {
        const int32_t first = child->value[p];
        if (first % page_size_ != 0) {
          return Internal("RadixCache: " + name + " value not page-aligned at " +
                          std::to_string(p));
        }
        for (int64_t i = 1; i < page_size_; ++i) {
          if (child->value[p + i] != first + i) {
            return Internal("RadixCache: " + name + " value page not contiguous at " +
                            std::to_string(p + i));
          }
        }
      }
      if (child->lock_ref < 0) return Internal("RadixCache: " + name + " lock_ref < 0");
      if (child->end_lock_ref < 0 || child->end_lock_ref > child->lock_ref) {
        return Internal("RadixCache: " + name + " end_lock_ref " +
                        std::to_string(child->end_lock_ref) + " outside [0, lock_ref]");
      }
      if (node != root_.get() && child->lock_ref > node->lock_ref) {
        return Internal("RadixCache: " + name + " lock_ref " + std::to_string(child->lock_ref) +
                        " exceeds its parent's " + std::to_string(node->lock_ref));
      }
      const bool should_list = child->is_leaf();
      const bool listed = child->leaf_index >= 0 &&
                          child->leaf_index < static_cast<int64_t>(leaves_.size()) &&
                          leaves_[child->leaf_index] == child;
      if (should_list != listed) {
        return Internal("RadixCache: " + name +
                        (should_list ? " is a leaf not listed" : " is listed but not a leaf"));
      }
      leaves += should_list ? 1 : 0;
      (child->lock_ref == 0 ? evictable : protected_tokens) += child->size();
      if (child->swa_lock_ref < 0 || child->swa_lock_ref > child->lock_ref ||
          (child->swa_tombstone && child->swa_lock_ref > 0)) {
        return Internal("RadixCache: " + name + " swa_lock_ref " +
                        std::to_string(child->swa_lock_ref) + " is negative, above lock_ref or " +
                        "on a tombstone");
      }
      if (swa_aware() && !child->swa_tombstone) {
        (child->swa_lock_ref == 0 ? swa_evictable : swa_protected) += child->size();
      }
      ++nodes;
      stack.push_back(child);
    }
  }
  if (leaves != static_cast<int64_t>(leaves_.size())) {
    return Internal("RadixCache: leaf list has " + std::to_string(leaves_.size()) +
                    " entries for " + std::to_string(leaves) + " leaves");
  }
  if (nodes != num_nodes_) {
    return Internal("RadixCache: counted " + std::to_string(nodes) + " nodes, recorded " +
                    std::to_string(num_nodes_));
  }
  if (evictable != evictable_size_ || protected_tokens != protected_size_) {
    return Internal("RadixCache: evictable/protected recorded " + std::to_string(evictable_size_) +
                    "/" + std::to_string(protected_size_) + " but the tree holds " +
                    std::to_string(evictable) + "/" + std::to_string(protected_tokens));
  }
  if (swa_evictable != swa_evictable_size_ || swa_protected != swa_protected_size_) {
    return Internal("RadixCache: SWA evictable/protected recorded " +
                    std::to_string(swa_evictable_size_) + "/" +
                    std::to_string(swa_protected_size_) + " but the tree holds " +
                    std::to_string(swa_evictable) + "/" + std::to_string(swa_protected));
  }
  return CheckSnapshots();
}

Status RadixCache::CheckInvariants(const KvPool& pool, int64_t in_flight_tokens) const {
  RADIXLM_RETURN_IF_ERROR(CheckInvariants());
  RADIXLM_RETURN_IF_ERROR(pool.CheckInvariants());
  if (pool.page_size() != page_size_) {
    return Internal("RadixCache: page_size " + std::to_string(page_size_) +
                    " differs from the pool's " + std::to_string(pool.page_size()));
  }
  std::vector<uint8_t> seen(pool.storage_slots(), 0);
  std::vector<const Node*> stack = {root_.get()};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const int32_t slot : node->value) {
      if (slot < 0 || slot >= pool.storage_slots()) {
        return Internal("RadixCache: " + NodeName(*node) + " holds out-of-range slot " +
                        std::to_string(slot));
      }
      if (slot < page_size_) {
        return Internal("RadixCache: " + NodeName(*node) + " holds the padding slot");
      }
      if (seen[slot]) return Internal("RadixCache: slot " + std::to_string(slot) + " twice");
      seen[slot] = 1;
      if (pool.IsSlotFree(slot)) {
        return Internal("RadixCache: " + NodeName(*node) + " holds free slot " +
                        std::to_string(slot));
      }
      if (swa_aware() && pool.has_swa() && pool.HasSwa(slot) == node->swa_tombstone) {
        return Internal("RadixCache: " + NodeName(*node) +
                        (node->swa_tombstone ? " (tombstone)" : "") +
                        " disagrees with the pool on windowed KV of slot " + std::to_string(slot));
      }
    }
    for (const auto& [page, child] : node->children) stack.push_back(child.get());
  }
  if (pool.available() + TotalSize() + in_flight_tokens != pool.size()) {
    return Internal("RadixCache: free " + std::to_string(pool.available()) + " + in tree " +
                    std::to_string(TotalSize()) + " + in flight " +
                    std::to_string(in_flight_tokens) + " != pool size " +
                    std::to_string(pool.size()));
  }
  return Status::Ok();
}

Status RadixCache::CheckSnapshots() const {
  int64_t held = 0;
  std::vector<uint8_t> seen(static_cast<size_t>(snapshot_slots_), 0);
  auto mark = [&](int32_t id, const std::string& who) -> Status {
    const int64_t i = static_cast<int64_t>(id) - first_snapshot_id_;
    if (i < 0 || i >= snapshot_slots_) {
      return Internal("RadixCache: " + who + " snapshot id " + std::to_string(id) + " out of range");
    }
    if (seen[i]) return Internal("RadixCache: snapshot id " + std::to_string(id) + " twice");
    seen[i] = 1;
    return Status::Ok();
  };
  std::vector<const Node*> stack = {root_.get()};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (node->snapshot >= 0) {
      if (node == root_.get()) return Internal("RadixCache: the root holds a snapshot");
      RADIXLM_RETURN_IF_ERROR(mark(node->snapshot, NodeName(*node)));
      if (node->snapshot_index < 0 ||
          node->snapshot_index >= static_cast<int64_t>(snapshot_nodes_.size()) ||
          snapshot_nodes_[node->snapshot_index] != node) {
        return Internal("RadixCache: " + NodeName(*node) + " snapshot not listed");
      }
      ++held;
    } else if (node->snapshot_index >= 0) {
      return Internal("RadixCache: " + NodeName(*node) + " listed without a snapshot");
    }
    for (const auto& [page, child] : node->children) stack.push_back(child.get());
  }
  if (held != snapshot_count()) return Internal("RadixCache: snapshot list size mismatch");
  for (const int32_t id : free_snapshots_) RADIXLM_RETURN_IF_ERROR(mark(id, "free"));
  // Ids neither held nor free are lent out between AllocateSnapshot and Attach / Free, which
  // happens within one scheduler call: none is outstanding when invariants are checked.
  if (held + static_cast<int64_t>(free_snapshots_.size()) != snapshot_slots_) {
    return Internal("RadixCache: " + std::to_string(held) + " snapshots held + " +
                    std::to_string(free_snapshots_.size()) + " free != " +
                    std::to_string(snapshot_slots_));
  }
  return Status::Ok();
}

}  // namespace radixlm
