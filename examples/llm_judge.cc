// LLM as a judge, branch-solve-merge: one branch per dimension critiques the answer and
// scores it (select over 1..5), then the merge step reads every score and gives a verdict.
//
//   build/examples/llm_judge [--remote URL]
#include "example_main.h"

namespace radixlm::frontend {
namespace {

const std::vector<std::string> kDimensions = {"helpfulness", "accuracy", "clarity", "conciseness"};

void Judge(State& s, const std::string& question, const std::string& answer) {
  s += system("You are a strict judge of answers.");
  s += user("Question: " + question + "\nAnswer: " + answer);
  ForkGroup judges = s.fork(static_cast<int>(kDimensions.size()));
  for (size_t i = 0; i < judges.size(); ++i) {
    const std::string& dim = kDimensions[i];
    judges[i] +=
        assistant("On " + dim + ": " + gen("critique", {.max_tokens = 40, .stop = {"\n"}}));
    judges[i] += user("Score the " + dim + " from 1 (poor) to 5 (excellent).");
    judges[i] += assistant(select("score", {"1", "2", "3", "4", "5"}));
  }
  join(judges);
  std::string scores;
  for (size_t i = 0; i < judges.size(); ++i) {
    scores += kDimensions[i] + ": " + judges[i]["score"].value() + "/5\n";
  }
  s += user("Scores by dimension:\n" + scores + "Is the answer good, acceptable or poor?");
  s += assistant(select("verdict", {"good", "acceptable", "poor"}));
}

Status Body(examples::ExampleContext& ctx) {
  const std::vector<std::tuple<std::string, std::string>> cases = {
      {"Why is the sky blue?",
       "Sunlight is scattered by air molecules, and blue light scatters the most."},
      {"What is 12 times 12?", "It is 124."},
  };
  BatchResult batch = RunBatch(*ctx.backend, ctx.run, Judge, cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    ctx.Report("case " + std::to_string(i + 1), batch.results[i]);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "llm_judge", radixlm::frontend::Body);
}
