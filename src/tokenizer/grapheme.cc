#include "tokenizer/grapheme.h"

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

using GB = GraphemeBreak;
using InCB = IndicConjunctBreak;

bool IsControlLike(GB g) { return g == GB::kControl || g == GB::kCR || g == GB::kLF; }

// The context the rules past the pair of neighbours need, carried along the cluster.
struct Context {
  int conjunct = 0;  // GB9c: 1 after InCB=Consonant [Extend|Linker]*, 2 once a Linker is in
  int emoji = 0;     // GB11: 1 after ExtPict Extend*, 2 after ExtPict Extend* ZWJ
  int regional = 0;  // GB12/13: Regional_Indicators in a row, up to and with the last one

  void Add(const GraphemeProperties& p) {
    if (p.incb == InCB::kConsonant) {
      conjunct = 1;
    } else if (conjunct != 0 && p.incb == InCB::kLinker) {
      conjunct = 2;
    } else if (conjunct == 0 || p.incb != InCB::kExtend) {
      conjunct = 0;
    }
    if (p.pictographic) {
      emoji = 1;
    } else if (emoji == 1 && p.gcb == GB::kZWJ) {
      emoji = 2;
    } else if (emoji != 1 || p.gcb != GB::kExtend) {
      emoji = 0;
    }
    regional = p.gcb == GB::kRegionalIndicator ? regional + 1 : 0;
  }
};

bool Joined(const GraphemeProperties& prev, const GraphemeProperties& next, const Context& c) {
  const GB p = prev.gcb, n = next.gcb;
  if (p == GB::kCR && n == GB::kLF) return true;           // GB3
  if (IsControlLike(p) || IsControlLike(n)) return false;  // GB4, GB5
  if (p == GB::kL && (n == GB::kL || n == GB::kV || n == GB::kLV || n == GB::kLVT)) {
    return true;  // GB6
  }
  if ((p == GB::kLV || p == GB::kV) && (n == GB::kV || n == GB::kT)) return true;  // GB7
  if ((p == GB::kLVT || p == GB::kT) && n == GB::kT) return true;                  // GB8
  if (n == GB::kExtend || n == GB::kZWJ || n == GB::kSpacingMark) return true;     // GB9, 9a
  if (p == GB::kPrepend) return true;                                              // GB9b
  if (next.incb == InCB::kConsonant && c.conjunct == 2) return true;               // GB9c
  if (next.pictographic && c.emoji == 2) return true;                              // GB11
  if (p == GB::kRegionalIndicator && n == GB::kRegionalIndicator) {
    return c.regional % 2 == 1;  // GB12, 13
  }
  return false;  // GB999
}

}  // namespace

size_t GraphemeEnd(std::string_view text, size_t pos) {
  GraphemeProperties prev = PropertiesOf(DecodeUtf8(text, &pos));
  Context context;
  context.Add(prev);
  while (pos < text.size()) {
    size_t next_pos = pos;
    const GraphemeProperties next = PropertiesOf(DecodeUtf8(text, &next_pos));
    if (!Joined(prev, next, context)) break;
    context.Add(next);
    prev = next;
    pos = next_pos;
  }
  return pos;
}

}  // namespace radixlm::tokenizer
