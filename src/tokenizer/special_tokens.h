// SpecialTokenSplitter: cuts the special tokens (control, user-defined, unknown) out of raw
// text before the SPM/BPE model sees it, exactly as llama.cpp's tokenizer_st_partition does:
// special tokens are taken in a fixed priority order (longest text first), each one splitting
// every raw piece at all of its non-overlapping occurrences, left to right. Control and unknown
// tokens are only matched with parse_special; user-defined tokens always are. Tokens with the
// lstrip / rstrip attribute swallow the ASCII white space beside them.
//
// Instead of one scan of the text per special token (thousands for Gemma), a byte trie finds
// the longest match at every position in one pass, and the priority order is replayed with a
// heap holding one candidate per position (a rejected candidate yields to the next shorter
// match at its position). Memory stays O(text) even for runs like Gemma's 31 newline tokens.
// Immutable after Build; Split is const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace radixlm::tokenizer {

// A piece of input after partitioning: raw text (token < 0) or one special token.
struct Fragment {
  int32_t token = -1;
  std::string_view text;  // the raw text, or the token's text as it appeared
};

class SpecialTokenSplitter {
 public:
  struct Entry {
    int32_t id = -1;
    std::string_view text;  // must outlive the splitter
    bool always = false;    // matched even without parse_special (user-defined tokens)
    bool lstrip = false;
    bool rstrip = false;
  };

  // `entries` in priority order (first = tried first). Empty texts are ignored.
  void Build(const std::vector<Entry>& entries);

  // Partitions `text` into fragments, in order, appended to *out.
  void Split(std::string_view text, bool parse_special, std::vector<Fragment>* out) const;

  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    int32_t entry = -1;    // index into entries_ of the token ending here, or -1
    int32_t shorter = -1;  // nearest proper-prefix node with an entry, or -1
    uint32_t depth = 0;    // bytes from the root
  };
  int32_t Child(int32_t node, uint8_t byte) const;

  std::vector<Entry> entries_;
  std::vector<Node> nodes_;                         // nodes_[0] is the root
  std::array<int32_t, 256> root_children_{};        // -1 = none
  std::unordered_map<uint64_t, int32_t> children_;  // (node << 8 | byte) -> child, below root
};

}  // namespace radixlm::tokenizer
