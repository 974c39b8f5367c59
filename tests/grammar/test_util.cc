#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "sampling/token_bitmask.h"

namespace radixlm::grammar::testing {

std::shared_ptr<const TokenVocab> SyntheticVocab() {
  static const std::shared_ptr<const TokenVocab> vocab = [] {
    std::vector<std::string> tokens = {"</s>", ""};  // EOS (bytes cleared), a special token
    tokens.push_back("");                            // another byte-less control token
    for (int b = 1; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
    tokens.push_back(std::string(1, '\0'));
    for (const char* t :
         {"{\"",  "\"}",      "\":",     "\": ",    "\",",    "\", \"", " \"", "{ \"", "[",
          "[1",   "],",       "true",    "false",   "null",   "nul",    "tr",  "name", "na",
          "me",   "\"name\"", "age",     "ab",      "abc",    "bc",     "12",  "123",  "00",
          "0.",   "-1",       "e+",      "é",       "日本",   "😀",      "ß",   "\n",   "  ",
          ", ",   ",\"",      "hello",   "hello ",  " world", "+",      "*(",  "))",   "ab@",
          ".com", "2024-",    "-01",     "T00:",    ":00",    "Z\"",    "0x",  "aaa",  "aa",
          "xx",   "\"a",      "a\"",     "\\\"",    "\\n",    "{}",     "[]",  "((",   "\":[",
          "1,",   " 2",       "{\"x\":", "\"red\"", "re",     "red",    "yes", "no"}) {
      tokens.push_back(t);
    }
    tokens.push_back("\xC3");          // lone UTF-8 lead byte of "é"
    tokens.push_back("\xA9");          // its continuation byte
    tokens.push_back("\xE6\x97");      // first two bytes of "日"
    tokens.push_back("\xF0\x9F\x98");  // first three bytes of "😀"
    tokens.push_back("abc");           // a duplicate spelling under another id
    return TokenVocab::Create(std::move(tokens), {kSyntheticEos});
  }();
  return vocab;
}

std::shared_ptr<const CompiledGrammar> MustCompile(GrammarKind kind, const std::string& text,
                                                   const CompileOptions& options) {
  auto compiled = CompiledGrammar::Compile(kind, text, SyntheticVocab(), options);
  EXPECT_TRUE(compiled.ok()) << GrammarKindName(kind) << " " << text << ": "
                             << compiled.status().ToString();
  return compiled.ok() ? *compiled : nullptr;
}

bool FullMatch(const CompiledGrammar& grammar, const std::string& input) {
  // A matcher wants shared ownership; the tests keep the grammar alive, so alias it.
  Matcher m(std::shared_ptr<const CompiledGrammar>(std::shared_ptr<void>(), &grammar));
  return m.AcceptBytes(input) && m.CanTerminate();
}

std::string CheckMaskBruteForce(const Matcher& matcher) {
  const TokenVocab& vocab = matcher.grammar().vocab();
  std::vector<int32_t> mask(BitmaskWords(vocab.size()) + 1, -1);
  matcher.FillTokenMask(mask);
  std::string errors;
  int shown = 0;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    Matcher probe = matcher.Clone();
    const bool expected = probe.AcceptToken(id);
    if (IsTokenAllowed(mask, id) != expected && shown++ < 5) {
      errors += "token " + std::to_string(id) + " '" + Printable(vocab.bytes(id)) +
                "': mask says " + (expected ? "disallowed" : "allowed") + "; ";
    }
  }
  for (size_t w = BitmaskWords(vocab.size()); w < mask.size(); ++w) {
    if (mask[w] != 0) errors += "words past the vocabulary not zeroed; ";
  }
  return errors;
}

std::string RandomWalkCheck(std::shared_ptr<const CompiledGrammar> grammar, int steps,
                            uint32_t seed, std::string* walked) {
  std::mt19937 rng(seed);
  Matcher m(grammar);
  std::string text;
  for (int step = 0; step <= steps; ++step) {
    const std::string err = CheckMaskBruteForce(m);
    if (!err.empty()) return "after '" + Printable(text) + "': " + err;
    std::vector<int32_t> mask(BitmaskWords(grammar->vocab().size()));
    m.FillTokenMask(mask);
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < grammar->vocab().size(); ++id) {
      if (IsTokenAllowed(mask, id) && !grammar->vocab().IsEos(id)) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    const int32_t pick = allowed[rng() % allowed.size()];
    if (!m.AcceptToken(pick)) return "allowed token " + std::to_string(pick) + " rejected";
    text += grammar->vocab().bytes(pick);
    if (walked) *walked = text;
  }
  return "";
}

std::string Printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace radixlm::grammar::testing
