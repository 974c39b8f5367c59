// llama.cpp's image embeddings through its public multimodal API (libmtmd), for
// bench/vision_oracle.py: compiled by that script against the peer build (bench/llama_peer.py)
// into a cache folder outside the repository; not part of the project's build.
//
//   mtmd_embed_dump MMPROJ TEXT_MODEL OUT_DIR THREADS IMAGE...
// IMAGE is a file (decoded by llama.cpp's helper, stb_image), raw:W:H:PATH (8-bit RGB bytes),
// or size:W:H (a grey W x H image, tokenized only: its token count, no encoding).
// For image i, OUT_DIR/i.f32 gets the [n_tokens, n_embd] floats (of every image chunk, in
// order: idefics3's tiles, then its overview), and stdout one JSON line
// {"image": i, "n_tokens": .., "n_embd": .., "encode_ms": ..} (size:W:H: encode_ms is absent).
#include <chrono>
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
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s MMPROJ TEXT_MODEL OUT_DIR THREADS IMAGE...\n", argv[0]);
    return 2;
  }
  const std::string out_dir = argv[3];
  const int threads = std::atoi(argv[4]);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  // Not vocab_only: that leaves llama_model_n_embd_inp at 0.
  llama_model* model = llama_model_load_from_file(argv[2], mp);
  if (model == nullptr) return 1;
  mtmd_context_params cp = mtmd_context_params_default();
  cp.use_gpu = false;
  cp.n_threads = threads;
  cp.print_timings = false;
  cp.warmup = false;
  mtmd_context* ctx = mtmd_init_from_file(argv[1], model, cp);
  if (ctx == nullptr) return 1;
  const int n_embd = llama_model_n_embd_inp(model);
  for (int i = 5; i < argc; ++i) {
    const std::string arg = argv[i];
    mtmd_bitmap* bitmap = nullptr;
    const bool count_only = arg.rfind("size:", 0) == 0;
    if (count_only) {
      const size_t a = arg.find(':', 5);
      const int w = std::atoi(arg.substr(5, a - 5).c_str());
      const int h = std::atoi(arg.substr(a + 1).c_str());
      const std::vector<unsigned char> grey(size_t(w) * h * 3, 128);
      bitmap = mtmd_bitmap_init(w, h, grey.data());
    } else if (arg.rfind("raw:", 0) == 0) {
      const size_t a = arg.find(':', 4), b = arg.find(':', a + 1);
      const int w = std::atoi(arg.substr(4, a - 4).c_str());
      const int h = std::atoi(arg.substr(a + 1, b - a - 1).c_str());
      std::ifstream in(arg.substr(b + 1), std::ios::binary);
      std::vector<unsigned char> rgb((std::istreambuf_iterator<char>(in)), {});
      if (rgb.size() != size_t(w) * h * 3) return 1;
      bitmap = mtmd_bitmap_init(w, h, rgb.data());
    } else {
      std::ifstream in(arg, std::ios::binary);
      std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), {});
      bitmap = mtmd_helper_bitmap_init_from_buf(ctx, bytes.data(), bytes.size(), false,
                                                mtmd_helper_init_opt_default())
                   .bitmap;
    }
    if (bitmap == nullptr) {
      std::fprintf(stderr, "cannot load %s\n", arg.c_str());
      return 1;
    }
    mtmd_input_chunks* chunks = mtmd_input_chunks_init();
    const std::string marker = mtmd_default_marker();
    mtmd_input_text text{marker.c_str(), marker.size(), false, true};
    const mtmd_bitmap* bitmaps[] = {bitmap};
    if (mtmd_tokenize(ctx, chunks, &text, bitmaps, 1) != 0) return 1;
    // One image chunk, or several (idefics3: each tile, then the overview): their rows in order.
    std::vector<const mtmd_input_chunk*> images;
    size_t n_tokens = 0;
    for (size_t c = 0; c < mtmd_input_chunks_size(chunks); ++c) {
      const mtmd_input_chunk* chunk = mtmd_input_chunks_get(chunks, c);
      if (mtmd_input_chunk_get_type(chunk) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
      images.push_back(chunk);
      n_tokens += mtmd_input_chunk_get_n_tokens(chunk);
    }
    if (images.empty()) return 1;
    if (count_only) {
      std::printf("{\"image\": %d, \"n_tokens\": %zu, \"n_embd\": %d}\n", i - 5, n_tokens, n_embd);
      std::fflush(stdout);
      mtmd_input_chunks_free(chunks);
      mtmd_bitmap_free(bitmap);
      continue;
    }
    std::ofstream out(out_dir + "/" + std::to_string(i - 5) + ".f32", std::ios::binary);
    double ms = 0;
    for (const mtmd_input_chunk* image : images) {
      const auto t0 = std::chrono::steady_clock::now();
      if (mtmd_encode_chunk(ctx, image) != 0) return 1;
      ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const float* embd = mtmd_get_output_embd(ctx);
      out.write(reinterpret_cast<const char*>(embd),
                mtmd_input_chunk_get_n_tokens(image) * n_embd * sizeof(float));
    }
    std::printf("{\"image\": %d, \"n_tokens\": %zu, \"n_embd\": %d, \"encode_ms\": %.1f}\n", i - 5,
                n_tokens, n_embd, ms);
    std::fflush(stdout);
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bitmap);
  }
  mtmd_free(ctx);
  llama_model_free(model);
  return 0;
}
