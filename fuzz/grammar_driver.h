// What the grammar fuzz targets share: a small vocabulary and a driver that decodes under a
// compiled grammar the way the sampler does (mask → pick an allowed token → accept it).
#pragma once

#include <cstdint>
#include <memory>

#include "grammar/compiled_grammar.h"
#include "grammar/token_vocab.h"

namespace radixlm::fuzz {

// Id 0 is EOS; then every single byte and a few multi-byte tokens (JSON punctuation,
// keywords, UTF-8 characters and split UTF-8 sequences), so every byte string is reachable.
std::shared_ptr<const grammar::TokenVocab> FuzzVocab();

// Limits small enough that one input compiles in well under a second under the sanitizers.
grammar::CompileOptions FuzzCompileOptions();

// Decodes up to `max_steps` tokens with a Matcher, choosing among the allowed tokens by
// `seed`, and checks the matcher's contracts: a non-terminated matcher allows some token
// (every byte is a token), an allowed token is accepted, forced bytes are accepted, and
// rolling back returns to the same mask. Aborts when one fails.
void DriveMatcher(std::shared_ptr<const grammar::CompiledGrammar> grammar, uint64_t seed,
                  int max_steps);

// FNV-1a of the input: a seed that changes with it.
uint64_t SeedOf(const uint8_t* data, size_t size);

}  // namespace radixlm::fuzz
