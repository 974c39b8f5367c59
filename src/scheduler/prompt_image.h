// Images in a prompt, and the ids their token spans carry in the radix tree.
//
// An image enters the prompt as a span of positions whose model inputs are its encoder's
// embeddings (model/forward_batch.h EmbeddingSpan), not token rows; or as several such spans
// with text between them (idefics3's tiles), each a PromptImage holding a run of the image's
// rows. The radix tree keys a span by the image's content: row i of an image whose 128-bit
// content hash is (h1, h2) (i counted over the image's rows, whichever span holds it) holds
// the id
//   kImageIdBase | ((SplitMix64(h1 + i) ^ SplitMix64(h2 - i)) & (kImageIdBase - 1)),
// a value in [2^30, 2^31) — above every vocabulary (the largest are ~2^18), so an image id is
// never a token id, and different for every position of the span. So the same image in two
// requests matches through the span and beyond (the tree compares ids only), and a different
// image stops the match at its first position (unless two 30-bit ids collide there: 2^-30 per
// pair of different images; a match can then reach only as far as the ids keep colliding).
//
// The ids live in Request::token_ids and the tree only; nothing reads them as vocabulary:
// the model takes the embeddings there, and every path that looks up a prompt token's text or
// logit (input logprobs, repetition penalty, n-gram drafts) skips or refuses them (IsImageId).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace radixlm {

constexpr int32_t kImageIdBase = int32_t{1} << 30;

inline bool IsImageId(int32_t id) { return id >= kImageIdBase; }

// An image's content hash: 128 bits of the SHA-256 of its file's bytes (engine/image_cache.h).
struct ImageHash {
  uint64_t h1 = 0, h2 = 0;
  bool operator==(const ImageHash&) const = default;
};

// Fills `ids` with the ids of rows first_row, first_row + 1, ... of an image of content hash
// `hash` (see above).
void WriteImageIds(const ImageHash& hash, std::span<int32_t> ids, int64_t first_row = 0);

// One span of an image's rows in a request's prompt: prompt positions [begin, begin + n) hold
// the image's rows [first_row, first_row + n) and their ids.
struct PromptImage {
  int64_t begin = 0;
  int64_t n = 0;
  int64_t first_row = 0;
  ImageHash hash;  // what the ids derive from
  // The encoder's output for the whole image, [rows, hidden] (shared with the engine's encoder
  // cache; rows >= first_row + n).
  std::shared_ptr<const std::vector<float>> embeddings;
  int64_t image_rows = 0;  // the image's rows (0: n, the span is the whole image)
  // Its tokens see the whole span (gemma3: llama.cpp's mtmd_decode_use_non_causal); a prefill
  // chunk then never ends inside it.
  bool bidirectional = false;
  // > 0: the span is a grid of grid_rows x grid_cols tokens (row by row; n = rows * cols) whose
  // M-RoPE positions are 2-D (Qwen2-VL's language model; see MropePositions); 0: the span's
  // tokens take positions one after another, as text does.
  int64_t grid_rows = 0;
  int64_t grid_cols = 0;
};

// Whether a prompt's images give its tokens M-RoPE positions (some image has a grid).
bool HasMropeImages(std::span<const PromptImage> images);

// The M-RoPE (t, h, w) positions of tokens [begin, end) of a sequence whose prompt has
// `images` (in order), appended to *out token by token (3 values each), as llama.cpp's mtmd
// gives them (MTMD_POS_TYPE_MROPE): text continues from the previous token's t + 1 with all
// three equal; a grid image starting at t = p0 gives its token (row, col) the positions
// (p0, p0 + row, p0 + col), and the text after it continues at p0 + max(rows, cols). So every
// token after an image is max(rows, cols) - rows * cols behind its index (decode steps too:
// `end` may pass the prompt). Images without a grid take one position per token.
void MropePositions(std::span<const PromptImage> images, int64_t begin, int64_t end,
                    std::vector<int64_t>* out);

}  // namespace radixlm
