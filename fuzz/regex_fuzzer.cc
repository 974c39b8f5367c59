// Regex → NFA → DFA (CompiledGrammar, GrammarKind::kRegex) and stop regexes.
//
// Input: the pattern. A pattern that parses and fits the automaton limits is decoded under
// (grammar_driver.h); the same pattern as a stop regex searches a short text. Rejections
// (InvalidArgument, ResourceExhausted) are expected; Validate must reject whatever it says
// Compile would.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "grammar/stop_regex.h"
#include "grammar_driver.h"

using radixlm::grammar::CompiledGrammar;
using radixlm::grammar::GrammarKind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view pattern(reinterpret_cast<const char*>(data), size);
  const radixlm::grammar::CompileOptions options = radixlm::fuzz::FuzzCompileOptions();
  const radixlm::Status valid = CompiledGrammar::Validate(GrammarKind::kRegex, pattern, options);
  auto compiled =
      CompiledGrammar::Compile(GrammarKind::kRegex, pattern, radixlm::fuzz::FuzzVocab(), options);
  if (!valid.ok() && compiled.ok()) std::abort();  // Validate's error is Compile's error
  if (compiled.ok()) radixlm::fuzz::DriveMatcher(*compiled, radixlm::fuzz::SeedOf(data, size), 24);

  auto stop = radixlm::grammar::CompileStopRegex(pattern);
  if (stop.ok()) {
    radixlm::grammar::StopRegexSearch search(*stop);
    for (std::string_view chunk : {std::string_view("Hello, world! 123 "), pattern,
                                   std::string_view("\n{\"a\": [1, 2.5e3]}")}) {
      const auto match = search.Feed(chunk);
      if (match.has_value() && *match > search.size()) std::abort();
      if (match.has_value()) break;
      if (search.EarliestLiveStart() > search.size()) std::abort();
    }
  }
  return 0;
}
