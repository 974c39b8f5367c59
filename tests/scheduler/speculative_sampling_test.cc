// Sampled speculative decoding keeps the target model's distribution, with n-gram drafts and
// with a draft model (STANDALONE); and the draft model's vocabulary check.
//
// 10,000 seeded requests for the same prompt run through the scheduler over a tiny random-weight
// GGUF (written by tests/model's writer), with speculation on and off, at temperature 0.8 with
// top-k and top-p. Their first output tokens (t0 from the prefill; t1, t2 from the verify step,
// where drafts are sometimes right and sometimes wrong) are counted and compared, by a
// chi-square test, with the exact distribution: the reference forward's logits under the same
// temperature / top-k / top-p filters, computed here independently of the sampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine/draft_model.h"
#include "engine/model_backed_runner.h"
#include "engine/scheduler_bridge.h"
#include "model/model.h"
#include "model/reference_model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm::testing {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using model::testing::ReferenceModel;
using model::testing::TinyModelSpec;

constexpr int kDraws = 10000;
constexpr int kCounted = 3;  // t0, t1, t2
const std::vector<int32_t> kPrompt = {5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6, 7};

SamplingParams Params() {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 4;
  p.top_p = 0.9f;
  p.max_new_tokens = 4;  // t0, then a verify step with up to two drafted tokens
  p.ignore_eos = true;
  return p;
}

TinyModelSpec Spec(uint32_t seed) {
  TinyModelSpec s;
  s.vocab = 64;
  s.tied_output = false;
  s.seed = seed;
  return s;
}

std::unique_ptr<ModelBackedRunner> MakeRunner(const std::vector<uint8_t>& gguf, int64_t slots) {
  auto model = model::Model::FromGguf(
      ParseTinyModel(gguf), {.n_threads = 1, .max_batch_tokens = 4096, .max_context = 64});
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  auto runner = ModelBackedRunner::Create(std::move(*model), slots);
  EXPECT_TRUE(runner.ok()) << runner.status().ToString();
  return std::move(*runner);
}

struct Draws {
  std::vector<std::vector<int32_t>> outputs;       // per request
  std::map<std::vector<int32_t>, int64_t> counts;  // of the first kCounted tokens
  SchedulerStats stats;
};

// Where drafts come from. kDraftTree: the draft model drafts one level of its top-3 tokens
// (the verify step has room for two of them: sibling drafts, one of which may be kept).
enum class Drafts { kNone, kNgramBfs, kNgramProb, kDraftModel, kDraftTree };

// draft_gguf: the draft model of kDraftModel.
Draws DrawMany(const std::vector<uint8_t>& gguf, Drafts drafts,
               const std::vector<uint8_t>& draft_gguf = {}) {
  SchedulerConfig c;
  c.max_total_tokens = 8192;
  c.max_running_requests = 256;
  c.chunked_prefill_size = 2048;
  c.max_prefill_tokens = 2048;
  c.schedule_policy = SchedulePolicyKind::kFcfs;
  c.speculative_ngram = drafts == Drafts::kNgramBfs || drafts == Drafts::kNgramProb;
  c.ngram.match_type =
      drafts == Drafts::kNgramProb ? spec::NgramMatchType::kProb : spec::NgramMatchType::kBfs;
  c.speculative_draft_model = drafts == Drafts::kDraftModel || drafts == Drafts::kDraftTree;
  if (drafts == Drafts::kDraftTree) {
    c.speculative_eagle_topk = 3;
    c.speculative_num_steps = 1;
    c.speculative_num_draft_tokens = 4;
  }
  c.speculative_max_draft_tokens_per_batch = 1024;  // every request drafts
  auto runner = MakeRunner(gguf, c.max_total_tokens + 1);
  std::unique_ptr<ModelBackedRunner> draft_runner;
  if (c.speculative_draft_model) draft_runner = MakeRunner(draft_gguf, c.max_total_tokens + 1);
  Draws d;
  d.outputs.resize(kDraws);
  auto sched = Scheduler::Create(
      c, runner.get(), nullptr,
      [&](RequestOutput&& out) {
        auto& ids = d.outputs[out.id];
        ids.insert(ids.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
      },
      draft_runner.get());
  EXPECT_TRUE(sched.ok()) << sched.status().ToString();
  constexpr int kWave = 1000;
  for (int first = 0; first < kDraws; first += kWave) {
    for (int i = first; i < first + kWave; ++i) {
      RequestInput in;
      in.id = static_cast<uint64_t>(i);
      in.input_ids = kPrompt;
      in.params = Params();
      in.seed = 0x5EED0000u + static_cast<uint64_t>(i);
      EXPECT_TRUE((*sched)->AddRequest(std::move(in)).ok());
    }
    while ((*sched)->HasWork()) {
      const Status s = (*sched)->Step();
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) break;
    }
  }
  for (const auto& ids : d.outputs) {
    EXPECT_EQ(ids.size(), 4u);
    if (ids.size() < kCounted) continue;
    ++d.counts[std::vector<int32_t>(ids.begin(), ids.begin() + kCounted)];
  }
  d.stats = (*sched)->GetStats();
  return d;
}

