// The regex syntax tree: what RegexParser produces and the Thompson NFA builder consumes.
//
// Character-level constructs are already lowered to bytes here: a literal or a class becomes a
// kClass node holding the UTF-8 byte-range sequences of its codepoints, so everything after the
// parser is byte-oriented.
#pragma once

#include <cstdint>
#include <vector>

#include "grammar/utf8_ranges.h"

namespace radixlm::grammar {

struct RegexNode {
  enum class Kind {
    kEmpty,   // matches the empty string
    kClass,   // one codepoint out of `seqs` (alternatives, each a byte-range sequence)
    kConcat,  // children in order
    kAlt,     // one of children
    kRepeat,  // children[0] repeated min..max times (max == kUnbounded: no upper bound)
  };
  static constexpr int32_t kUnbounded = -1;

  Kind kind = Kind::kEmpty;
  std::vector<ByteSeq> seqs;
  std::vector<RegexNode> children;
  int32_t min = 0;
  int32_t max = 0;
};

}  // namespace radixlm::grammar
