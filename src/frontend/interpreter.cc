#include "frontend/interpreter.h"

#include <atomic>
#include <exception>
#include <thread>

#include "frontend/tracer.h"

namespace radixlm::frontend {

ProgramResult RunProgram(Backend& backend, const RunOptions& options, const ProgramBody& body) {
  auto runtime = std::make_shared<Runtime>();
  runtime->backend = &backend;
  runtime->roles = &backend.chat_roles();
  runtime->default_gen = options.default_gen;
  ProgramResult result;
  State s(runtime);
  Status thrown;
  try {
    body(s);
  } catch (const std::exception& e) {
    thrown = Internal(std::string("the program threw: ") + e.what());
  }
  result.status = thrown.ok() ? s.status() : thrown;
  result.text = s.text();
  result.variables = s.variables();
  result.ir = s.ir();
  return result;
}

std::string TokenSafePrefix(const std::string& common) {
  const size_t newline = common.rfind('\n');
  if (newline != std::string::npos) return common.substr(0, newline + 1);
  const size_t space = common.rfind(' ');
  return space == std::string::npos ? "" : common.substr(0, space);
}

BatchResult RunPrograms(Backend& backend, const RunOptions& options,
                        const std::vector<ProgramBody>& bodies, const BatchOptions& batch) {
  BatchResult out;
  out.results.resize(bodies.size());
  if (batch.prefill_common_prefix && bodies.size() > 1 && backend.caches_prefixes()) {
    std::vector<std::string> prefixes;
    for (const ProgramBody& body : bodies) {
      try {
        prefixes.push_back(TraceProgram(body, backend.chat_roles()).constant_prefix);
      } catch (const std::exception&) {
        prefixes.clear();  // a program that cannot be traced: no shared prefix to commit
        break;
      }
    }
    std::string common = CommonPrefix(prefixes);
    // A commit carries text only: the shared prefix ends before the first image.
    if (const size_t image = common.find(kImageMarker); image != std::string::npos) {
      common.resize(image);
    }
    out.common_prefix = TokenSafePrefix(common);
    if (!out.common_prefix.empty()) {
      StatusOr<PrefixCommit> commit = backend.CommitPrefix(out.common_prefix, /*pin=*/true);
      if (commit.ok()) {
        out.commit = *commit;
      } else {
        out.common_prefix.clear();  // an optimization only: the programs still run
      }
    }
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < bodies.size(); i = next++) {
      out.results[i] = RunProgram(backend, options, bodies[i]);
    }
  };
  const size_t n_threads =
      std::min(bodies.size(), static_cast<size_t>(std::max(1, batch.num_threads)));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n_threads; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (out.commit.pin != 0) backend.ReleasePrefix(out.commit.pin);
  return out;
}

}  // namespace radixlm::frontend