// The sampler's distribution for one logits row, computed plainly: softmax(logits / T), keep
// the top_k largest (ties to the lower id), renormalize, keep tokens in decreasing probability
// while the mass before them is <= top_p, renormalize.
std::vector<double> FilteredProbs(const std::vector<float>& logits, const SamplingParams& p) {
  const size_t n = logits.size();
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<double> prob(n, 0.0);
  const double max_logit = logits[order[0]];
  double sum = 0;
  const auto k = std::min<size_t>(n, static_cast<size_t>(p.top_k));
  for (size_t i = 0; i < k; ++i) {
    prob[order[i]] = std::exp((logits[order[i]] - max_logit) / p.temperature);
    sum += prob[order[i]];
  }
  double before = 0, kept = 0;
  for (size_t i = 0; i < k; ++i) {
    const double q = prob[order[i]] / sum;
    if (before > p.top_p) {
      prob[order[i]] = 0;
      continue;
    }
    before += q;
    prob[order[i]] = q;
    kept += q;
  }
  for (double& q : prob) q /= kept;
  return prob;
}

// Exact probability of every sequence of kCounted tokens with a non-zero one.
std::map<std::vector<int32_t>, double> ExactDistribution(const ReferenceModel& ref) {
  std::map<std::vector<int32_t>, double> out;
  auto expand = [&](auto& self, std::vector<int32_t> seq, double prob) -> void {
    if (seq.size() == kPrompt.size() + kCounted) {
      out[std::vector<int32_t>(seq.begin() + static_cast<int64_t>(kPrompt.size()), seq.end())] =
          prob;
      return;
    }
    const std::vector<double> next = FilteredProbs(ref.Forward(seq).back(), Params());
    for (size_t t = 0; t < next.size(); ++t) {
      if (next[t] <= 0) continue;
      seq.push_back(static_cast<int32_t>(t));
      self(self, seq, prob * next[t]);
      seq.pop_back();
    }
  };
  expand(expand, kPrompt, 1.0);
  return out;
}

// Chi-square of the counts against the exact distribution (cells expecting fewer than 5 draws
// pooled), against the 1 - 1e-6 quantile of its distribution (Wilson-Hilferty). Draws outside
// the support fail outright.
void ExpectMatches(const std::map<std::vector<int32_t>, int64_t>& counts,
                   const std::map<std::vector<int32_t>, double>& exact, const char* what) {
  double chi2 = 0, pooled_expected = 0;
  int64_t pooled_observed = 0, cells = 0, total = 0;
  for (const auto& [seq, n] : counts) {
    EXPECT_TRUE(exact.count(seq) != 0) << what << ": drew a sequence the filters exclude";
    total += n;
  }
  for (const auto& [seq, p] : exact) {
    const double expected = p * kDraws;
    auto it = counts.find(seq);
    const int64_t observed = it == counts.end() ? 0 : it->second;
    if (expected < 5) {
      pooled_expected += expected;
      pooled_observed += observed;
      continue;
    }
    chi2 += (observed - expected) * (observed - expected) / expected;
    ++cells;
  }
  if (pooled_expected > 0) {
    chi2 += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) /
            std::max(pooled_expected, 1.0);
    ++cells;
  }
  EXPECT_EQ(total, kDraws) << what;
  const double df = static_cast<double>(cells - 1), z = 4.75;
  const double a = 2.0 / (9.0 * df);
  const double critical = df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
  EXPECT_LT(chi2, critical) << what << ": chi-square " << chi2 << " over " << df << " dof";
  EXPECT_GT(df, 10) << what << ": too few cells for a meaningful test";
}

class SpeculativeSamplingTest : public ::testing::TestWithParam<Drafts> {};

