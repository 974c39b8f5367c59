// Few-shot question answering: the same worked examples before every question. RunBatch traces
// the program, finds the examples as the batch's common prefix and prefills them once.
//
//   build/examples/few_shot_qa [--remote URL]
#include "example_main.h"

namespace radixlm::frontend {
namespace {

constexpr const char* kExamples =
    "Answer each question with a short fact.\n\n"
    "Q: What is the capital of France?\nA: Paris\n\n"
    "Q: How many legs does a spider have?\nA: Eight\n\n"
    "Q: What gas do plants absorb from the air?\nA: Carbon dioxide\n\n"
    "Q: Who wrote Romeo and Juliet?\nA: William Shakespeare\n\n"
    "Q: What is the boiling point of water at sea level in Celsius?\nA: 100 degrees\n\n"
    "Q: Which planet is known as the Red Planet?\nA: Mars\n\n";

void FewShotQa(State& s, const std::string& question) {
  s += kExamples;
  s += "Q: " + question + "\nA:";
  s += gen("answer", {.max_tokens = 24, .stop = {"\n"}});
}

Status Body(examples::ExampleContext& ctx) {
  const std::vector<std::string> questions = {"What is the largest ocean on Earth?",
                                              "How many days are in a leap year?",
                                              "What is the chemical symbol for gold?",
                                              "Who painted the Mona Lisa?",
                                              "What is the capital of Japan?",
                                              "How many continents are there?",
                                              "What is the freezing point of water in Celsius?",
                                              "Which animal is known as the king "
                                              "of the jungle?"};
  BatchResult batch = RunBatch(*ctx.backend, ctx.run, FewShotQa, questions);
  for (size_t i = 0; i < questions.size(); ++i) {
    ctx.Report("question " + std::to_string(i + 1), batch.results[i]);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "few_shot_qa", radixlm::frontend::Body);
}
