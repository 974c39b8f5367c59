// `radixlm speed`: forward-pass speed on synthetic tokens — prefill tok/s of one prompt (the
// mean of --prefill-reps timed calls after a warm-up call), decode tok/s at several batch sizes,
// and the memory-bandwidth bound of batch-1 decode. Prints one JSON object (for
// bench/bench_forward.py) unless --human.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/model_flags.h"
#include "eval/speed.h"
#include "kernels/dot.h"

namespace radixlm::apps {
namespace {

struct SpeedFlags {
  ModelFlags model;
  int threads = 0;
  eval::SpeedOptions options;
  bool human = false;
};

Status RunSpeed(const SpeedFlags& flags) {
  const auto& o = flags.options;
  if (o.batch_sizes.empty()) return InvalidArgument("--batch needs at least one size");
  int64_t max_batch = 1;
  for (int64_t b : o.batch_sizes) {
    if (b < 1) return InvalidArgument("--batch sizes must be >= 1");
    max_batch = std::max(max_batch, b);
  }
  model::ModelOptions model_options;
  model_options.n_threads = flags.threads;
  model_options.max_batch_tokens = std::max(o.prompt_tokens, max_batch * o.decode_prefix);
  model_options.max_context = std::max(o.prompt_tokens, o.decode_prefix + o.decode_tokens);
  RADIXLM_ASSIGN_OR_RETURN(auto model, LoadCommandModel(flags.model, model_options, "speed"));
  RADIXLM_ASSIGN_OR_RETURN(eval::SpeedResult r, eval::MeasureSpeed(*model, o));
  nlohmann::json decode = nlohmann::json::array();
  for (const auto& d : r.decode) {
    decode.push_back({{"batch", d.batch},
                      {"tokens_per_second", d.tokens_per_second},
                      {"ms_per_step", d.ms_per_step},
                      {"parallel_regions_per_step", d.threading.regions_per_step},
                      {"barrier_fraction", d.threading.barrier_fraction}});
  }
  nlohmann::json j = {{"threads", model->pool()->size()},
                      {"isa", kernels::IsaName(kernels::ActiveIsa())},
                      {"prompt_tokens", o.prompt_tokens},
                      {"decode_tokens", o.decode_tokens},
                      {"prefill_reps", o.prefill_reps},
                      {"prefill_tokens_per_second", r.prefill_tokens_per_second},
                      {"prefill_samples_tokens_per_second", r.prefill_samples},
                      {"prefill_parallel_regions", r.prefill_threading.regions_per_step},
                      {"prefill_barrier_fraction", r.prefill_threading.barrier_fraction},
                      {"decode", decode},
                      {"weight_bytes_per_step", r.weight_bytes_per_step},
                      {"read_bandwidth_gbps", r.read_bandwidth_gbps},
                      {"bandwidth_bound_tokens_per_second", r.bandwidth_bound_tokens_per_second}};
  std::cout << (flags.human ? j.dump(2) : j.dump()) << "\n";
  return Status::Ok();
}

const bool kSpeedRegistered = RegisterCommand("speed", [](CLI::App& app) {
  auto flags = std::make_shared<SpeedFlags>();
  CLI::App* cmd = app.add_subcommand(
      "speed", "Forward-pass speed: prefill tok/s, decode tok/s per batch size, bandwidth bound");
  AddModelFlags(cmd, &flags->model);
  cmd->add_option("--threads", flags->threads, "Worker threads (0: all cores)");
  cmd->add_option("--prompt-tokens", flags->options.prompt_tokens, "Prefill prompt length");
  cmd->add_option("--prefill-reps", flags->options.prefill_reps,
                  "Timed prefill calls after a warm-up call; prints their mean (default 3)");
  cmd->add_option("--decode-tokens", flags->options.decode_tokens, "Decode steps per batch size");
  cmd->add_option("--batch", flags->options.batch_sizes, "Decode batch sizes, e.g. 1 4 16 64")
      ->delimiter(',');
  cmd->add_flag("--human", flags->human, "Pretty-print the JSON");
  cmd->callback([flags]() {
    Status st = RunSpeed(*flags);
    if (!st.ok()) {
      std::cerr << "radixlm speed: " << st.ToString() << "\n";
      SetExitCode(1);
    }
  });
});

}  // namespace
}  // namespace radixlm::apps
