// llama.cpp's teacher-forced next-token logits for a prompt with images, through its public
// multimodal API (libmtmd + libllama), for bench/image_kl_oracle.py: compiled by that script
// against the peer build (bench/llama_peer.py) into a cache folder outside the repository;
// not part of the project's build.
//
//   mtmd_logits MMPROJ TEXT_MODEL PROMPT_FILE OUT_PREFIX THREADS N_BATCH IMAGE...
// PROMPT_FILE holds the prompt's text with one mtmd_default_marker() ("<__media__>") per
// IMAGE, in order. It is laid out as llama-server lays out a prompt with images
// (mtmd_tokenize: BOS added, special tokens parsed). Every text chunk is decoded in
// llama_decode calls of N_BATCH tokens with every position's logits requested (the batch shape
// whose effect on the logits the caller measures); every image chunk is encoded
// (mtmd_encode_chunk) and decoded whole (mtmd_helper_decode_image_chunk, non-causal for
// gemma3; M-RoPE positions for qwen2vl, whose text after an image continues at the image's
// position + max(rows, cols)) as llama-server does.
// Writes OUT_PREFIX.ids (int32 per prompt token: the text token id, -1 at an image's tokens)
// and OUT_PREFIX.f32 (float32 [text positions, vocab]: the logits after each text token,
// in order); stdout gets one JSON line {"positions": .. (prompt tokens), "text_positions": ..,
// "vocab": .., "image_tokens": [..]}.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: %s MMPROJ TEXT_MODEL PROMPT_FILE OUT_PREFIX THREADS N_BATCH IMAGE...\n",
                 argv[0]);
    return 2;
  }
  const std::string out_prefix = argv[4];
  const int threads = std::atoi(argv[5]);
  const int n_batch = std::atoi(argv[6]);
  std::ifstream prompt_in(argv[3], std::ios::binary);
  const std::string prompt((std::istreambuf_iterator<char>(prompt_in)), {});
  llama_log_set(
      [](ggml_log_level level, const char* text, void*) {
        if (level >= GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
      },
      nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[2], mp);
  if (model == nullptr) return 1;
  mtmd_context_params cp = mtmd_context_params_default();
  cp.use_gpu = false;
  cp.n_threads = threads;
  cp.print_timings = false;
  cp.warmup = false;
  mtmd_context* mctx = mtmd_init_from_file(argv[1], model, cp);
  if (mctx == nullptr) return 1;
  std::vector<mtmd_bitmap*> bitmaps;
  for (int i = 7; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), {});
    mtmd_bitmap* bitmap = mtmd_helper_bitmap_init_from_buf(mctx, bytes.data(), bytes.size(), false,
                                                           mtmd_helper_init_opt_default())
                              .bitmap;
    if (bitmap == nullptr) {
      std::fprintf(stderr, "cannot load %s\n", argv[i]);
      return 1;
    }
    bitmaps.push_back(bitmap);
  }
  mtmd_input_chunks* chunks = mtmd_input_chunks_init();
  mtmd_input_text text{prompt.c_str(), prompt.size(), /*add_special=*/true,
                       /*parse_special=*/true};
  if (mtmd_tokenize(mctx, chunks, &text, bitmaps.data(), bitmaps.size()) != 0) {
    std::fprintf(stderr, "mtmd_tokenize failed\n");
    return 1;
  }
  // The context: every position, and batches that hold N_BATCH text tokens or a whole image.
  // (M-RoPE: an image takes max(rows, cols) positions but rows * cols KV cells.)
  const llama_pos n_pos = std::max<llama_pos>(
      mtmd_helper_get_n_pos(chunks), static_cast<llama_pos>(mtmd_helper_get_n_tokens(chunks)));
  int max_image = 0;
  for (size_t c = 0; c < mtmd_input_chunks_size(chunks); ++c) {
    const mtmd_input_chunk* chunk = mtmd_input_chunks_get(chunks, c);
    if (mtmd_input_chunk_get_type(chunk) != MTMD_INPUT_CHUNK_TYPE_TEXT) {
      max_image = std::max<int>(max_image, mtmd_input_chunk_get_n_tokens(chunk));
    }
  }
  llama_context_params lp = llama_context_default_params();
  lp.n_ctx = n_pos + 16;
  lp.n_batch = std::max(n_batch, max_image);
  lp.n_ubatch = lp.n_batch;
  lp.n_threads = threads;
  lp.n_threads_batch = threads;
  lp.no_perf = true;
  llama_context* lctx = llama_init_from_model(model, lp);
  if (lctx == nullptr) return 1;
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* ids_out = std::fopen((out_prefix + ".ids").c_str(), "wb");
  FILE* logits_out = std::fopen((out_prefix + ".f32").c_str(), "wb");
  if (ids_out == nullptr || logits_out == nullptr) return 1;
  llama_batch batch = llama_batch_init(n_batch, 0, 1);
  llama_pos n_past = 0;
  int n_written = 0;  // prompt tokens (ids written)
  size_t text_positions = 0;
  std::string image_tokens;
  for (size_t c = 0; c < mtmd_input_chunks_size(chunks); ++c) {
    const mtmd_input_chunk* chunk = mtmd_input_chunks_get(chunks, c);
    if (mtmd_input_chunk_get_type(chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
      size_t n = 0;
      const llama_token* tokens = mtmd_input_chunk_get_tokens_text(chunk, &n);
      std::fwrite(tokens, sizeof(llama_token), n, ids_out);
      for (size_t at = 0; at < n; at += n_batch) {
        const int m = static_cast<int>(std::min<size_t>(n_batch, n - at));
        batch.n_tokens = m;
        for (int i = 0; i < m; ++i) {
          batch.token[i] = tokens[at + i];
          batch.pos[i] = n_past + i;
          batch.n_seq_id[i] = 1;
          batch.seq_id[i][0] = 0;
          batch.logits[i] = 1;
        }
        if (llama_decode(lctx, batch) != 0) {
          std::fprintf(stderr, "decode failed at position %d\n", n_past);
          return 1;
        }
        for (int i = 0; i < m; ++i) {
          std::fwrite(llama_get_logits_ith(lctx, i), sizeof(float), vocab, logits_out);
        }
        n_past += m;
        n_written += m;
        text_positions += m;
      }
      continue;
    }
    const int n = static_cast<int>(mtmd_input_chunk_get_n_tokens(chunk));
    if (mtmd_encode_chunk(mctx, chunk) != 0) return 1;
    llama_pos new_n_past = n_past;
    if (mtmd_helper_decode_image_chunk(mctx, lctx, chunk, mtmd_get_output_embd(mctx), n_past, 0,
                                       lp.n_batch, &new_n_past, nullptr, nullptr) != 0) {
      return 1;
    }
    const std::vector<int32_t> none(n, -1);  // one per token (M-RoPE: fewer positions)
    std::fwrite(none.data(), sizeof(int32_t), none.size(), ids_out);
    n_past = new_n_past;
    n_written += n;
    image_tokens += (image_tokens.empty() ? "" : ", ") + std::to_string(n);
  }
  std::fclose(ids_out);
  std::fclose(logits_out);
  std::printf(
      "{\"positions\": %d, \"text_positions\": %zu, \"vocab\": %d, \"image_tokens\": [%s]}\n",
      n_written, text_positions, vocab, image_tokens.c_str());
  llama_batch_free(batch);
  mtmd_input_chunks_free(chunks);
  for (mtmd_bitmap* b : bitmaps) mtmd_bitmap_free(b);
  llama_free(lctx);
  mtmd_free(mctx);
  llama_model_free(model);
  return 0;
}
