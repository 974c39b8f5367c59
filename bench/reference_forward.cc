// `reference_forward` (built to <build>/bench/reference_forward): the tests' plain float
// reference forward (tests/model/reference_model.h) as a tool, for oracle comparisons of
// rounding choices. Reads a JSON array of token-id arrays (one per text) from --ids-file and
// prints one JSON object {"argmax": [[...], ...]}: per text, the reference's top token after
// each prefix (all but the last position); with --last-hidden, {"hidden": [[...], ...]}: per
// text, the final norm's output at its last token (a decoder embedder's last-token pooling,
// before L2 normalisation); with --logits-out FILE, every text's logits after each of its
// tokens written to FILE as float32 [positions, vocab], the texts one after another (the
// layout of tests/model/llama_cpp's logits tools). Flags turn the reference's roundings off or add
// llama.cpp's one-query attention accumulator (ReferenceOptions). Texts run one per thread.
// bench/oracle_llama_server.py --reference-forward runs it; it is slow (naive float loops,
// about 3 CPU-minutes for the 528 positions of bench/data/oracle_texts.txt).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/reference_model.h"

namespace {

using radixlm::model::testing::ReferenceModel;
using radixlm::model::testing::ReferenceOptions;

std::vector<int32_t> Argmax(const ReferenceModel& model, const std::vector<int32_t>& ids) {
  const std::vector<std::vector<float>> logits = model.Forward(ids);
  std::vector<int32_t> top;
  for (size_t p = 0; p + 1 < ids.size(); ++p) {
    top.push_back(static_cast<int32_t>(std::max_element(logits[p].begin(), logits[p].end()) -
                                       logits[p].begin()));
  }
  return top;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  std::string ids_file;
  int threads = 2;
  bool no_activation_rounding = false;
  bool no_kv_rounding = false;
  bool last_hidden = false;
  std::string logits_out;
  ReferenceOptions options;
  CLI::App app{"Plain float reference forward: argmax after each prefix of each text"};
  app.add_option("--model-path", model_path, "GGUF file")->required();
  app.add_option("--ids-file", ids_file, "JSON array of token-id arrays")->required();
  app.add_option("--threads", threads, "Texts computed at once");
  app.add_flag("--no-activation-rounding", no_activation_rounding,
               "matmul inputs stay float (no Q8_0 / Q8_K rounding)");
  app.add_flag("--no-kv-rounding", no_kv_rounding, "K, V and Q stay float (no F16 rounding)");
  app.add_flag("--f16-attention-accumulator", options.f16_attention_accumulator,
               "attention as llama.cpp's one-query kernel (F16 output accumulator)");
  app.add_flag("--last-hidden", last_hidden,
               "print each text's final hidden state at its last token instead of argmaxes");
  app.add_option("--logits-out", logits_out,
                 "write every position's logits (float32 [positions, vocab]) to this file");
  CLI11_PARSE(app, argc, argv);
  options.round_activations = !no_activation_rounding;
  options.round_kv = !no_kv_rounding;

  std::ifstream in(ids_file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const nlohmann::json texts = nlohmann::json::parse(buffer.str(), nullptr, false);
  if (!in || !texts.is_array()) {
    std::cerr << "reference_forward: " << ids_file << " is not a JSON array of id arrays\n";
    return 1;
  }
  std::vector<std::vector<int32_t>> ids;
  for (const auto& text : texts) {
    const bool ok = text.is_array() && text.size() >= 2 &&
                    std::all_of(text.begin(), text.end(),
                                [](const nlohmann::json& v) { return v.is_number_integer(); });
    if (!ok) {
      std::cerr << "reference_forward: every text must be an array of >= 2 token ids\n";
      return 1;
    }
    ids.push_back(text.get<std::vector<int32_t>>());
  }
  auto file = radixlm::gguf::GgufFile::Open(model_path);
  if (!file.ok()) {
    std::cerr << "reference_forward: " << file.status().ToString() << "\n";
    return 1;
  }
  const ReferenceModel model(**file, radixlm::kernels::KvDtype::kF16, options);
  const int64_t vocab = model.config().vocab_size;
  for (const std::vector<int32_t>& text : ids) {
    if (std::any_of(text.begin(), text.end(), [&](int32_t id) { return id < 0 || id >= vocab; })) {
      std::cerr << "reference_forward: a token id is outside the model's vocabulary [0, " << vocab
                << ")\n";
      return 1;
    }
  }

  std::vector<std::vector<int32_t>> top(ids.size());
  std::vector<std::vector<float>> hidden(ids.size());
  std::vector<std::vector<std::vector<float>>> logits(ids.size());
  std::vector<std::thread> workers;
  const size_t n_workers = static_cast<size_t>(std::max(threads, 1));
  for (size_t w = 0; w < n_workers; ++w) {
    workers.emplace_back([&, w] {
      for (size_t t = w; t < ids.size(); t += n_workers) {
        if (last_hidden) {
          hidden[t] = model.ForwardHidden(ids[t]).back();
        } else if (!logits_out.empty()) {
          logits[t] = model.Forward(ids[t]);
        } else {
          top[t] = Argmax(model, ids[t]);
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  if (last_hidden) {
    std::cout << nlohmann::json{{"hidden", hidden}}.dump() << "\n";
  } else if (!logits_out.empty()) {
    std::ofstream out(logits_out, std::ios::binary);
    for (const auto& text : logits) {
      for (const std::vector<float>& row : text) {
        out.write(reinterpret_cast<const char*>(row.data()),
                  static_cast<std::streamsize>(row.size() * sizeof(float)));
      }
    }
    if (!out) {
      std::cerr << "reference_forward: cannot write " << logits_out << "\n";
      return 1;
    }
  } else {
    std::cout << nlohmann::json{{"argmax", top}}.dump() << "\n";
  }
  return 0;
}
