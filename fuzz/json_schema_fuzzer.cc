// JSON schema → regex → DFA (CompiledGrammar, GrammarKind::kJsonSchema).
//
// Input: the schema text. The first byte's low bit picks the whitespace option (Python's
// separators or outlines' "[ ]?"), so both lowerings are covered without a framing byte the
// seed files would need. Schemas that compile are decoded under (grammar_driver.h).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "grammar/json_schema.h"
#include "grammar_driver.h"

using radixlm::grammar::CompiledGrammar;
using radixlm::grammar::GrammarKind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view schema(reinterpret_cast<const char*>(data), size);
  radixlm::grammar::CompileOptions options = radixlm::fuzz::FuzzCompileOptions();
  if (size > 0 && (data[0] & 1)) options.json.whitespace_pattern = "[ ]?";
  const radixlm::Status valid =
      CompiledGrammar::Validate(GrammarKind::kJsonSchema, schema, options);
  auto compiled = CompiledGrammar::Compile(GrammarKind::kJsonSchema, schema,
                                           radixlm::fuzz::FuzzVocab(), options);
  if (!valid.ok() && compiled.ok()) std::abort();  // Validate's error is Compile's error
  if (compiled.ok()) radixlm::fuzz::DriveMatcher(*compiled, radixlm::fuzz::SeedOf(data, size), 32);
  return 0;
}
