// Helpers shared by the grammar tests: a small synthetic vocabulary, compile-and-match
// shortcuts, and the brute-force mask check.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/matcher.h"
#include "grammar/token_vocab.h"

namespace radixlm::grammar::testing {

// ~300 tokens: every single byte, common multi-byte pieces ("{\"", "true", " \"", digits...),
// UTF-8 characters and lone UTF-8 lead/continuation bytes, two byte-less special tokens and
// an EOS id (kSyntheticEos).
std::shared_ptr<const TokenVocab> SyntheticVocab();
constexpr int32_t kSyntheticEos = 0;
constexpr int32_t kSyntheticSpecial = 1;  // no bytes: never allowed

std::shared_ptr<const CompiledGrammar> MustCompile(GrammarKind kind, const std::string& text,
                                                   const CompileOptions& options = {});

// Compiles `text` and reports whether `input` as a whole is accepted (AcceptBytes then
// CanTerminate).
bool FullMatch(const CompiledGrammar& grammar, const std::string& input);

// Compares FillTokenMask against AcceptToken on a clone for every token id of the vocabulary.
// Returns "" if they agree, else a description of the first disagreements.
std::string CheckMaskBruteForce(const Matcher& matcher);

// Random walk of `steps` tokens from a fresh matcher, checking the mask brute force at every
// state (deterministic for a given seed). Returns "" or the first failure; *walked (if given)
// receives the text generated.
std::string RandomWalkCheck(std::shared_ptr<const CompiledGrammar> grammar, int steps,
                            uint32_t seed, std::string* walked = nullptr);

// Readable bytes for failure messages.
std::string Printable(const std::string& bytes);

}  // namespace radixlm::grammar::testing
