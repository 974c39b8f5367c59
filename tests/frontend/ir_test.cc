// The IR a program becomes (recorded by tracing, no model), how it prints, and the tracer's
// constant prefixes.
#include <gtest/gtest.h>

#include "frontend/frontend.h"

namespace radixlm::frontend {
namespace {

std::vector<NodeKind> Kinds(const std::vector<Node>& nodes) {
  std::vector<NodeKind> kinds;
  for (const Node& n : nodes) kinds.push_back(n.kind);
  return kinds;
}

void Qa(State& s, const std::string& q) {
  s += system("be brief.");
  s += user("Q, " + q);
  s += assistant(gen("answer", {.max_tokens = 64, .stop = {"\n"}}));
}

TEST(FrontendIrTest, RolesTextAndGenBecomeNodesInProgramOrder) {
  TraceResult t = TraceProgram([](State& s) { Qa(s, "two plus two"); }, ChatRoles::Plain());
  const std::vector<Node> nodes = t.ir->Nodes();
  using K = NodeKind;
  EXPECT_EQ(Kinds(nodes),
            (std::vector<K>{K::kRoleBegin, K::kConstantText, K::kRoleEnd, K::kRoleBegin,
                            K::kConstantText, K::kRoleEnd, K::kRoleBegin, K::kGen, K::kRoleEnd}));
  EXPECT_EQ(nodes[0].name, "system");
  EXPECT_EQ(nodes[4].text, "Q, two plus two");
  EXPECT_EQ(nodes[7].name, "answer");
  EXPECT_EQ(nodes[7].gen.max_tokens, 64);
  EXPECT_EQ(nodes[7].gen.stop, std::vector<std::string>{"\n"});
  EXPECT_EQ(PrintIr(*t.ir),
            "RoleBegin(system)\n"
            "ConstantText(\"be brief.\")\n"
            "RoleEnd(system)\n"
            "RoleBegin(user)\n"
            "ConstantText(\"Q, two plus two\")\n"
            "RoleEnd(user)\n"
            "RoleBegin(assistant)\n"
            "Gen(answer, max_tokens=64, stop=[\"\\n\"])\n"
            "RoleEnd(assistant)\n");
  // The constant prefix ends where the model is first needed: at the assistant's gen.
  EXPECT_EQ(t.constant_prefix, "system\nbe brief.\nuser\nQ, two plus two\nassistant\n");
}

TEST(FrontendIrTest, SelectGenIntAndVariablesRecordTheirArguments) {
  TraceResult t = TraceProgram(
      [](State& s) {
        s += "pick ";
        s += select("verdict", {"yes", "no"}, SelectMethod::kGreedyToken);
        s += gen_int("n");
        s += s["verdict"];
      },
      ChatRoles::Plain());
  const std::vector<Node> nodes = t.ir->Nodes();
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[1].kind, NodeKind::kSelect);
  EXPECT_EQ(nodes[1].options, (std::vector<std::string>{"yes", "no"}));
  EXPECT_EQ(nodes[1].select_method, SelectMethod::kGreedyToken);
  EXPECT_EQ(nodes[2].kind, NodeKind::kGen);
  EXPECT_EQ(nodes[2].gen.regex, std::string(kIntRegex));
  EXPECT_EQ(nodes[3].kind, NodeKind::kVariable);
  EXPECT_EQ(nodes[3].name, "verdict");
  EXPECT_EQ(nodes[1].ToString(), "Select(verdict, [\"yes\",\"no\"], greedy_token)");
  EXPECT_EQ(t.constant_prefix, "pick ");
}

TEST(FrontendIrTest, ForkRecordsCommitForkBranchesAndJoin) {
  TraceResult t = TraceProgram(
      [](State& s) {
        s += "idea.";
        ForkGroup branches = s.fork(2);
        for (size_t i = 0; i < branches.size(); ++i) {
          branches[i] += " step " + std::to_string(i);
          branches[i] += gen("x", {.max_tokens = 4});
        }
        s += branches[1]["x"];
        join(branches, JoinMode::kConcatenate);
      },
      ChatRoles::Plain());
  const std::vector<Node> nodes = t.ir->Nodes();
  using K = NodeKind;
  ASSERT_EQ(Kinds(nodes), (std::vector<K>{K::kConstantText, K::kCommitLazy, K::kFork,
                                          K::kGetForkItem, K::kConcatenateAndAppend}));
  const Node& fork = nodes[2];
  EXPECT_EQ(fork.fork_size, 2);
  ASSERT_EQ(fork.branches.size(), 2u);
  EXPECT_EQ(Kinds(fork.branches[1]->Nodes()), (std::vector<K>{K::kConstantText, K::kGen}));
  EXPECT_EQ(fork.branches[1]->Nodes()[0].text, " step 1");
  EXPECT_EQ(nodes[3].fork_id, fork.fork_id);
  EXPECT_EQ(nodes[3].fork_index, 1);
  EXPECT_EQ(nodes[3].name, "x");
  EXPECT_EQ(nodes[4].fork_id, fork.fork_id);
  const std::string id = std::to_string(fork.fork_id);
  EXPECT_EQ(PrintIr(*t.ir), "ConstantText(\"idea.\")\nCommitLazy\nFork(#" + id +
                                ", 2)\n  branch 0:\n    ConstantText(\" step 0\")\n"
                                "    Gen(x, max_tokens=4)\n  branch 1:\n"
                                "    ConstantText(\" step 1\")\n    Gen(x, max_tokens=4)\n"
                                "GetForkItem(#" +
                                id + "[1], x)\nConcatenateAndAppend(#" + id + ")\n");
  EXPECT_EQ(t.constant_prefix, "idea.");  // a fork commits the text so far
}

TEST(FrontendIrTest, ExpressionsConcatenate) {
  Expr e = "a" + gen("g") + std::string("b");
  ASSERT_EQ(e.nodes().size(), 3u);
  EXPECT_EQ(e.nodes()[0].text, "a");
  EXPECT_EQ(e.nodes()[1].kind, NodeKind::kGen);
  EXPECT_EQ(e.nodes()[2].text, "b");
}

TEST(FrontendIrTest, CommonAndTokenSafePrefixes) {
  EXPECT_EQ(CommonPrefix({"abc\nde x", "abc\nde y", "abc\nde xy"}), "abc\nde ");
  EXPECT_EQ(CommonPrefix({}), "");
  EXPECT_EQ(TokenSafePrefix("abc\nde "), "abc\n");
  EXPECT_EQ(TokenSafePrefix("question wh"), "question");
  EXPECT_EQ(TokenSafePrefix("what"), "");
}

TEST(FrontendIrTest, GenOptionsMergeAndMapToSamplingParams) {
  GenOptions base{.max_tokens = 10, .temperature = 0.0f, .regex = "a+"};
  GenOptions over{.max_tokens = 3, .stop = {"."}, .json_schema = "{}"};
  GenOptions m = MergeGenOptions(base, over);
  EXPECT_EQ(m.max_tokens, 3);
  EXPECT_EQ(m.temperature, 0.0f);
  EXPECT_EQ(m.stop, std::vector<std::string>{"."});
  EXPECT_FALSE(m.regex.has_value());  // one constraint replaces another
  EXPECT_EQ(m.json_schema, "{}");
  SamplingParams p = ToSamplingParams(m);
  EXPECT_EQ(p.max_new_tokens, 3);
  EXPECT_TRUE(p.IsGreedy());
  EXPECT_EQ(p.json_schema, "{}");
  EXPECT_EQ(ToSamplingParams({}).max_new_tokens, SamplingParams().max_new_tokens);
}

}  // namespace
}  // namespace radixlm::frontend
