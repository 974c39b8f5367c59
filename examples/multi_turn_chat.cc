// Multi-turn chat: every turn is rendered with the model's chat template and the assistant's
// replies become part of the conversation the next turn continues (its KV reused each turn).
//
//   build/examples/multi_turn_chat [--remote URL]
#include "example_main.h"

namespace radixlm::frontend {
namespace {

void Chat(State& s, const std::vector<std::string>& turns) {
  s += system("You are a friendly assistant. Answer in one or two sentences.");
  for (size_t i = 0; i < turns.size(); ++i) {
    s += user(turns[i]);
    s += assistant(gen("reply" + std::to_string(i + 1), {.max_tokens = 48}));
  }
}

Status Body(examples::ExampleContext& ctx) {
  const std::vector<std::vector<std::string>> conversations = {
      {"I want to learn to cook. Where should I start?", "What should I cook first?",
       "How long will that take?"},
      {"What is a good name for a cat?", "Why that name?", "Give me one more."},
  };
  BatchResult batch = RunBatch(*ctx.backend, ctx.run, Chat, conversations);
  for (size_t i = 0; i < conversations.size(); ++i) {
    ctx.Report("conversation " + std::to_string(i + 1), batch.results[i]);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "multi_turn_chat", radixlm::frontend::Body);
}
