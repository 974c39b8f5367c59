// DraftTree: the tokens a speculative step proposes for one request, as a tree verified in one
// forward pass.
//
// Node 0 is the root: the request's newest token, whose KV the verify forward computes as a
// plain decode would. Every other node is a drafted continuation of its parent and comes after
// it (parent(i) < i). A node's position in the sequence is (tokens before the root) +
// depth(i). mask(i) has bit j set iff node j is node i or one of its ancestors: the attention
// mask of the verify forward (model::SequenceInput::tree_mask), which is why a tree holds
// at most kMaxNodes nodes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace radixlm::spec {

class DraftTree {
 public:
  static constexpr int kMaxNodes = 64;

  // Only the root.
  void Reset(int32_t root_token);
  // Appends a child of `parent` (an existing node). Returns its index, or -1 when the tree is
  // full.
  int32_t Add(int32_t parent, int32_t token);

  size_t size() const { return tokens_.size(); }
  int32_t token(int32_t i) const { return tokens_[i]; }
  int32_t parent(int32_t i) const { return parents_[i]; }
  int32_t depth(int32_t i) const { return depths_[i]; }
  // The child of `node` carrying `token`, or -1.
  int32_t Child(int32_t node, int32_t token) const;
  // Keeps the nodes i with keep[i] set whose ancestors are all kept (the root always stays),
  // in their order, renumbered; a dropped node takes its whole subtree with it. Returns the
  // number of nodes dropped. keep.size() == size().
  int32_t Prune(std::span<const bool> keep);

  std::span<const int32_t> tokens() const { return tokens_; }
  std::span<const int32_t> depths() const { return depths_; }
  std::span<const uint64_t> masks() const { return masks_; }

 private:
  std::vector<int32_t> tokens_;
  std::vector<int32_t> parents_;
  std::vector<int32_t> depths_;
  std::vector<uint64_t> masks_;
};

}  // namespace radixlm::spec
