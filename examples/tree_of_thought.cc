// Tree of thought, 3 x 3: three approaches to a problem, three attempts at each, every attempt
// checked with select, then one final answer. Each fork commits its prefix once; the nine
// attempts share the question, and each three share their approach.
//
//   build/examples/tree_of_thought [--remote URL]
#include "example_main.h"

namespace radixlm::frontend {
namespace {

void TreeOfThought(State& s, const std::string& question) {
  s += system("You solve problems by exploring several approaches. Be brief.");
  s += user(question);
  ForkGroup approaches = s.fork(3);
  for (size_t i = 0; i < approaches.size(); ++i) {
    approaches[i] += assistant("Approach " + std::to_string(i + 1) + ": " +
                               gen("approach", {.max_tokens = 40, .stop = {"\n"}}));
  }
  std::vector<ForkGroup> attempts;
  for (State& approach : approaches) {
    approach += user("Carry out this approach and give a result.");
    attempts.push_back(approach.fork(3));
    for (size_t j = 0; j < attempts.back().size(); ++j) {
      State& attempt = attempts.back()[j];
      attempt += assistant("Attempt " + std::to_string(j + 1) + ": " +
                           gen("attempt", {.max_tokens = 48, .stop = {"\n\n"}}));
      attempt += user("Is this attempt correct? Answer yes or no.");
      attempt += assistant(select("correct", {"yes", "no"}));
    }
  }
  std::string summary;
  for (size_t i = 0; i < attempts.size(); ++i) {
    join(attempts[i]);
    for (size_t j = 0; j < attempts[i].size(); ++j) {
      if (attempts[i][j]["correct"].value() == "yes") {
        summary += "- " + attempts[i][j]["attempt"].value() + "\n";
      }
    }
  }
  join(approaches);
  s += user("Attempts judged correct:\n" + (summary.empty() ? "(none)\n" : summary) +
            "Give the final answer in one sentence.");
  s += assistant(gen("answer", {.max_tokens = 48, .stop = {"\n"}}));
}

Status Body(examples::ExampleContext& ctx) {
  ctx.Report("tree of thought",
             Run(*ctx.backend, ctx.run, TreeOfThought,
                 std::string("A train leaves at 9:40 and the trip takes 2 hours 35 minutes. "
                             "When does it arrive?")));
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "tree_of_thought", radixlm::frontend::Body);
}
