// Teacher-forced next-token logits from llama.cpp (libllama) for a token sequence.
// Usage: llama_logits MODEL IDS.bin OUT.bin N_UBATCH [THREADS]
//   IDS.bin: int32 token ids; OUT.bin: float32 [n, vocab], row i = logits after ids[0..i].
//   LLAMA_KV_F32=1: the KV cache in F32 with flash attention off (llama.cpp's default is F16).
// The sequence is decoded in llama_decode calls of N_UBATCH tokens (the batch shape whose
// effect on the logits the caller measures), every row's logits requested.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODEL IDS.bin OUT.bin N_UBATCH [THREADS]\n", argv[0]);
    return 2;
  }
  const int ubatch = atoi(argv[4]);
  const int threads = argc > 5 ? atoi(argv[5]) : 2;
  FILE* f = fopen(argv[2], "rb");
  if (!f) return 1;
  std::vector<llama_token> ids;
  int32_t t;
  while (fread(&t, 4, 1, f) == 1) ids.push_back(t);
  fclose(f);
  llama_log_set(
      [](ggml_log_level level, const char* text, void*) {
        if (level >= GGML_LOG_LEVEL_WARN) fputs(text, stderr);
      },
      nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) {
    fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = ids.size() + 16;
  cp.n_batch = ubatch;
  cp.n_ubatch = ubatch;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.no_perf = true;
  if (const char* kv_f32 = getenv("LLAMA_KV_F32"); kv_f32 != nullptr && *kv_f32 == '1') {
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  }
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    fprintf(stderr, "cannot create context\n");
    return 1;
  }
  // LORA_ADAPTER=<adapter GGUF>: run under that LoRA adapter (user scale 1).
  if (const char* lora_path = getenv("LORA_ADAPTER"); lora_path != nullptr && *lora_path) {
    llama_adapter_lora* adapter = llama_adapter_lora_init(model, lora_path);
    float scale = 1.0f;
    if (adapter == nullptr || llama_set_adapters_lora(ctx, &adapter, 1, &scale) != 0) {
      fprintf(stderr, "cannot apply the LoRA adapter %s\n", lora_path);
      return 1;
    }
  }
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* out = fopen(argv[3], "wb");
  llama_batch batch = llama_batch_init(ubatch, 0, 1);
  for (size_t pos = 0; pos < ids.size(); pos += ubatch) {
    const int n = std::min<size_t>(ubatch, ids.size() - pos);
    batch.n_tokens = n;
    for (int i = 0; i < n; ++i) {
      batch.token[i] = ids[pos + i];
      batch.pos[i] = pos + i;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = 1;
    }
    if (llama_decode(ctx, batch) != 0) {
      fprintf(stderr, "decode failed at %zu\n", pos);
      return 1;
    }
    for (int i = 0; i < n; ++i) fwrite(llama_get_logits_ith(ctx, i), sizeof(float), vocab, out);
  }
  fclose(out);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
