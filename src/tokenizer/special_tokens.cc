#include "tokenizer/special_tokens.h"

#include <algorithm>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

uint64_t EdgeKey(int32_t node, uint8_t byte) { return (static_cast<uint64_t>(node) << 8) | byte; }

// One occurrence of a special token in the text.
struct Occurrence {
  int32_t entry;  // also the priority: lower is tried first
  uint32_t pos;
  uint32_t len;
};

enum : uint8_t { kFree = 0, kTaken = 1 };

}  // namespace

void SpecialTokenSplitter::Build(const std::vector<Entry>& entries) {
  entries_ = entries;
  nodes_.assign(1, Node{});
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
        nodes_.push_back(Node{});
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
}

int32_t SpecialTokenSplitter::Child(int32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  auto it = children_.find(EdgeKey(node, byte));
  return it == children_.end() ? -1 : it->second;
}

void SpecialTokenSplitter::Split(std::string_view text, bool parse_special,
                                 std::vector<Fragment>* out) const {
  if (text.empty()) return;
  std::vector<Occurrence> found;
  if (!empty()) {
    for (size_t p = 0; p < text.size(); ++p) {
      int32_t node = root_children_[static_cast<uint8_t>(text[p])];
      size_t k = p + 1;
      while (node >= 0) {
        const int32_t e = nodes_[node].entry;
        if (e >= 0 && (parse_special || entries_[e].always)) {
          found.push_back({e, static_cast<uint32_t>(p), static_cast<uint32_t>(k - p)});
        }
        if (k == text.size()) break;
        node = Child(node, static_cast<uint8_t>(text[k++]));
      }
    }
  }
  if (found.empty()) {
    out->push_back(Fragment{-1, text});
    return;
  }

  // Replay llama.cpp's order: token by token in priority order, occurrences left to right, an
  // occurrence counts only if it lies wholly inside text no earlier token has taken.
  std::sort(found.begin(), found.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.entry != b.entry ? a.entry < b.entry : a.pos < b.pos;
  });
  std::vector<uint8_t> state(text.size(), kFree);
  std::vector<Occurrence> accepted;
  for (const Occurrence& occ : found) {
    const auto first = state.begin() + occ.pos;
    if (std::any_of(first, first + occ.len, [](uint8_t s) { return s != kFree; })) continue;
    std::fill(first, first + occ.len, kTaken);
    const Entry& entry = entries_[occ.entry];
    if (entry.lstrip) {
      for (size_t q = occ.pos; q > 0 && state[q - 1] == kFree && IsAsciiSpace(text[q - 1]); --q) {
        state[q - 1] = kTaken;
      }
    }
    if (entry.rstrip) {
      for (size_t q = occ.pos + occ.len;
           q < text.size() && state[q] == kFree && IsAsciiSpace(text[q]); ++q) {
        state[q] = kTaken;
      }
    }
    accepted.push_back(occ);
  }
  std::sort(accepted.begin(), accepted.end(),
            [](const Occurrence& a, const Occurrence& b) { return a.pos < b.pos; });

  // Emit free runs as raw text and accepted occurrences as tokens; stripped space vanishes.
  size_t next = 0;  // next accepted occurrence
  size_t p = 0;
  while (p < text.size()) {
    if (next < accepted.size() && accepted[next].pos == p) {
      const Occurrence& occ = accepted[next++];
      out->push_back(Fragment{entries_[occ.entry].id, text.substr(occ.pos, occ.len)});
      p += occ.len;
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
