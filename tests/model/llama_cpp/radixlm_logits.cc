// Teacher-forced next-token logits from radixlm for a token sequence.
// Usage: radixlm_logits MODEL IDS.bin OUT.bin CHUNK [THREADS [QUANTIZATION]]  (formats as
// llama_logits.cc; LINEAR_ATTN_PREFILL=chunked: a hybrid model's chunked DeltaNet prefill).
// MODEL: a GGUF or a Hugging Face folder (QUANTIZATION: --quantization's q8_0 | q4_k | q6_k,
// folders only).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include "hf/model_file.h"
#include "model/lora_adapter.h"
#include "model/model.h"

using namespace radixlm;

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  const int chunk = atoi(argv[4]);
  FILE* f = fopen(argv[2], "rb");
  if (!f) return 1;
  std::vector<int32_t> ids;
  int32_t t;
  while (fread(&t, 4, 1, f) == 1) ids.push_back(t);
  fclose(f);
  model::ModelOptions o;
  o.n_threads = argc > 5 ? atoi(argv[5]) : 2;
  o.max_batch_tokens = chunk;
  o.max_context = static_cast<int64_t>(ids.size());
  // LINEAR_ATTN_PREFILL=recurrent|chunked: a hybrid model's --linear-attn-prefill.
  if (const char* mode = getenv("LINEAR_ATTN_PREFILL"); mode != nullptr && *mode) {
    auto parsed = model::ParseLinearAttnPrefill(mode);
    if (!parsed.ok()) {
      fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
      return 1;
    }
    o.linear_attn_prefill = *parsed;
  }
  auto file = hf::OpenModelFile(
      argv[1], {.quantization = argc > 6 ? argv[6] : "",
                .n_threads = o.n_threads,
                .log = [](const std::string& line) { fprintf(stderr, "%s\n", line.c_str()); }});
  if (!file.ok()) {
    fprintf(stderr, "%s\n", file.status().ToString().c_str());
    return 1;
  }
  auto m = model::Model::FromGguf(std::move(*file), o);
  if (!m.ok()) {
    fprintf(stderr, "%s\n", m.status().ToString().c_str());
    return 1;
  }
  fprintf(stderr, "%s\n", (*m)->config().DebugString().c_str());
  auto cache = (*m)->CreateKvCache({.n_slots = static_cast<int64_t>(ids.size())});
  if (!cache.ok()) {
    fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return 1;
  }
  // LORA_ADAPTER=<adapter GGUF>: run under that LoRA adapter.
  std::unique_ptr<model::LoraAdapter> lora;
  if (const char* lora_path = getenv("LORA_ADAPTER"); lora_path != nullptr && *lora_path) {
    auto a = model::LoraAdapter::Load(lora_path, (*m)->config(), (*m)->weights());
    if (!a.ok()) {
      fprintf(stderr, "%s\n", a.status().ToString().c_str());
      return 1;
    }
    lora = std::move(a).value();
  }
  std::vector<int32_t> slots(ids.size());
  std::iota(slots.begin(), slots.end(), 0);
  FILE* out = fopen(argv[3], "wb");
  for (size_t pos = 0; pos < ids.size(); pos += chunk) {
    const size_t n = std::min<size_t>(chunk, ids.size() - pos);
    model::ForwardBatch b;
    b.sequences.push_back({std::span<const int32_t>(ids.data() + pos, n),
                           std::span<const int32_t>(slots.data() + pos, n),
                           std::span<const int32_t>(slots.data(), pos), model::LogitsMode::kAll});
    b.sequences.back().lora = lora.get();
    model::ForwardOutput r;
    auto st = (*m)->Forward(b, **cache, &r);
    if (!st.ok()) {
      fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    fwrite(r.logits.data(), sizeof(float), r.n_rows * r.vocab_size, out);
  }
  fclose(out);
  return 0;
}
