// `radixlm generate --model-path FILE|FOLDER --prompt TEXT [--quantization Q]
//  [--max-new-tokens N] [--temperature T] [--threads N] [--seed S]`: one prompt through the
// model, the continuation streamed to stdout as it is produced, prompt and decode speed printed
// to stderr at the end.
//
// Sampling is deliberately minimal (greedy at T = 0, plain temperature sampling otherwise);
// the engine's sampling module is what servers use.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/model_flags.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::apps {
namespace {

struct GenerateOptions {
  ModelFlags model;
  std::string prompt;
  int max_new_tokens = 128;
  float temperature = 0.0f;
  int threads = 0;
  int64_t seed = -1;  // < 0: from std::random_device
  int prefill_chunk = 512;
  std::string kv_dtype = "f16";
  bool ignore_eos = false;
};

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}

int32_t SampleToken(const float* logits, int64_t vocab, float temperature, std::mt19937_64& rng,
                    std::vector<double>& probs) {
  const float* best = std::max_element(logits, logits + vocab);
  if (temperature <= 0.0f) return static_cast<int32_t>(best - logits);
  probs.resize(vocab);
  double sum = 0.0;
  for (int64_t i = 0; i < vocab; ++i) {
    probs[i] = std::exp(static_cast<double>(logits[i] - *best) / temperature);
    sum += probs[i];
  }
  double r = std::uniform_real_distribution<double>(0.0, sum)(rng);
  for (int64_t i = 0; i < vocab; ++i) {
    r -= probs[i];
    if (r <= 0.0) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(best - logits);
}

Status RunGenerate(const GenerateOptions& opt) {
  if (opt.max_new_tokens < 0) return InvalidArgument("--max-new-tokens must be >= 0");
  if (opt.temperature < 0.0f) return InvalidArgument("--temperature must be >= 0");
  if (opt.prefill_chunk < 1) return InvalidArgument("--prefill-chunk must be >= 1");
  kernels::KvDtype kv_dtype;
  if (opt.kv_dtype == "f16") {
    kv_dtype = kernels::KvDtype::kF16;
  } else if (opt.kv_dtype == "bf16") {
    kv_dtype = kernels::KvDtype::kBF16;
  } else if (opt.kv_dtype == "fp8_e5m2") {
    kv_dtype = kernels::KvDtype::kFp8E5M2;
  } else {
    return InvalidArgument("--kv-dtype must be f16, bf16 or fp8_e5m2");
  }

  model::ModelOptions model_options;
  model_options.n_threads = opt.threads;
  model_options.max_batch_tokens = opt.prefill_chunk;
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> model,
                           LoadCommandModel(opt.model, model_options, "generate"));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<tokenizer::Tokenizer> tok,
                           tokenizer::Tokenizer::FromGguf(model->gguf()));
  const model::ModelConfig& config = model->config();

  const std::vector<int32_t> prompt =
      tok->Encode(opt.prompt, /*add_special=*/true, /*parse_special=*/true);
  if (prompt.empty()) return InvalidArgument("the prompt encodes to no tokens");
  const int64_t total = static_cast<int64_t>(prompt.size()) + opt.max_new_tokens;
  if (total > config.context_length) {
    return InvalidArgument("prompt (" + std::to_string(prompt.size()) + " tokens) plus " +
                           "--max-new-tokens exceeds the context length " +
                           std::to_string(config.context_length));
  }
  // One slot per position: slot i holds position i.
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::KvCache> cache,
                           model->CreateKvCache({.n_slots = total + 1, .dtype = kv_dtype}));
  std::vector<int32_t> slots(total + 1);
  for (int64_t i = 0; i < total + 1; ++i) slots[i] = static_cast<int32_t>(i);

  std::mt19937_64 rng(opt.seed >= 0 ? static_cast<uint64_t>(opt.seed) : std::random_device{}());
  std::vector<double> probs;
  model::ForwardOutput out;
  std::span<const int32_t> all_slots(slots);

  // Prefill in chunks; only the last chunk asks for logits.
  const auto prefill_begin = Clock::now();
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  for (int64_t begin = 0; begin < n_prompt; begin += opt.prefill_chunk) {
    const int64_t end = std::min<int64_t>(begin + opt.prefill_chunk, n_prompt);
    model::ForwardBatch batch;
    batch.sequences.push_back(
        {std::span<const int32_t>(prompt).subspan(begin, end - begin),
         all_slots.subspan(begin, end - begin), all_slots.subspan(0, begin),
         end == n_prompt ? model::LogitsMode::kLast : model::LogitsMode::kNone});
    RADIXLM_RETURN_IF_ERROR(model->Forward(batch, *cache, &out));
  }
  const auto decode_begin = Clock::now();

  tokenizer::StreamingDetokenizer detok(*tok, /*skip_special=*/true);
  int64_t n_generated = 0;
  int64_t pos = n_prompt;
  while (n_generated < opt.max_new_tokens) {
    const int32_t token =
        SampleToken(out.LastRow(0), config.vocab_size, opt.temperature, rng, probs);
    ++n_generated;
    if (!opt.ignore_eos && tok->IsEog(token)) break;
    const std::string piece = detok.Feed(token);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    if (n_generated == opt.max_new_tokens) break;
    model::ForwardBatch batch;
    const int32_t token_id = token;
    batch.sequences.push_back({std::span<const int32_t>(&token_id, 1), all_slots.subspan(pos, 1),
                               all_slots.subspan(0, pos), model::LogitsMode::kLast});
    RADIXLM_RETURN_IF_ERROR(model->Forward(batch, *cache, &out));
    ++pos;
  }
  const std::string rest = detok.Flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  const auto end = Clock::now();

  // Decode speed counts forward passes after the prompt (the first token comes from prefill).
  const double prefill_s = Seconds(prefill_begin, decode_begin);
  const double decode_s = Seconds(decode_begin, end);
  const int64_t decode_steps = pos - n_prompt;
  std::fprintf(stderr,
               "prompt: %lld tokens in %.3f s (%.1f tok/s); decode: %lld tokens in %.3f s "
               "(%.1f tok/s); threads %d\n",
               static_cast<long long>(n_prompt), prefill_s, n_prompt / std::max(prefill_s, 1e-9),
               static_cast<long long>(decode_steps), decode_s,
               decode_steps / std::max(decode_s, 1e-9), model->pool()->size());
  return Status::Ok();
}

const bool kGenerateRegistered = RegisterCommand("generate", [](CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate a continuation of a prompt");
  AddModelFlags(cmd, &opt->model);
  cmd->add_option("--prompt", opt->prompt, "Prompt text")->required();
  cmd->add_option("--max-new-tokens", opt->max_new_tokens, "Tokens to generate at most");
  cmd->add_option("--temperature", opt->temperature, "0: greedy");
  cmd->add_option("--threads", opt->threads, "CPU threads (0: all cores)");
  cmd->add_option("--seed", opt->seed, "Sampling seed (default: random)");
  cmd->add_option("--prefill-chunk", opt->prefill_chunk, "Prompt tokens per forward pass");
  cmd->add_option("--kv-dtype", opt->kv_dtype, "KV cache type: f16, bf16 or fp8_e5m2");
  cmd->add_flag("--ignore-eos", opt->ignore_eos, "Keep generating after end-of-generation");
  cmd->callback([opt] {
    Status st = RunGenerate(*opt);
    if (!st.ok()) {
      std::fprintf(stderr, "radixlm generate: %s\n", st.ToString().c_str());
      SetExitCode(1);
    }
  });
});

}  // namespace
}  // namespace radixlm::apps
