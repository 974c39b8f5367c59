// ParseRegex: regex text → RegexNode.
//
// Supported syntax (Python `re` flavour, the one JSON-schema patterns and SGLang users write):
// literals (UTF-8), escapes (\n \t \r \f \v \0 \xHH \uHHHH \U0010FFFF and escaped punctuation),
// classes [a-z] and negated classes [^...] over codepoints, \d \w \s \D \W \S (ASCII meaning),
// `.` (any codepoint but \n), quantifiers * + ? {m} {m,} {m,n} (a trailing lazy `?` is accepted
// and ignored: laziness does not change the language; a quantifier on a quantifier, "a**" or
// "a{2}{3}", is an error as in Python), alternation, capturing and (?:...) groups. The pattern
// always matches the whole output, so ^ and $ are accepted only at the very start / end and mean
// nothing. Backreferences, lookaround, \b and inline flags are rejected with InvalidArgument naming
// the construct and its offset, as are groups nested deeper than kMaxRegexNesting.
#pragma once

#include <string_view>

#include "grammar/regex_ast.h"
#include "util/status.h"

namespace radixlm::grammar {

// {m,n} bounds above this are rejected: the NFA copies the body once per repetition.
constexpr int32_t kMaxRegexRepeat = 1000;
// Groups nested deeper than this are rejected: parsing, NFA construction and the tree's
// destructor recurse once per level, so an unbounded depth would overflow the stack.
constexpr int32_t kMaxRegexNesting = 256;

StatusOr<RegexNode> ParseRegex(std::string_view pattern);

}  // namespace radixlm::grammar
