// select: the three choice methods on given logprobs, and select on the fake engine checked
// against logprobs computed directly from the fake model's logits.
#include <gtest/gtest.h>

#include <cmath>

#include "fake_backend.h"
#include "frontend/frontend.h"
#include "testing/fake_token_text.h"

namespace radixlm::frontend {
namespace {

using testing::FakeSetup;
using testing::MakeFakeSetup;
using testing::ReferenceLogprob;

TEST(FrontendSelectMethodTest, TokenLengthNormalizedPicksTheHighestMeanNotTheHighestSum) {
  // Option 0 has the higher total (-2 vs -3) but the lower mean (-2 vs -1).
  auto d = ChooseOption(SelectMethod::kTokenLengthNormalized, {{-2.0}, {-1.0, -1.0, -1.0}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->chosen, 1u);
  EXPECT_DOUBLE_EQ(d->scores[0], -2.0);
  EXPECT_DOUBLE_EQ(d->scores[1], -1.0);
}

TEST(FrontendSelectMethodTest, GreedyTokenDecidesAtTheFirstPositionThatDiffers) {
  // Position 0 ties options 0 and 1 (option 2 drops out); position 1 decides for option 1
  // although option 0 has the better mean overall.
  auto d = ChooseOption(SelectMethod::kGreedyToken,
                        {{-0.5, -0.6, 0.0, 0.0}, {-0.5, -0.5, -9.0}, {-3.0, 0.0}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->chosen, 1u);
  // A shorter option is padded with its own mean: option 1 ([-1]) beats option 0 at pos 1.
  auto padded = ChooseOption(SelectMethod::kGreedyToken, {{-1.0, -2.0}, {-1.0}});
  EXPECT_EQ(padded->chosen, 1u);
}

TEST(FrontendSelectMethodTest, UnconditionalNormalizationSubtractsTheOptionsOwnLikelihood) {
  // Given the prefix option 0 is likelier, but it is likely anyway; option 1 gains more.
  const std::vector<std::vector<double>> conditional = {{-1.0, -1.0}, {-2.0, -2.0}};
  const std::vector<std::vector<double>> alone = {{0.0, -0.5}, {0.0, -4.0}};
  auto d = ChooseOption(SelectMethod::kUnconditionalLikelihoodNormalized, conditional, alone);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->chosen, 1u);
  EXPECT_DOUBLE_EQ(d->scores[0], ((-1.0 - 0.0) + (-1.0 + 0.5)) / 2);
  EXPECT_DOUBLE_EQ(d->scores[1], ((-2.0 - 0.0) + (-2.0 + 4.0)) / 2);
  EXPECT_FALSE(ChooseOption(SelectMethod::kUnconditionalLikelihoodNormalized, conditional).ok());
  EXPECT_FALSE(ChooseOption(SelectMethod::kTokenLengthNormalized, {{-1.0}, {}}).ok());
}

// Mean logprob of the option's tokens given the prefix, from the fake model's logits.
double ReferenceMean(const FakeSetup& f, const std::string& prefix, const std::string& option) {
  FakeTokenTextCodec codec;
  const size_t p = codec.Encode(prefix)->size();
  const std::vector<int32_t> ids = *codec.Encode(prefix + option);
  double sum = 0;
  for (size_t i = p; i < ids.size(); ++i) {
    sum += ReferenceLogprob(*f.runner, std::span<const int32_t>(ids).first(i), ids[i]);
  }
  return sum / static_cast<double>(ids.size() - p);
}

TEST(FrontendSelectTest, SelectPicksTheOptionWithTheHighestMeanLogprobGivenThePrefix) {
  FakeSetup f = MakeFakeSetup();
  const std::string prefix = "the answer is";
  const std::vector<std::string> options = {" yes", " no", " maybe not", " a", " bob"};
  std::optional<SelectDecision> decision;
  ProgramResult r = frontend::Run(*f.backend, {}, [&](State& s) {
    s += prefix;
    s += select("v", options);
    decision = s.select_decision("v");
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_TRUE(decision.has_value());
  size_t best = 0;
  std::vector<double> reference;
  for (size_t i = 0; i < options.size(); ++i) {
    reference.push_back(ReferenceMean(f, prefix, options[i]));
    EXPECT_NEAR(decision->scores[i], reference[i], 1e-4) << options[i];
    if (reference[i] > reference[best]) best = i;
  }
  EXPECT_EQ(decision->chosen, best);
  EXPECT_EQ(r.variables.at("v"), options[best]);
  EXPECT_EQ(r.text, prefix + options[best]);
}

TEST(FrontendSelectTest, UnconditionalNormalizationScoresTheOptionTokensAlone) {
  FakeSetup f = MakeFakeSetup();
  const std::string prefix = "pick one,";
  const std::vector<std::string> options = {" red", " green", " blue"};
  std::optional<SelectDecision> d;
  ProgramResult r = frontend::Run(*f.backend, {}, [&](State& s) {
    s += prefix;
    s += select("c", options, SelectMethod::kUnconditionalLikelihoodNormalized);
    d = s.select_decision("c");
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  FakeTokenTextCodec codec;
  const size_t p = codec.Encode(prefix)->size();
  size_t best = 0;
  std::vector<double> expected;
  for (const std::string& option : options) {
    const std::vector<int32_t> ids = *codec.Encode(prefix + option);
    const std::vector<int32_t> own(ids.begin() + static_cast<ptrdiff_t>(p), ids.end());
    double sum = 0;
    for (size_t i = p; i < ids.size(); ++i) {
      const double given =
          ReferenceLogprob(*f.runner, std::span<const int32_t>(ids).first(i), ids[i]);
      const size_t j = i - p;  // the option's tokens alone: the first has nothing before it
      const double alone =
          j == 0 ? 0.0
                 : ReferenceLogprob(*f.runner, std::span<const int32_t>(own).first(j), own[j]);
      sum += given - alone;
    }
    expected.push_back(sum / static_cast<double>(own.size()));
    if (expected.back() > expected[best]) best = expected.size() - 1;
  }
  for (size_t i = 0; i < options.size(); ++i) EXPECT_NEAR(d->scores[i], expected[i], 1e-4);
  EXPECT_EQ(d->chosen, best);
}

TEST(FrontendSelectTest, AnOptionAddingNoTokensIsAnError) {
  FakeSetup f = MakeFakeSetup();
  ProgramResult r = frontend::Run(*f.backend, {}, [](State& s) {
    s += "x";
    s += select("v", {"a", ""});
  });
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
  ProgramResult none = frontend::Run(*f.backend, {}, [](State& s) { s += select("v", {}); });
  EXPECT_EQ(none.status.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixlm::frontend
