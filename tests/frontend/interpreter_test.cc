// Interpreter semantics on the fake engine: generated text, variables, roles, fork / join order
// and concurrency, the fork prefix committed once and pinned, errors, RunBatch.
#include <gtest/gtest.h>

#include "fake_backend.h"
#include "frontend/frontend.h"
#include "testing/fake_token_text.h"

namespace radixlm::frontend {
namespace {

using testing::FakeSetup;
using testing::MakeFakeSetup;

const GenOptions kGreedy{.temperature = 0.0f, .ignore_eos = true};
const RunOptions kRun{.default_gen = kGreedy};

std::string ReferenceContinuation(const FakeSetup& f, const std::string& prompt, int n) {
  FakeTokenTextCodec codec;
  return codec.Decode(f.runner->ReferenceGreedy(*codec.Encode(prompt), n));
}

TEST(FrontendInterpreterTest, GenAppendsTheEnginesGreedyContinuationAndStoresIt) {
  FakeSetup f = MakeFakeSetup();
  ProgramResult r = frontend::Run(*f.backend, kRun, [](State& s) {
    s += "the cat sat";
    s += gen("next", {.max_tokens = 6});
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  const std::string expected = ReferenceContinuation(f, "the cat sat", 6);
  EXPECT_EQ(r.variables.at("next"), expected);
  EXPECT_EQ(r.text, "the cat sat" + expected);
}

TEST(FrontendInterpreterTest, RolesRenderWithTheBackendsRolesAndVariablesReadBack) {
  FakeSetup f = MakeFakeSetup();
  std::string seen_in_program;
  ProgramResult r = frontend::Run(*f.backend, kRun, [&](State& s) {
    s += user("hi");
    s += assistant(gen("a", {.max_tokens = 3}));
    seen_in_program = s["a"];  // waits for the gen
    s += user("again, ");
    s += s["a"];  // a Variable node: appends the value again
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  const std::string a = ReferenceContinuation(f, "user\nhi\nassistant\n", 3);
  EXPECT_EQ(seen_in_program, a);
  EXPECT_EQ(r.text, "user\nhi\nassistant\n" + a + "\nuser\nagain, \n" + a);
}

TEST(FrontendInterpreterTest, RoleMisuseIsAClearError) {
  FakeSetup f = MakeFakeSetup();
  ProgramResult nested = frontend::Run(*f.backend, kRun, [](State& s) {
    s += role_begin("user");
    s += assistant("x");
    s += "never appended";
  });
  EXPECT_EQ(nested.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nested.status.message().find("do not nest"), std::string::npos);
  EXPECT_EQ(nested.text, "user\n");  // later operations are skipped
  ProgramResult unknown = frontend::Run(*f.backend, kRun, [](State& s) { s += role("tool", "x"); });
  EXPECT_NE(unknown.status.message().find("no role 'tool'"), std::string::npos);
  ProgramResult missing = frontend::Run(*f.backend, kRun, [](State& s) { s += s["nothing"]; });
  EXPECT_EQ(missing.status.code(), StatusCode::kNotFound);
}

TEST(FrontendInterpreterTest, JoinConcatenatesBranchesInBranchOrderNotFinishOrder) {
  // Branch 0 generates the most tokens, so it finishes last.
  FakeSetup f = MakeFakeSetup(4096, std::chrono::milliseconds(2));
  std::vector<std::string> branch_vars;
  ProgramResult r = frontend::Run(*f.backend, kRun, [&](State& s) {
    s += "the plan.";
    ForkGroup branches = s.fork(3);
    for (size_t i = 0; i < branches.size(); ++i) {
      branches[i] += " step " + std::to_string(i) + ",";
      branches[i] += gen("x", {.max_tokens = static_cast<int32_t>(12 - 4 * i)});
    }
    for (State& b : branches) branch_vars.push_back(b["x"]);
    join(branches, JoinMode::kConcatenate);
    s += " done";
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  std::string expected = "the plan.";
  for (int i = 0; i < 3; ++i) {
    const std::string own = "the plan. step " + std::to_string(i) + ",";
    const std::string x = ReferenceContinuation(f, own, 12 - 4 * i);
    EXPECT_EQ(branch_vars[static_cast<size_t>(i)], x);
    expected += " step " + std::to_string(i) + "," + x;
  }
  EXPECT_EQ(r.text, expected + " done");
  // The branches were in flight together: some forward pass carried more than one of them.
  EXPECT_GE(f.runner->max_sequences_per_batch(), 2);
}

TEST(FrontendInterpreterTest, ForkPrefillsTheSharedPrefixOnceAndPinsItWhileBranchesRun) {
  FakeSetup f = MakeFakeSetup();
  const std::string prefix = "a long shared prefix that every branch of the fork starts with.";
  const int64_t prefix_tokens = static_cast<int64_t>(FakeTokenTextCodec().Encode(prefix)->size());
  int64_t protected_during = -1;
  std::vector<int64_t> cached;
  ProgramResult r = frontend::Run(*f.backend, kRun, [&](State& s) {
    s += prefix;
    ForkGroup branches = s.fork(3);
    protected_during = f.engine->GetStats().scheduler.protected_tokens;
    for (State& b : branches) b += gen("x", {.max_tokens = 2});
    for (State& b : branches) cached.push_back(b.gen_reply("x")->cached_tokens);
    join(branches);
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_GE(protected_during, prefix_tokens - 1);  // the pin holds the prefix
  const EngineStats after = f.engine->GetStats();
  EXPECT_EQ(after.scheduler.protected_tokens, 0);            // released at join
  for (int64_t c : cached) EXPECT_EQ(c, prefix_tokens - 1);  // all but the token logits need
  // Computed: the prefix once, then each branch's last prompt token (its logits) and decodes.
  EXPECT_EQ(after.scheduler.prefill_tokens, prefix_tokens + 3);
  EXPECT_EQ(f.backend->counters().commit_calls, 1);
}

TEST(FrontendInterpreterTest, WithoutARadixCacheNothingIsCommittedAndTheTextIsTheSame) {
  FakeSetup cached = MakeFakeSetup();
  FakeSetup uncached = MakeFakeSetup(4096, std::chrono::microseconds(0), true);
  auto program = [](State& s) {
    s += "shared start.";
    ForkGroup branches = s.fork(2);
    for (State& b : branches) b += gen("x", {.max_tokens = 3});
    join(branches, JoinMode::kConcatenate);
    s += select("v", {" yes", " no"});
  };
  ProgramResult a = frontend::Run(*cached.backend, kRun, program);
  ProgramResult b = frontend::Run(*uncached.backend, kRun, program);
  ASSERT_TRUE(a.status.ok() && b.status.ok()) << a.status.ToString() << b.status.ToString();
  EXPECT_EQ(a.text, b.text);
  // The fork, and the select's prefix (so its options find it cached); without a cache,
  // nothing (the select only counts its prefix's tokens).
  EXPECT_EQ(cached.backend->counters().commit_calls, 2);
  EXPECT_EQ(uncached.backend->counters().commit_calls, 0);
}

TEST(FrontendInterpreterTest, ABranchErrorBecomesTheParentsAtJoin) {
  FakeSetup f = MakeFakeSetup();
  ProgramResult r = frontend::Run(*f.backend, kRun, [](State& s) {
    s += "x";
    ForkGroup branches = s.fork(2);
    branches[1] += role_end("user");
    join(branches);
    s += "never";
  });
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.text, "x");
}

TEST(FrontendInterpreterTest, RunBatchCommitsTheCommonPrefixOnceAndKeepsInputOrder) {
  FakeSetup f = MakeFakeSetup();
  auto program = [](State& s, const std::string& q) {
    s += "few shot examples, one.\nand two.\nq, ";
    s += q;
    s += gen("a", {.max_tokens = 3});
  };
  const std::vector<std::string> inputs = {"alpha", "beta", "gamma", "delta"};
  BatchResult b = RunBatch(*f.backend, kRun, program, inputs, {.num_threads = 2});
  EXPECT_EQ(b.common_prefix, "few shot examples, one.\nand two.\n");
  ASSERT_EQ(b.results.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(b.results[i].status.ok()) << b.results[i].status.ToString();
    const std::string prompt = "few shot examples, one.\nand two.\nq, " + inputs[i];
    EXPECT_EQ(b.results[i].text, prompt + ReferenceContinuation(f, prompt, 3));
  }
  EXPECT_EQ(f.engine->GetStats().scheduler.protected_tokens, 0);
}

}  // namespace
}  // namespace radixlm::frontend