TEST_P(SpeculativeSamplingTest, TokenDistributionIsTheModels) {
  static const std::vector<uint8_t> gguf = BuildTinyModel(Spec(3));
  static const auto exact =
      ExactDistribution(ReferenceModel(*ParseTinyModel(gguf), kernels::KvDtype::kF16));
  static const Draws plain = DrawMany(gguf, Drafts::kNone);  // shared by the parameters
  // The draft model is the target itself: its greedy chain is fixed for a given context, and
  // the target's sampler draws it only sometimes (with the probability of its top token).
  const Draws spec = DrawMany(gguf, GetParam(), gguf);
  // Drafts were verified, sometimes kept and sometimes not.
  EXPECT_GT(spec.stats.spec_accepted_tokens, kDraws / 10);
  EXPECT_GT(spec.stats.spec_drafted_tokens - spec.stats.spec_accepted_tokens, kDraws / 10);
  EXPECT_EQ(plain.stats.spec_drafted_tokens, 0);

  ExpectMatches(plain.counts, exact, "without speculation");
  ExpectMatches(spec.counts, exact, "with speculation");
  // Each draw is a function of its seed and the model alone: the same with or without.
  EXPECT_EQ(spec.outputs, plain.outputs);
}

INSTANTIATE_TEST_SUITE_P(DraftSources, SpeculativeSamplingTest,
                         ::testing::Values(Drafts::kNgramBfs, Drafts::kNgramProb,
                                           Drafts::kDraftModel, Drafts::kDraftTree));

// 16 greedy requests on the tiny GGUF `target`, drafted by `draft` (none: plain decoding) with
// four draft steps and top-`topk` drafts; every request's output ids.
std::vector<std::vector<int32_t>> RunGreedy(const std::vector<uint8_t>& target,
                                            const std::vector<uint8_t>* draft, int32_t topk,
                                            int32_t max_draft_tokens_per_batch,
                                            SchedulerStats* stats) {
  SchedulerConfig c;
  c.max_total_tokens = 4096;
  c.max_running_requests = 16;
  c.speculative_draft_model = draft != nullptr;
  c.speculative_num_steps = 4;
  c.speculative_eagle_topk = topk;
  c.speculative_num_draft_tokens = 10;
  c.speculative_max_draft_tokens_per_batch = max_draft_tokens_per_batch;
  // Whole drafts every round (these tests count forward passes and kept tokens; pacing by the
  // kept share would turn 16 sequences' trees down).
  c.speculative_pacing = false;
  auto runner = MakeRunner(target, c.max_total_tokens + 1);
  std::unique_ptr<ModelBackedRunner> draft_runner;
  if (draft != nullptr) draft_runner = MakeRunner(*draft, c.max_total_tokens + 1);
  std::vector<std::vector<int32_t>> outputs(16);
  auto sched = Scheduler::Create(
      c, runner.get(), nullptr,
      [&](RequestOutput&& out) {
        auto& ids = outputs[out.id];
        ids.insert(ids.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
      },
      draft_runner.get());
  EXPECT_TRUE(sched.ok()) << sched.status().ToString();
  for (uint64_t id = 0; id < outputs.size(); ++id) {
    RequestInput in;
    in.id = id;
    for (uint64_t i = 0; i < 6 + id; ++i) in.input_ids.push_back((7 * i + 3 * id) % 60 + 2);
    in.params.temperature = 0;
    in.params.max_new_tokens = 24;
    in.params.ignore_eos = true;
    EXPECT_TRUE((*sched)->AddRequest(std::move(in)).ok());
  }
  while ((*sched)->HasWork()) {
    const Status s = (*sched)->Step();
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) break;
  }
  *stats = (*sched)->GetStats();
  return outputs;
}

// Greedy requests on tiny GGUFs with a draft model: the target as its own draft has every
// draft kept; another tiny model's drafts are mostly rejected; outputs equal plain decoding.
TEST(DraftModelGreedyTest, OutputsEqualPlainDecoding) {
  const std::vector<uint8_t> target = BuildTinyModel(Spec(3)), other = BuildTinyModel(Spec(4));
  auto run = [&](const std::vector<uint8_t>* draft, SchedulerStats* stats) {
    return RunGreedy(target, draft, 1, 32, stats);
  };
  SchedulerStats plain_stats, same_stats, other_stats;
  const auto plain = run(nullptr, &plain_stats);
  EXPECT_EQ(run(&target, &same_stats), plain);
  EXPECT_GT(same_stats.spec_drafted_tokens, 100);
  EXPECT_EQ(same_stats.spec_accepted_tokens, same_stats.spec_drafted_tokens);
  EXPECT_LT(same_stats.forward_passes * 2, plain_stats.forward_passes);
  EXPECT_EQ(run(&other, &other_stats), plain);
  EXPECT_LT(other_stats.spec_accepted_tokens * 2, other_stats.spec_drafted_tokens);
}

