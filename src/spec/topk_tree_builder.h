// TopKTreeBuilder: grows a draft tree from a draft model's next-token logits, EAGLE-style
// (SGLang's --speculative-eagle-topk K with --speculative-num-steps S and
// --speculative-num-draft-tokens N), for draft-model speculation (STANDALONE).
//
// Each candidate node has a score: the draft model's log-probability of the path from the root
// to it (the sum of its log-softmax values along the path). Step 0 expands the root; step s
// expands the frontier, at most K nodes of depth s. Expanding a node adds its K likeliest next
// tokens as candidates; after the step, the next frontier is the K best of that step's new
// candidates, but always including the greedy node (the top-1 child of the previous greedy
// node, starting from the root), so the tree always holds the chain K = 1 would draft. After at
// most S steps (depth S), Build takes the greedy chain and then the best-scoring other
// candidates, N - 1 nodes in all: the set is closed under parents (a child never scores above
// its parent, and ties go to the earlier, parent, candidate).
//
// The caller runs the draft model: for each frontier node it computes the logits after the
// node's path (frontier(), Path()) and calls Expand; then NextStep. Not thread-safe; one per
// drafting request, reused across rounds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "spec/draft_tree.h"

namespace radixlm::spec {

class TopKTreeBuilder {
 public:
  static constexpr int32_t kRoot = -1;  // the root in frontier() and parent()

  // A tree of only the root; up to `topk` children per expanded node, `max_depth` levels.
  void Reset(int32_t root_token, int32_t topk, int32_t max_depth);

  // The nodes to expand this step (kRoot at step 0); empty when done.
  std::span<const int32_t> frontier() const { return frontier_; }
  // Keeps only the first n nodes of the frontier (the caller could not expand the rest).
  void TruncateFrontier(size_t n);

  // Adds the topk likeliest tokens after frontier node `node` as its children. logits: [vocab];
  // mask: a token bitmask (bit t of word t / 32) of the tokens allowed, or null for all. Tokens
  // with -inf or NaN logits, or masked out, are never added.
  void Expand(int32_t node, const float* logits, int32_t vocab, const int32_t* mask);
  // Ends the step: chooses the next frontier (none past max_depth).
  void NextStep();

  // The draft: the root and the best max_nodes - 1 candidates (greedy chain first), in
  // candidate order (parents before children). max_nodes >= 1.
  void Build(int32_t max_nodes, DraftTree* out);

  size_t candidates() const { return nodes_.size(); }
  int32_t token(int32_t node) const { return node == kRoot ? root_token_ : nodes_[node].token; }
  int32_t parent(int32_t node) const { return nodes_[node].parent; }
  int32_t depth(int32_t node) const { return node == kRoot ? 0 : nodes_[node].depth; }
  float score(int32_t node) const { return node == kRoot ? 0.0f : nodes_[node].score; }
  // The tokens from the root's child down to `node` (empty for the root).
  void Path(int32_t node, std::vector<int32_t>* tokens) const;

 private:
  struct Node {
    int32_t token;
    int32_t parent;  // kRoot or a candidate
    int32_t depth;   // >= 1
    float score;     // log-probability of the path
    bool greedy;     // every node on its path was its parent's top-1 child
  };

  int32_t root_token_ = -1;
  int32_t topk_ = 1;
  int32_t max_depth_ = 0;
  int32_t step_ = 0;
  std::vector<Node> nodes_;
  std::vector<int32_t> frontier_;
  std::vector<int32_t> step_nodes_;  // candidates added this step
  std::vector<int32_t> order_;       // scratch
  std::vector<int32_t> picked_;      // scratch: Expand's top-k
};

}  // namespace radixlm::spec
