// `radixlm score`: teacher-forced scoring of a token sequence, for oracle comparisons and
// perplexity. Reads token ids (a JSON array) from --ids-file, runs the forward pass over them
// in chunks of --chunk tokens (each chunk reading the KV the previous chunks wrote), and prints
// one JSON object: {"n": N, "argmax": [...N-1], "logprob": [...N-1], "nll_mean": x,
// "perplexity": y}, where argmax[i] / logprob[i] are the model's top token and the
// log-probability of ids[i+1] after reading ids[0..i].
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/model_flags.h"
#include "eval/score.h"

namespace radixlm::apps {
namespace {

struct ScoreOptions {
  ModelFlags model;
  std::string ids_file;
  int threads = 0;
  int chunk = 512;
};

StatusOr<std::vector<int32_t>> ReadIds(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open ids file '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  nlohmann::json parsed = nlohmann::json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return InvalidArgument("ids file must hold a JSON array of token ids");
  std::vector<int32_t> ids;
  for (const auto& v : parsed) {
    if (!v.is_number_integer()) return InvalidArgument("ids file: every element must be an int");
    ids.push_back(v.get<int32_t>());
  }
  if (ids.size() < 2) return InvalidArgument("ids file: need at least 2 tokens to score");
  return ids;
}

Status RunScore(const ScoreOptions& opts) {
  RADIXLM_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ReadIds(opts.ids_file));
  model::ModelOptions model_options;
  model_options.n_threads = opts.threads;
  model_options.max_batch_tokens = std::max(opts.chunk, 1);
  model_options.max_context = static_cast<int64_t>(ids.size());
  RADIXLM_ASSIGN_OR_RETURN(auto model, LoadCommandModel(opts.model, model_options, "score"));
  RADIXLM_ASSIGN_OR_RETURN(eval::ScoreResult r, eval::ScoreSequence(*model, ids, opts.chunk));
  nlohmann::json result = {{"n", ids.size()},
                           {"argmax", r.argmax},
                           {"logprob", r.logprob},
                           {"nll_mean", r.nll_mean},
                           {"perplexity", r.perplexity}};
  std::cout << result.dump() << "\n";
  return Status::Ok();
}

const bool kScoreRegistered = RegisterCommand("score", [](CLI::App& app) {
  auto opts = std::make_shared<ScoreOptions>();
  CLI::App* cmd = app.add_subcommand(
      "score", "Teacher-forced scoring of token ids: per-position argmax, logprob, perplexity");
  AddModelFlags(cmd, &opts->model);
  cmd->add_option("--ids-file", opts->ids_file, "JSON array of token ids")->required();
  cmd->add_option("--threads", opts->threads, "Worker threads (0: all cores)");
  cmd->add_option("--chunk", opts->chunk, "Tokens per forward call (chunked prefill)");
  cmd->callback([opts]() {
    Status st = RunScore(*opts);
    if (!st.ok()) {
      std::cerr << "radixlm score: " << st.ToString() << "\n";
      SetExitCode(1);
    }
  });
});

}  // namespace
}  // namespace radixlm::apps