// Top-3 draft trees (up to 10 nodes, 4 levels) on tiny GGUFs: outputs equal plain decoding;
// with the target as its own draft the greedy chain inside each tree is kept whole, so the run
// takes exactly the forward passes of chain drafting, with side branches drafted besides.
TEST(DraftModelGreedyTest, TreeDraftsEqualPlainDecoding) {
  const std::vector<uint8_t> target = BuildTinyModel(Spec(3)), other = BuildTinyModel(Spec(4));
  SchedulerStats plain_stats, chain_stats, tree_stats, other_stats;
  const auto plain = RunGreedy(target, nullptr, 1, 4096, &plain_stats);
  EXPECT_EQ(RunGreedy(target, &target, 1, 4096, &chain_stats), plain);
  EXPECT_EQ(RunGreedy(target, &target, 3, 4096, &tree_stats), plain);
  EXPECT_EQ(tree_stats.forward_passes, chain_stats.forward_passes);
  EXPECT_EQ(tree_stats.spec_accepted_tokens, chain_stats.spec_accepted_tokens);
  EXPECT_EQ(chain_stats.spec_accepted_tokens, chain_stats.spec_drafted_tokens);
  EXPECT_GT(tree_stats.spec_drafted_tokens, chain_stats.spec_drafted_tokens + 100);
  EXPECT_LT(tree_stats.forward_passes * 2, plain_stats.forward_passes);
  EXPECT_EQ(RunGreedy(target, &other, 3, 4096, &other_stats), plain);
  EXPECT_GT(other_stats.spec_drafted_tokens, 100);
}

// The draft model of --speculative-algorithm STANDALONE must have the target's vocabulary.
TEST(DraftModelVocabularyTest, SizeAndTokensMustMatch) {
  auto with_tokens = [](int64_t vocab, int changed) {
    TinyModelSpec s = Spec(5);
    s.vocab = vocab;
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < vocab; ++i) tokens.push_back("tok" + std::to_string(i));
    if (changed >= 0) tokens[changed] = "other";
    s.extra_metadata.push_back({"tokenizer.ggml.tokens", gguf::Value::StrArr(tokens)});
    return BuildTinyModel(s);
  };
  const auto target = with_tokens(64, -1), same = with_tokens(64, -1);
  const auto renamed = with_tokens(64, 17), smaller = with_tokens(48, -1);
  const auto untokenized = BuildTinyModel(Spec(6));
  const auto t = ParseTinyModel(target);
  EXPECT_TRUE(CheckSameVocabulary(*t, *ParseTinyModel(same)).ok());
  const Status token = CheckSameVocabulary(*t, *ParseTinyModel(renamed));
  EXPECT_EQ(token.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(token.message().find("token 17 is 'other'"), std::string::npos) << token.message();
  const Status size = CheckSameVocabulary(*t, *ParseTinyModel(smaller));
  EXPECT_NE(size.message().find("48 tokens"), std::string::npos) << size.message();
  EXPECT_FALSE(CheckSameVocabulary(*t, *ParseTinyModel(untokenized)).ok());
  EXPECT_TRUE(CheckSameVocabulary(*ParseTinyModel(untokenized), *ParseTinyModel(untokenized)).ok());
}

TEST(DraftModelVocabularyTest, SpeculativeFlagsResolve) {
  auto resolve = [](EngineConfig c) { return ToSchedulerConfig(c, 1 << 14, 2048); };
  EngineConfig c;
  c.speculative_algorithm = "STANDALONE";
  auto missing = resolve(c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--speculative-draft-model-path"), std::string::npos);
  c.speculative_draft_model_path = "draft.gguf";
  c.speculative_num_steps = 5;
  auto ok = resolve(c);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->speculative_draft_model);
  EXPECT_FALSE(ok->speculative_ngram);
  EXPECT_EQ(ok->speculative_num_steps, 5);
  c.speculative_eagle_topk = 4;  // trees of up to --speculative-num-draft-tokens nodes
  c.speculative_num_draft_tokens = 16;
  auto tree = resolve(c);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->speculative_eagle_topk, 4);
  EXPECT_EQ(tree->speculative_num_draft_tokens, 16);
  c.speculative_eagle_topk = 0;
  EXPECT_NE(resolve(c).status().message().find("--speculative-eagle-topk"), std::string::npos);
  c.speculative_eagle_topk = 1;
  c.speculative_algorithm = "NGRAM";  // a draft model path without STANDALONE
  EXPECT_FALSE(resolve(c).ok());
  c.speculative_algorithm = "";
  EXPECT_FALSE(resolve(c).ok());
  c.speculative_draft_model_path = "";
  c.speculative_algorithm = "EAGLE";
  EXPECT_FALSE(resolve(c).ok());
}

}  // namespace
}  // namespace radixlm::testing
