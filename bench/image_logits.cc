// radixlm's teacher-forced next-token logits for a prompt with images, for
// bench/image_kl_oracle.py (the same files as bench/mtmd_logits.cc, llama.cpp's side).
//
//   image_logits MMPROJ MODEL PROMPT_FILE OUT_PREFIX THREADS CHUNK IMAGE...
// PROMPT_FILE holds the prompt's text with one "<__media__>" per IMAGE, in order. The prompt is
// built as the engine builds a /generate prompt with image_data (engine/image_prompt.h over the
// projector's ImageEncoder, BOS added) and run through Model::Forward in chunks of CHUNK
// tokens, a chunk that would end inside an image's span running on to its end (the whole span
// in one pass, as the scheduler prefills it), with M-RoPE positions for images on a grid
// (qwen2.5vl_merger beside qwen2vl) as the scheduler gives them (with the environment variable
// IMAGE_LOGITS_PLAIN_POSITIONS set: one position per token instead, a negative control; with
// IMAGE_LOGITS_NO_DEEPSTACK set, a qwen3vl_merger's deepstack slices are zeroed, another).
// Writes OUT_PREFIX.ids (int32 per position: the token id, -1 at an image's positions) and
// OUT_PREFIX.f32 (float32 [text positions, vocab]: the logits after each text position, in
// order); stdout gets one JSON line {"positions": .., "text_positions": .., "vocab": ..,
// "image_tokens": [..]}.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "engine/image_cache.h"
#include "engine/image_prompt.h"
#include "engine/model_assets.h"
#include "engine/projector_encoder.h"
#include "hf/model_file.h"
#include "model/model.h"

using namespace radixlm;

namespace {

int Fail(const Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 1;
}

std::vector<uint8_t> ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s MMPROJ MODEL PROMPT_FILE OUT_PREFIX THREADS CHUNK IMAGE...\n",
                 argv[0]);
    return 2;
  }
  const std::string out_prefix = argv[4];
  const int threads = std::atoi(argv[5]);
  const int64_t chunk = std::atoi(argv[6]);
  const std::vector<uint8_t> prompt_bytes = ReadFile(argv[3]);
  const std::string prompt(prompt_bytes.begin(), prompt_bytes.end());

  auto encoder = LoadProjectorEncoder(argv[1], threads);
  if (!encoder.ok()) return Fail(encoder.status());
  std::vector<EncodedImage> images;
  for (int i = 7; i < argc; ++i) {
    const std::vector<uint8_t> bytes = ReadFile(argv[i]);
    auto rows = std::make_shared<std::vector<float>>();
    auto n = (*encoder)->Encode(bytes, rows.get());
    if (!n.ok()) return Fail(n.status());
    if (std::getenv("IMAGE_LOGITS_NO_DEEPSTACK") != nullptr && (*encoder)->n_deepstack() > 0) {
      const int64_t width = (*encoder)->n_embd();
      const int64_t main = width / (1 + (*encoder)->n_deepstack());
      for (int64_t t = 0; t < n->n; ++t) {
        std::fill(rows->begin() + t * width + main, rows->begin() + (t + 1) * width, 0.0f);
      }
    }
    images.push_back({.hash = HashImageBytes(bytes),
                      .n_tokens = n->n,
                      .rows = std::move(rows),
                      .grid_rows = n->grid_rows,
                      .grid_cols = n->grid_cols,
                      .pieces = n->pieces});
  }

  hf::ModelFileOptions file_options;
  file_options.n_threads = threads;
  auto file = hf::OpenModelFile(argv[2], file_options);
  if (!file.ok()) return Fail(file.status());
  auto assets = ModelAssets::FromGguf(**file, argv[2]);
  if (!assets.ok()) return Fail(assets.status());
  const ImagePromptLayout layout = (*encoder)->layout();
  auto built = BuildImagePrompt(prompt, /*verbatim=*/false, images, layout, (*assets)->codec());
  if (!built.ok()) return Fail(built.status());
  const std::vector<int32_t>& ids = built->ids;
  const auto n_ids = static_cast<int64_t>(ids.size());

  int64_t max_image = 0;
  for (const PromptImage& image : built->images) max_image = std::max(max_image, image.n);
  model::ModelOptions options;
  options.n_threads = threads;
  options.max_batch_tokens = chunk + max_image;  // a chunk runs on to the end of an image
  options.max_context = n_ids;
  auto m = model::Model::FromGguf(std::move(*file), options);
  if (!m.ok()) return Fail(m.status());
  auto cache = (*m)->CreateKvCache({.n_slots = n_ids});
  if (!cache.ok()) return Fail(cache.status());

  std::vector<int32_t> slots(ids.size());
  std::iota(slots.begin(), slots.end(), 0);
  FILE* ids_out = std::fopen((out_prefix + ".ids").c_str(), "wb");
  FILE* logits_out = std::fopen((out_prefix + ".f32").c_str(), "wb");
  if (ids_out == nullptr || logits_out == nullptr) return 1;
  int64_t text_positions = 0;
  int64_t vocab = 0;
  for (int64_t pos = 0; pos < n_ids;) {
    int64_t end = std::min(pos + chunk, n_ids);
    for (const PromptImage& image : built->images) {
      if (image.begin < end && end < image.begin + image.n) end = image.begin + image.n;
    }
    std::vector<model::EmbeddingSpan> spans;
    for (const PromptImage& image : built->images) {
      if (image.begin >= pos && image.begin < end) {
        const int64_t width = static_cast<int64_t>(image.embeddings->size()) / image.image_rows;
        spans.push_back({.begin = image.begin - pos,
                         .n = image.n,
                         .rows = image.embeddings->data() + image.first_row * width,
                         .bidirectional = image.bidirectional});
      }
    }
    model::ForwardBatch batch;
    model::SequenceInput in;
    in.tokens = std::span<const int32_t>(ids.data() + pos, end - pos);
    in.new_slots = std::span<const int32_t>(slots.data() + pos, end - pos);
    in.prefix_slots = std::span<const int32_t>(slots.data(), pos);
    in.logits = model::LogitsMode::kAll;
    in.embedding_spans = spans;
    std::vector<int64_t> rope_positions;  // (M-RoPE: the scheduler's MropePositions)
    if (HasMropeImages(built->images) && std::getenv("IMAGE_LOGITS_PLAIN_POSITIONS") == nullptr) {
      MropePositions(built->images, pos, end, &rope_positions);
      in.rope_positions = rope_positions;
    }
    batch.sequences.push_back(in);
    model::ForwardOutput out;
    if (Status s = (*m)->Forward(batch, **cache, &out); !s.ok()) return Fail(s);
    vocab = out.vocab_size;
    for (int64_t i = pos; i < end; ++i) {
      const int32_t id = IsImageId(ids[i]) ? -1 : ids[i];
      std::fwrite(&id, sizeof(id), 1, ids_out);
      if (id < 0) continue;
      std::fwrite(out.Row(0, i - pos), sizeof(float), vocab, logits_out);
      ++text_positions;
    }
    pos = end;
  }
  std::fclose(ids_out);
  std::fclose(logits_out);
  std::string image_tokens;
  for (const PromptImage& image : built->images) {
    image_tokens += (image_tokens.empty() ? "" : ", ") + std::to_string(image.n);
  }
  std::printf(
      "{\"positions\": %lld, \"text_positions\": %lld, \"vocab\": %lld, \"image_tokens\": [%s]}\n",
      static_cast<long long>(n_ids), static_cast<long long>(text_positions),
      static_cast<long long>(vocab), image_tokens.c_str());
  return 0;
}
