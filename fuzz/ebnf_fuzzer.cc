// EBNF (GBNF) → Cfg → Earley recognizer (CompiledGrammar, GrammarKind::kEbnf).
//
// Input: the grammar text. Grammars that compile are decoded under (grammar_driver.h), which
// walks the vocabulary against the Earley parse for every mask.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "grammar_driver.h"

using radixlm::grammar::CompiledGrammar;
using radixlm::grammar::GrammarKind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const radixlm::grammar::CompileOptions options = radixlm::fuzz::FuzzCompileOptions();
  const radixlm::Status valid = CompiledGrammar::Validate(GrammarKind::kEbnf, text, options);
  auto compiled =
      CompiledGrammar::Compile(GrammarKind::kEbnf, text, radixlm::fuzz::FuzzVocab(), options);
  if (!valid.ok() && compiled.ok()) std::abort();  // Validate's error is Compile's error
  if (compiled.ok()) radixlm::fuzz::DriveMatcher(*compiled, radixlm::fuzz::SeedOf(data, size), 24);
  return 0;
}
