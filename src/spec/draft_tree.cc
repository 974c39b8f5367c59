#include "spec/draft_tree.h"

#include <array>

#include "util/check.h"

namespace radixlm::spec {

void DraftTree::Reset(int32_t root_token) {
  tokens_.assign(1, root_token);
  parents_.assign(1, -1);
  depths_.assign(1, 0);
  masks_.assign(1, 1);
}

int32_t DraftTree::Add(int32_t parent, int32_t token) {
  if (tokens_.size() >= kMaxNodes) return -1;
  RADIXLM_CHECK(parent >= 0 && static_cast<size_t>(parent) < tokens_.size());
  const auto i = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  parents_.push_back(parent);
  depths_.push_back(depths_[parent] + 1);
  masks_.push_back(masks_[parent] | (uint64_t{1} << i));
  return i;
}

int32_t DraftTree::Child(int32_t node, int32_t token) const {
  // Children come after their parent; a tree has at most kMaxNodes nodes.
  for (size_t i = static_cast<size_t>(node) + 1; i < tokens_.size(); ++i) {
    if (parents_[i] == node && tokens_[i] == token) return static_cast<int32_t>(i);
  }
  return -1;
}

int32_t DraftTree::Prune(std::span<const bool> keep) {
  RADIXLM_CHECK_EQ(keep.size(), tokens_.size());
  // new_index[i]: node i's index after pruning, -1 when dropped. Parents come first, so one
  // pass in order sees every parent's fate before its children.
  std::array<int32_t, kMaxNodes> new_index;
  new_index[0] = 0;
  size_t kept = 1;
  for (size_t i = 1; i < tokens_.size(); ++i) {
    const int32_t parent = new_index[parents_[i]];
    if (!keep[i] || parent < 0) {
      new_index[i] = -1;
      continue;
    }
    const auto j = static_cast<int32_t>(kept++);
    new_index[i] = j;
    tokens_[j] = tokens_[i];
    parents_[j] = parent;
    depths_[j] = depths_[i];
    masks_[j] = masks_[parent] | (uint64_t{1} << j);
  }
  const auto dropped = static_cast<int32_t>(tokens_.size() - kept);
  tokens_.resize(kept);
  parents_.resize(kept);
  depths_.resize(kept);
  masks_.resize(kept);
  return dropped;
}

}  // namespace radixlm::spec
