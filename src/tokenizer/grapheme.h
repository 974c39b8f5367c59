// Extended grapheme clusters (Unicode Standard Annex #29, rules GB3 to GB999, with GB9c's Indic
// conjuncts), as the Rust unicode-segmentation crate that the `tokenizers` package uses finds
// them: the Precompiled normaliser (precompiled_charsmap.h) looks whole clusters up first.
// The character properties are generated (grapheme_classes.cc, scripts/gen_grapheme_classes.py)
// from the Unicode version that crate has in tokenizers 0.23.2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace radixlm::tokenizer {

// Grapheme_Cluster_Break values (the numbering is grapheme_classes.cc's).
enum class GraphemeBreak : uint8_t {
  kOther,
  kCR,
  kLF,
  kControl,
  kExtend,
  kZWJ,
  kRegionalIndicator,
  kPrepend,
  kSpacingMark,
  kL,
  kV,
  kT,
  kLV,
  kLVT,
};

// Indic_Conjunct_Break values.
enum class IndicConjunctBreak : uint8_t { kNone, kConsonant, kExtend, kLinker };

struct GraphemeProperties {
  GraphemeBreak gcb = GraphemeBreak::kOther;
  bool pictographic = false;  // Extended_Pictographic
  IndicConjunctBreak incb = IndicConjunctBreak::kNone;
};

// A code point's properties (defaults past U+10FFFF).
GraphemeProperties PropertiesOf(uint32_t cp);

// The end (a byte offset) of the extended grapheme cluster that starts at `pos` in `text`
// (pos < text.size()). Bytes that are not valid UTF-8 count as U+FFFD, one per byte.
size_t GraphemeEnd(std::string_view text, size_t pos);

}  // namespace radixlm::tokenizer
