// Skeleton of thought: the model writes a three-point skeleton, then the points are expanded in
// parallel (one fork branch each) and joined back in order.
//
//   build/examples/skeleton_of_thought [--remote URL]
#include "example_main.h"

namespace radixlm::frontend {
namespace {

void SkeletonOfThought(State& s, const std::string& topic) {
  s += system("You answer with a short skeleton first, then expand each point.");
  s += user("Give a skeleton of exactly three short points, numbered 1. 2. 3., for: " + topic);
  const GenOptions point{.max_tokens = 16, .stop = {"\n"}};
  s += assistant("1." + gen("point1", point) + "\n2." + gen("point2", point) + "\n3." +
                 gen("point3", point));
  ForkGroup parts = s.fork(3);
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i] += user("Expand point " + std::to_string(i + 1) + " in two sentences.");
    parts[i] += assistant(gen("expansion", {.max_tokens = 64, .stop = {"\n\n"}}));
  }
  join(parts);
  s += user("Now write the full answer.");
  s += role_begin("assistant");
  for (size_t i = 0; i < parts.size(); ++i) {
    s += std::to_string(i + 1) + ".";
    s += s["point" + std::to_string(i + 1)];
    s += "\n";
    s += parts[i]["expansion"];
    s += "\n";
  }
  s += role_end("assistant");
}

Status Body(examples::ExampleContext& ctx) {
  ctx.Report("skeleton of thought",
             Run(*ctx.backend, ctx.run, SkeletonOfThought,
                 std::string("How can a small team keep a shared codebase healthy?")));
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "skeleton_of_thought", radixlm::frontend::Body);
}
