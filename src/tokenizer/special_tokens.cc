#include "tokenizer/special_tokens.h"

#include <algorithm>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

uint64_t EdgeKey(int32_t node, uint8_t byte) { return (static_cast<uint64_t>(node) << 8) | byte; }

// A match of a special token in the text: node's token at `pos`. The token's entry index is
// its priority (lower is tried first).
struct Candidate {
  int32_t entry;
  uint32_t pos;
  int32_t node;
};

// Heap order: the candidate tried first (lowest entry, then leftmost) on top.
struct TriedLater {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.entry != b.entry ? a.entry > b.entry : a.pos > b.pos;
  }
};

enum : uint8_t { kFree = 0, kTaken = 1 };

}  // namespace

void SpecialTokenSplitter::Build(const std::vector<Entry>& entries) {
  entries_ = entries;
  nodes_.assign(1, Node{});
  std::vector<int32_t> parent = {-1};
  root_children_.fill(-1);
  children_.clear();
  for (size_t e = 0; e < entries_.size(); ++e) {
    const std::string_view text = entries_[e].text;
    if (text.empty()) continue;
    int32_t node = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const auto byte = static_cast<uint8_t>(text[i]);
      int32_t child = Child(node, byte);
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        nodes_.push_back(Node{-1, -1, static_cast<uint32_t>(i + 1)});
        parent.push_back(node);
        if (node == 0) {
          root_children_[byte] = child;
        } else {
          children_.emplace(EdgeKey(node, byte), child);
        }
      }
      node = child;
    }
    // Texts are unique in a vocabulary; should two entries share one, the earlier one wins.
    if (nodes_[node].entry < 0) nodes_[node].entry = static_cast<int32_t>(e);
  }
  // Parents are created before their children, so one pass in creation order suffices.
  for (size_t n = 1; n < nodes_.size(); ++n) {
    const int32_t p = parent[n];
    nodes_[n].shorter = (p > 0 && nodes_[p].entry >= 0) ? p : (p > 0 ? nodes_[p].shorter : -1);
  }
}

int32_t SpecialTokenSplitter::Child(int32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  auto it = children_.find(EdgeKey(node, byte));
  return it == children_.end() ? -1 : it->second;
}

void SpecialTokenSplitter::Split(std::string_view text, bool parse_special,
                                 std::vector<Fragment>* out) const {
  if (text.empty()) return;
  auto allowed = [&](int32_t node) {
    const int32_t e = nodes_[node].entry;
    return e >= 0 && (parse_special || entries_[e].always);
  };
  // The longest usable match at every position.
  std::vector<Candidate> heap;
  if (!empty()) {
    for (size_t p = 0; p < text.size(); ++p) {
      int32_t node = root_children_[static_cast<uint8_t>(text[p])];
      int32_t best = -1;
      for (size_t k = p + 1; node >= 0; ++k) {
        if (allowed(node)) best = node;
        if (k == text.size()) break;
        node = Child(node, static_cast<uint8_t>(text[k]));
      }
      if (best >= 0) heap.push_back({nodes_[best].entry, static_cast<uint32_t>(p), best});
    }
  }
  if (heap.empty()) {
    out->push_back(Fragment{-1, text});
    return;
  }

  // Replay llama.cpp's order: token by token in priority order, occurrences left to right, an
  // occurrence counts only if it lies wholly inside text no earlier token has taken.
  std::make_heap(heap.begin(), heap.end(), TriedLater());
  std::vector<uint8_t> state(text.size(), kFree);
  std::vector<Candidate> accepted;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), TriedLater());
    const Candidate c = heap.back();
    heap.pop_back();
    const uint32_t len = nodes_[c.node].depth;
    uint32_t free_len = 0;
    while (free_len < len && state[c.pos + free_len] == kFree) ++free_len;
    if (free_len < len) {
      // Taken bytes only ever grow, so a shorter match at this position that overlaps them now
      // would be rejected at its turn too: go straight to the longest one that still fits.
      int32_t next = nodes_[c.node].shorter;
      while (next >= 0 && (nodes_[next].depth > free_len || !allowed(next))) {
        next = nodes_[next].shorter;
      }
      if (next >= 0) {
        heap.push_back({nodes_[next].entry, c.pos, next});
        std::push_heap(heap.begin(), heap.end(), TriedLater());
      }
      continue;
    }
    const auto first = state.begin() + c.pos;
    std::fill(first, first + len, kTaken);
    const Entry& entry = entries_[c.entry];
    if (entry.lstrip) {
      for (size_t q = c.pos; q > 0 && state[q - 1] == kFree && IsAsciiSpace(text[q - 1]); --q) {
        state[q - 1] = kTaken;
      }
    }
    if (entry.rstrip) {
      for (size_t q = c.pos + len; q < text.size() && state[q] == kFree && IsAsciiSpace(text[q]);
           ++q) {
        state[q] = kTaken;
      }
    }
    accepted.push_back(c);
  }
  std::sort(accepted.begin(), accepted.end(),
            [](const Candidate& a, const Candidate& b) { return a.pos < b.pos; });

  // Emit free runs as raw text and accepted occurrences as tokens; stripped space vanishes.
  size_t next = 0;  // next accepted occurrence
  size_t p = 0;
  while (p < text.size()) {
    if (next < accepted.size() && accepted[next].pos == p) {
      const Candidate& c = accepted[next++];
      const uint32_t len = nodes_[c.node].depth;
      out->push_back(Fragment{entries_[c.entry].id, text.substr(c.pos, len)});
      p += len;
    } else if (state[p] == kFree) {
      size_t q = p;
      while (q < text.size() && state[q] == kFree) ++q;
      out->push_back(Fragment{-1, text.substr(p, q - p)});
      p = q;
    } else {
      ++p;  // white space stripped by an lstrip/rstrip token
    }
  }
}

}  // namespace radixlm::tokenizer
