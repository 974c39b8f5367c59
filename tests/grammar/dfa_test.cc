// MinimizeDfa against a plain reference: Moore's refinement over all 256 bytes with each
// signature a whole vector in a std::map (the implementation groups bytes into classes and
// refines blocks with Hopcroft's algorithm). On random automata both must give the same table,
// and the result must be minimal and accept what the input accepts.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "grammar/dfa.h"

namespace radixlm::grammar {
namespace {

// The minimal automaton's table in the implementation's numbering: classes in first-seen
// order from the start state, walking successors byte by byte.
struct Table {
  std::vector<int32_t> next;
  std::vector<uint8_t> accepting;
  bool operator==(const Table&) const = default;
};

Table TableOf(const Dfa& dfa) {
  Table t;
  for (int32_t s = 0; s < dfa.num_states(); ++s) {
    t.accepting.push_back(dfa.IsAccepting(s));
    for (int b = 0; b < 256; ++b) t.next.push_back(dfa.Next(s, static_cast<uint8_t>(b)));
  }
  return t;
}

Table ReferenceMinimize(const Dfa& dfa) {
  const int32_t n = dfa.num_states();
  std::vector<int32_t> cls(n);
  for (int32_t s = 0; s < n; ++s) cls[s] = dfa.IsAccepting(s);
  size_t classes = 0;
  while (true) {
    std::map<std::vector<int32_t>, int32_t> ids;
    std::vector<int32_t> next_cls(n);
    for (int32_t s = 0; s < n; ++s) {
      std::vector<int32_t> sig = {cls[s]};
      for (int b = 0; b < 256; ++b) {
        const int32_t t = dfa.Next(s, static_cast<uint8_t>(b));
        sig.push_back(t == Dfa::kDead ? -1 : cls[t]);
      }
      next_cls[s] = ids.emplace(sig, static_cast<int32_t>(ids.size())).first->second;
    }
    cls = next_cls;
    if (ids.size() == classes) break;
    classes = ids.size();
  }
  std::vector<int32_t> id(classes, -1), rep;
  auto id_of = [&](int32_t s) {
    if (id[cls[s]] < 0) id[cls[s]] = static_cast<int32_t>(rep.size()), rep.push_back(s);
    return id[cls[s]];
  };
  id_of(dfa.start());
  Table t;
  for (size_t i = 0; i < rep.size(); ++i) {
    t.accepting.push_back(dfa.IsAccepting(rep[i]));
    for (int b = 0; b < 256; ++b) {
      const int32_t next = dfa.Next(rep[i], static_cast<uint8_t>(b));
      t.next.push_back(next == Dfa::kDead ? Dfa::kDead : id_of(next));
    }
  }
  return t;
}

// A random automaton over a few byte values (the rest dead), with some edges missing. With
// copies > 1 every state of a random base automaton is copied that often and each edge goes
// to a random copy of its target: copies of one state are equivalent, so there is much to merge.
Dfa RandomDfa(std::mt19937& rng, int32_t base, int32_t copies, const std::string& alphabet) {
  const int32_t n = base * copies;
  std::vector<int32_t> next(static_cast<size_t>(n) * 256, Dfa::kDead);
  std::vector<uint8_t> accepting(n);
  std::uniform_int_distribution<int32_t> state(0, base - 1), copy(0, copies - 1);
  for (int32_t s = 0; s < base; ++s) {
    const bool accept = rng() % 3 == 0;
    for (char c : alphabet) {
      const bool edge = rng() % 4 != 0;
      const int32_t target = state(rng);
      for (int32_t k = 0; k < copies; ++k) {
        accepting[k * base + s] = accept;
        if (edge) next[(k * base + s) * 256 + static_cast<uint8_t>(c)] = copy(rng) * base + target;
      }
    }
  }
  return Dfa::FromTable(0, std::move(next), std::move(accepting));
}

bool Accepts(const Dfa& dfa, const std::string& text) {
  const int32_t s = dfa.Walk(dfa.start(), text.data(), text.size());
  return s != Dfa::kDead && dfa.IsAccepting(s);
}

TEST(DfaTest, MinimizeMatchesTheReferenceAndKeepsTheLanguage) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab\x01\xff";
  int nontrivial = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const bool large = trial % 50 == 0;  // a few of several hundred states
    const Dfa raw = RandomDfa(rng, large ? 150 : 1 + trial % 20, 1 + trial % 3, alphabet);
    const Dfa trimmed = TrimDfa(raw);
    const Dfa minimal = MinimizeDfa(trimmed);
    ASSERT_EQ(TableOf(minimal), ReferenceMinimize(trimmed)) << "trial " << trial;
    nontrivial += minimal.num_states() < trimmed.num_states();
    for (int i = 0; i < 50; ++i) {
      std::string text;
      for (int len = rng() % 12; len > 0; --len) text += alphabet[rng() % alphabet.size()];
      ASSERT_EQ(Accepts(minimal, text), Accepts(raw, text)) << "trial " << trial;
    }
  }
  EXPECT_GT(nontrivial, 100);  // the trials do merge states
}

// Chains of equivalent states (the shape of a bounded-length string) collapse to one chain.
TEST(DfaTest, MinimizeMergesParallelChains) {
  // Two copies of "a{0,5}" side by side: states 0..5 and 6..11, the start choosing by 'x'/'y'.
  const int32_t n = 13;
  std::vector<int32_t> next(static_cast<size_t>(n) * 256, Dfa::kDead);
  std::vector<uint8_t> accepting(n, 1);
  accepting[12] = 0;
  next[12 * 256 + 'x'] = 0;
  next[12 * 256 + 'y'] = 6;
  for (int32_t s = 0; s < 5; ++s) next[s * 256 + 'a'] = s + 1, next[(s + 6) * 256 + 'a'] = s + 7;
  const Dfa minimal = MinimizeDfa(TrimDfa(Dfa::FromTable(12, std::move(next), accepting)));
  EXPECT_EQ(minimal.num_states(), 7);
  EXPECT_EQ(minimal.Next(0, 'x'), minimal.Next(0, 'y'));
}

}  // namespace
}  // namespace radixlm::grammar
