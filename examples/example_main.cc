#include "example_main.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace radixlm::examples {
namespace {

struct Flags {
  std::string remote;
  std::string model_path;
  float temperature = 0.0f;
  bool json = false;
  bool show_ir = false;
  bool disable_radix_cache = false;
  int threads = 0;
  std::string dump_calls;
};

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> StatusOr<std::string> {
      if (i + 1 >= argc) return InvalidArgument(arg + " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--remote") {
      RADIXLM_ASSIGN_OR_RETURN(f.remote, value());
    } else if (arg == "--model-path") {
      RADIXLM_ASSIGN_OR_RETURN(f.model_path, value());
    } else if (arg == "--temperature") {
      RADIXLM_ASSIGN_OR_RETURN(std::string v, value());
      f.temperature = std::strtof(v.c_str(), nullptr);
    } else if (arg == "--threads") {
      RADIXLM_ASSIGN_OR_RETURN(std::string v, value());
      f.threads = std::atoi(v.c_str());
    } else if (arg == "--dump-calls") {
      RADIXLM_ASSIGN_OR_RETURN(f.dump_calls, value());
    } else if (arg == "--json") {
      f.json = true;
    } else if (arg == "--show-ir") {
      f.show_ir = true;
    } else if (arg == "--disable-radix-cache") {
      f.disable_radix_cache = true;
    } else {
      return InvalidArgument("unknown flag " + arg +
                             " (flags: --remote URL --model-path PATH --temperature T --threads N "
                             "--json --show-ir --dump-calls FILE --disable-radix-cache)");
    }
  }
  return f;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

void ExampleContext::Report(const std::string& label, const frontend::ProgramResult& result) {
  reports.emplace_back(label, result);
}

int RunExample(int argc, char** argv, const std::string& name, const ExampleBody& body) {
  StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) return Fail(flags.status());
  std::unique_ptr<Engine> engine;
  std::unique_ptr<frontend::Backend> backend;
  if (flags->remote.empty()) {
    EngineConfig config;
    config.model_path = flags->model_path;
    config.threads = flags->threads;
    config.disable_radix_cache = flags->disable_radix_cache;
    auto e = Engine::Create(config);
    if (!e.ok()) return Fail(e.status());
    engine = std::move(e).value();
    auto b = frontend::EngineBackend::Create(engine.get());
    if (!b.ok()) return Fail(b.status());
    backend = std::move(b).value();
  } else {
#ifdef RADIXLM_FRONTEND_HAVE_REMOTE
    auto b = frontend::RemoteBackend::Create({.base_url = flags->remote});
    if (!b.ok()) return Fail(b.status());
    backend = std::move(b).value();
#else
    return Fail(Unimplemented("this build has no HTTP client (Boost); --remote is unavailable"));
#endif
  }
  frontend::RecordingBackend recorder(backend.get());
  ExampleContext ctx;
  ctx.backend = &recorder;
  ctx.run.default_gen.temperature = flags->temperature;
  const auto start = std::chrono::steady_clock::now();
  Status status = body(ctx);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [label, r] : ctx.reports) {
    if (status.ok() && !r.status.ok()) status = r.status;
  }
  nlohmann::json out{{"example", name},
                     {"backend", flags->remote.empty() ? "engine" : flags->remote},
                     {"wall_s", wall_s},
                     {"ok", status.ok()}};
  if (!status.ok()) out["error"] = status.ToString();
  for (const auto& [label, r] : ctx.reports) {
    out["programs"].push_back({{"label", label},
                               {"text", r.text},
                               {"variables", r.variables},
                               {"status", r.status.ToString()}});
  }
  const frontend::BackendCounters c = backend->counters();
  out["calls"] = {{"generate", c.generate_calls},
                  {"commit", c.commit_calls},
                  {"score", c.score_calls},
                  {"prompt_tokens", c.prompt_tokens},
                  {"cached_tokens", c.cached_tokens}};
  if (engine != nullptr) {
    const EngineStats stats = engine->GetStats();
    out["engine"] = {{"prefill_tokens", stats.scheduler.prefill_tokens},
                     {"cache_hit_tokens", stats.scheduler.cache_hit_tokens},
                     {"decode_tokens", stats.scheduler.decode_tokens}};
  }
  if (!flags->dump_calls.empty()) {
    std::ofstream(flags->dump_calls) << recorder.Calls().dump(1) << "\n";
  }
  if (flags->json) {
    std::cout << out.dump(2) << std::endl;
  } else {
    for (const auto& [label, r] : ctx.reports) {
      std::cout << "=== " << label << " ===\n" << r.text << "\n";
      if (flags->show_ir) std::cout << "--- IR ---\n" << frontend::PrintIr(*r.ir);
    }
    std::cout << "=== stats ===\n"
              << nlohmann::json{{"wall_s", wall_s},
                                {"calls", out["calls"]},
                                {"engine", out.value("engine", nlohmann::json())}}
                     .dump()
              << "\n";
    if (!status.ok()) std::cerr << "error: " << status.ToString() << "\n";
  }
  return status.ok() ? 0 : 1;
}

}  // namespace radixlm::examples
