// Running frontend programs: Run one program, RunBatch many inputs through one program.
//
//   void Qa(State& s, std::string q) { ... }
//   ProgramResult r = Run(backend, {}, Qa, std::string("What is 2+2?"));
//   BatchResult b = RunBatch(backend, {}, Qa, std::vector<std::string>{...});
//
// RunBatch first traces every input (tracer.h) and, when their constant prefixes share a
// beginning, commits that shared text once (prefilled, pinned for the batch) before the
// programs start, so no two programs race to compute it. Programs then run concurrently on
// batch.num_threads threads; each program's own fork branches run concurrently as well.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "frontend/backend.h"
#include "frontend/ir.h"
#include "frontend/state.h"

namespace radixlm::frontend {

struct RunOptions {
  GenOptions default_gen = {};  // under each gen's own options (unset: SGLang's defaults)
};

struct ProgramResult {
  Status status;  // the first error of the program (or of a branch joined into it)
  std::string text;
  std::map<std::string, std::string> variables;
  std::shared_ptr<ProgramIr> ir;
};

struct BatchOptions {
  int num_threads = 16;
  bool prefill_common_prefix = true;
};

struct BatchResult {
  std::vector<ProgramResult> results;  // in input order
  std::string common_prefix;           // what was committed before the batch ("" : nothing)
  PrefixCommit commit;
};

using ProgramBody = std::function<void(State&)>;

ProgramResult RunProgram(Backend& backend, const RunOptions& options, const ProgramBody& body);
BatchResult RunPrograms(Backend& backend, const RunOptions& options,
                        const std::vector<ProgramBody>& bodies, const BatchOptions& batch = {});

// The part of a batch's common text prefix that ends at a line break (or else before a
// space), so its tokens are those the full prompts start with.
std::string TokenSafePrefix(const std::string& common);

template <typename Program, typename... Args>
ProgramResult Run(Backend& backend, const RunOptions& options, Program&& program, Args&&... args) {
  return RunProgram(backend, options, [&](State& s) { program(s, args...); });
}

namespace internal {
template <typename T>
struct IsTuple : std::false_type {};
template <typename... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};
}  // namespace internal

// One program per input: program(s, input), or program(s, a, b, ...) for tuple inputs.
template <typename Program, typename Input>
BatchResult RunBatch(Backend& backend, const RunOptions& options, Program program,
                     const std::vector<Input>& inputs, const BatchOptions& batch = {}) {
  std::vector<ProgramBody> bodies;
  for (const Input& input : inputs) {
    bodies.push_back([program, input](State& s) {
      if constexpr (internal::IsTuple<Input>::value) {
        std::apply([&](const auto&... a) { program(s, a...); }, input);
      } else {
        program(s, input);
      }
    });
  }
  return RunPrograms(backend, options, bodies, batch);
}

}  // namespace radixlm::frontend
