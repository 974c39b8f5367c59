// ParseEbnf: GBNF-style grammar text (llama.cpp's format, which SGLang and xgrammar accept) →
// Cfg over bytes.
//
//   root   ::= object
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   pair   ::= [a-z]+ ws ":" ws value     # comments run to the end of the line
//
// Supported: rules `name ::= alternatives` (names [A-Za-z0-9_-]; a rule may span lines — the
// next `name ::=` starts a new one), sequences, `|`, groups `( )`, postfix `* + ?` and `{m}`
// `{m,}` `{m,n}`, string literals "..." / '...' with escapes (\n \r \t \\ \" \' \xHH \uHHHH
// \UHHHHHHHH), character classes [a-z], [^...] over codepoints (UTF-8 encoded), `.` (any
// codepoint), and rule references, recursion included. The start rule is `root`.
//
// Repetition is lowered to left-recursive helper rules (N ::= N X | ε), which an Earley
// recognizer handles in constant work per byte, unlike right recursion.
#pragma once

#include <cstdint>
#include <string_view>

#include "grammar/cfg.h"
#include "util/status.h"

namespace radixlm::grammar {

// Groups "( ... )" nested deeper than this are InvalidArgument: the parser recurses once per
// level, so an unbounded depth would overflow the stack.
inline constexpr int32_t kMaxEbnfNesting = 256;
// Repetitions are lowered by copying their body ({m,n}: n copies), so nested ones multiply;
// a grammar whose copies add up to more symbols than this is InvalidArgument.
inline constexpr int64_t kMaxEbnfCopiedSymbols = 1 << 20;

StatusOr<Cfg> ParseEbnf(std::string_view text);

}  // namespace radixlm::grammar
