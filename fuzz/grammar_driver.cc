#include "grammar_driver.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "grammar/matcher.h"
#include "sampling/token_bitmask.h"

namespace radixlm::fuzz {
namespace {

constexpr int32_t kEos = 0;

std::vector<int32_t> MaskOf(const grammar::Matcher& matcher) {
  std::vector<int32_t> mask(BitmaskWords(matcher.grammar().vocab().size()));
  matcher.FillTokenMask(mask);
  return mask;
}

bool Allowed(const std::vector<int32_t>& mask, int32_t id) {
  return (static_cast<uint32_t>(mask[id / 32]) >> (id % 32)) & 1u;
}

[[noreturn]] void Fail(const char* what, int step) {
  fprintf(stderr, "grammar driver: %s (step %d)\n", what, step);
  std::abort();
}

}  // namespace

std::shared_ptr<const grammar::TokenVocab> FuzzVocab() {
  static const std::shared_ptr<const grammar::TokenVocab> vocab = [] {
    std::vector<std::string> tokens = {"</s>"};  // EOS: its bytes are cleared
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
    for (const char* t : {"{\"",    "\"}",   "\": ",     "\", \"",      "[",   "], ", "true",
                          "false",  "null",  "name",     "abc",         "123", "0.5", "-1",
                          "é",      "日本",  "😀",        "\n",          "  ",  ", ",  "hello",
                          " world", "2024-", "T00:",     "\\\"",        "\\n", "{}",  "[]",
                          "::=",    "\xC3",  "\xE6\x97", "\xF0\x9F\x98"}) {
      tokens.push_back(t);
    }
    return grammar::TokenVocab::Create(std::move(tokens), {kEos});
  }();
  return vocab;
}

grammar::CompileOptions FuzzCompileOptions() {
  grammar::CompileOptions options;
  options.max_dfa_states = 2000;
  options.max_nfa_states = 20000;
  return options;
}

void DriveMatcher(std::shared_ptr<const grammar::CompiledGrammar> grammar, uint64_t seed,
                  int max_steps) {
  grammar::Matcher matcher(grammar);
  const int32_t vocab_size = grammar->vocab().size();
  const std::vector<int32_t> first_mask = MaskOf(matcher);
  for (int step = 0; step < max_steps && !matcher.IsTerminated(); ++step) {
    const std::vector<int32_t> mask = MaskOf(matcher);
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < vocab_size; ++id) {
      if (Allowed(mask, id)) allowed.push_back(id);
    }
    if (allowed.empty()) Fail("no token allowed before termination", step);
    if (Allowed(mask, kEos) != matcher.CanTerminate()) Fail("EOS bit != CanTerminate", step);
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    // Prefer not to end at once, so the walk goes somewhere.
    int32_t id = allowed[(seed >> 33) % allowed.size()];
    if (id == kEos && allowed.size() > 1 && (seed & 3) != 0) id = allowed[1];
    if (!matcher.AcceptToken(id)) Fail("an allowed token was rejected", step);
    if ((seed >> 8) % 4 == 0) {
      const std::string forced = matcher.ForcedBytes();
      if (!forced.empty() && !matcher.Clone().AcceptBytes(forced)) {
        Fail("forced bytes were rejected", step);
      }
    }
  }
  if (!matcher.Rollback(matcher.num_steps()).ok()) Fail("rollback of every step failed", -1);
  if (MaskOf(matcher) != first_mask) Fail("rollback did not restore the first mask", -1);
}

uint64_t SeedOf(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace radixlm::fuzz
