#include "benchclient/workload.h"

#include <algorithm>
#include <random>

#include "tokenizer/tokenizer.h"

namespace radixlm::benchclient {
namespace {

constexpr const char* kWords[] = {
    "time",    "year",    "people", "way",     "day",     "man",    "thing",   "woman",  "life",
    "child",   "world",   "school", "state",   "family",  "student", "group", "country", "problem",
    "hand",    "part",    "place",  "case",    "week",    "company", "system", "program",
    "question",
    "work",    "number",  "night",  "point",   "home",    "water",  "room",    "mother", "area",
    "money",   "story",   "fact",   "month",   "lot",     "right",  "study",   "book",   "eye",
    "job",     "word",    "business", "issue", "side",    "kind",   "head",    "house",  "service",
    "friend",  "father",  "power",  "hour",    "game",    "line",   "end",     "member", "law",
    "car",     "city",    "name",   "team",    "minute",  "idea",   "kid",     "body",   "back",
    "parent",  "face",    "others", "level",   "office",  "door",   "health",  "person", "art",
    "war",     "history", "party",  "result",  "change",  "morning", "reason", "research",
    "girl",    "guy",     "moment", "air",     "teacher", "force",  "order",   "good",   "new",
    "first",   "last",    "long",   "great",   "little",  "own",    "other",   "old",    "big",
    "high",    "small",   "large",  "young",   "early",   "public", "bad",     "able",   "and",
    "the",     "of",      "to",     "in",      "for",     "on",     "with",    "at",     "by",
    "from",    "about",   "into",   "over",    "after",   "say",    "get",     "make",   "go",
    "know",    "take",    "see",    "come",    "think",   "look",   "want",    "give",   "use",
    "find",    "tell",    "ask",    "seem",    "feel",    "try",    "leave",   "call",   "river",
    "garden",  "winter",  "summer", "music",   "market",  "paper",  "light",   "stone",  "table"};
constexpr int kNumWords = sizeof(kWords) / sizeof(kWords[0]);

std::string RandomWords(std::mt19937_64& rng, int64_t n) {
  std::uniform_int_distribution<int> pick(0, kNumWords - 1);
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ' ';
    out += kWords[pick(rng)];
  }
  return out;
}

// Random text of exactly `len` tokens (as `tokenizer` counts them, without special tokens), or
// `len` words without a tokenizer. Returns the length actually produced.
int64_t RandomText(std::mt19937_64& rng, int64_t len, const tokenizer::Tokenizer* tokenizer,
                   std::string* text) {
  if (len <= 0) {
    text->clear();
    return 0;
  }
  if (tokenizer == nullptr) {
    *text = RandomWords(rng, len);
    return len;
  }
  // Common words are about one token each (plus the space); twice as many leaves margin.
  std::vector<int32_t> ids =
      tokenizer->Encode(RandomWords(rng, 2 * len + 8), /*add_special=*/false,
                        /*parse_special=*/false);
  if (static_cast<int64_t>(ids.size()) > len) ids.resize(len);
  *text = tokenizer->Decode(ids, /*skip_special=*/true);
  return static_cast<int64_t>(ids.size());
}

int64_t UniformLen(std::mt19937_64& rng, int64_t len, double ratio) {
  const int64_t lo = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(len) * ratio));
  if (lo >= len) return len;
  return std::uniform_int_distribution<int64_t>(lo, len)(rng);
}

}  // namespace

std::vector<BenchPrompt> MakeRandomWorkload(const RandomWorkloadOptions& options,
                                            const tokenizer::Tokenizer* tokenizer, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<BenchPrompt> prompts(std::max(0, options.num_prompts));
  for (BenchPrompt& p : prompts) {
    const int64_t in = UniformLen(rng, options.input_len, options.range_ratio);
    p.prompt_len = RandomText(rng, in, tokenizer, &p.text);
    p.output_len = UniformLen(rng, options.output_len, options.range_ratio);
  }
  return prompts;
}

std::vector<BenchPrompt> MakeSharedPrefixWorkload(const SharedPrefixWorkloadOptions& options,
                                                  const tokenizer::Tokenizer* tokenizer,
                                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<BenchPrompt> prompts;
  for (int g = 0; g < options.groups; ++g) {
    std::string system;
    const int64_t system_len = RandomText(rng, options.system_len, tokenizer, &system);
    for (int q = 0; q < options.prompts_per_group; ++q) {
      std::string question;
      const int64_t question_len = RandomText(rng, options.question_len, tokenizer, &question);
      BenchPrompt p;
      p.text = system + "\n" + question;
      p.prompt_len = system_len + question_len;
      p.output_len = options.output_len;
      prompts.push_back(std::move(p));
    }
  }
  std::shuffle(prompts.begin(), prompts.end(), rng);
  return prompts;
}

}  // namespace radixlm::benchclient
