// What every example binary shares: flags, the backend (an in-process Engine on the default
// model, or a radixlm server with --remote), running the example, printing its programs'
// results and the engine's prefill statistics.
//
//   build/examples/tree_of_thought                       # in-process, default model
//   build/examples/tree_of_thought --remote http://127.0.0.1:30000
//   flags: --model-path PATH  --temperature T  --json  --dump-calls FILE  --threads N
//          --disable-radix-cache (in-process)  --show-ir
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "frontend/frontend.h"

namespace radixlm::examples {

struct ExampleContext {
  frontend::Backend* backend = nullptr;
  frontend::RunOptions run;  // default_gen: temperature from --temperature (default 0)
  // Collects a program's result under a label, for printing.
  void Report(const std::string& label, const frontend::ProgramResult& result);
  std::vector<std::pair<std::string, frontend::ProgramResult>> reports;
};

using ExampleBody = std::function<Status(ExampleContext&)>;

// Parses the flags, builds the backend, runs `body`, prints; the process exit code.
int RunExample(int argc, char** argv, const std::string& name, const ExampleBody& body);

}  // namespace radixlm::examples
