// Stop regexes (SGLang's `stop_regex`): a request stops as soon as one of its patterns matches
// somewhere in the output text (a search, not a full match: Python's re.search).
//
// CompileStopRegex turns a pattern (the regex_parser.h syntax) into a byte DFA. StopRegexSearch
// feeds the output text as it grows, byte by byte, and tracks the partial matches still alive:
// one run per DFA state, keeping only the earliest-starting run in each state (two runs in one
// state have the same future, so the later one can never give an earlier match). Per byte the
// work is O(live runs) <= O(DFA states), so the text is never rescanned.
//
// When a run reaches an accepting state, the match found is the earliest-starting one among the
// matches that end there (the caller cuts the text at its start). EarliestLiveStart is where a
// match could still begin: text before it can be shown while streaming, text after it may yet
// be cut. A pattern that matches the empty string matches at the start of the first text fed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/dfa.h"
#include "util/status.h"

namespace radixlm::grammar {

// Limits of one pattern's automata (a bad pattern is an InvalidArgument naming the problem;
// one too large for these a ResourceExhausted).
inline constexpr size_t kStopRegexMaxNfaStates = 20000;
inline constexpr size_t kStopRegexMaxDfaStates = 2000;

StatusOr<std::shared_ptr<const Dfa>> CompileStopRegex(std::string_view pattern);

class StopRegexSearch {
 public:
  explicit StopRegexSearch(std::shared_ptr<const Dfa> dfa) : dfa_(std::move(dfa)) {}

  // Feeds `bytes`, appended to the text at byte offset size() (the sum of earlier feeds).
  // Returns the start offset of a match when one completes inside these bytes (then stop
  // feeding).
  std::optional<size_t> Feed(std::string_view bytes);

  // Offset of the earliest byte a match could still start at (size() when none is alive).
  size_t EarliestLiveStart() const { return runs_.empty() ? size_ : runs_.front().first; }
  size_t size() const { return size_; }

 private:
  std::shared_ptr<const Dfa> dfa_;
  std::vector<std::pair<size_t, int32_t>> runs_;  // (start offset, state), by start
  std::vector<uint8_t> seen_;                     // per DFA state: has a run this byte
  size_t size_ = 0;
};

}  // namespace radixlm::grammar
