// ForwardBatch: the input of one forward pass over a ragged batch of sequences, and
// ForwardOutput, its logits.
//
// Each sequence contributes n_new >= 1 new tokens (a prefill chunk or a single decode token)
// that continue a prefix already in the KV cache. Positions are implied by the prefix: new
// token i is at position prefix_slots.size() + i, and its K/V are written to new_slots[i].
// The prefix's K/V are only read, never recomputed. Prefill chunks and decode tokens of
// different sequences mix freely in one batch; all their rows go through each matmul together.
// The spans are views: the caller keeps the data alive for the duration of Forward().
//
// Sliding-window layers with their own storage (KvCache with n_swa_slots > 0): slots are
// full-layer slots, and swa_slot_map translates each to the row windowed layers use
// (KvPool::swa_slot_map(); 0 where that KV was released). Every key a windowed layer can see
// must still have its row; Forward() refuses the batch otherwise.
//
// Tree verification (speculative decoding): with tree_depth and tree_mask set, the new tokens
// are a draft tree instead of a chain (spec/draft_tree.h): new token i is at position
// prefix_slots.size() + tree_depth[i] and attends to the prefix and to the new tokens j whose
// bit is set in tree_mask[i] (its ancestors and itself); at most 64 new tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace radixlm::model {

class LoraAdapter;

enum class LogitsMode {
  kLast,  // one row: the logits after the last new token (next-token prediction)
  kAll,   // one row per new token (prompt logprobs)
  kNone,  // no logits (e.g. a middle chunk of a chunked prefill)
};

// Rows given in place of token embeddings for new tokens [begin, begin + n) of a sequence (an
// image's projector output). They are used as they are: the model's embedding_scale applies to
// token rows only (llama.cpp's gemma3 scales only when its input is tokens). The token ids at
// those positions are not read (the radix tree's image ids lie outside the vocabulary).
// bidirectional: every token of the span also sees the span's later tokens, as llama.cpp decodes
// gemma3's image tokens (mtmd_decode_use_non_causal); the sliding window still counts back from
// each token's own position. The whole span is in this batch: a bidirectional span split over
// two forward passes would not be the same computation.
struct EmbeddingSpan {
  int64_t begin = 0;  // first new token of the span
  int64_t n = 0;      // >= 1
  // [n, hidden_size], or [n, hidden_size * (1 + n_deepstack_layers)] for a model with deepstack
  // (ModelConfig::EmbeddingRowSize(): qwen3vl's image rows and their deepstack slices).
  const float* rows = nullptr;
  bool bidirectional = false;
};

struct SequenceInput {
  std::span<const int32_t> tokens;        // [n_new] token ids in [0, vocab) (see EmbeddingSpan)
  std::span<const int32_t> new_slots;     // [n_new] KV slots written for the new tokens
  std::span<const int32_t> prefix_slots;  // [n_prefix] slots of positions 0..n_prefix-1
  LogitsMode logits = LogitsMode::kLast;
  std::span<const int32_t> tree_depth = {};  // [n_new] or empty (a chain)
  std::span<const uint64_t> tree_mask = {};  // [n_new] or empty
  // A hybrid model's linear-layer state slot (KvCache::recurrent()): the state after the
  // prefix, zeroed first when the prefix is empty. Distinct per sequence of a batch; unused
  // by other models.
  int32_t state_slot = 0;
  // The LoRA adapter this sequence runs under (model/lora_adapter.h; kept alive by the caller
  // for the duration of Forward()); null: the base model alone.
  const LoraAdapter* lora = nullptr;
  // A hybrid model's state checkpoints (speculative verification, where drafted tokens may be
  // rejected): after new token i the linear layers' state is also copied into state slot
  // state_checkpoints[i] (none where it is -1). [n_new] or empty; slots distinct from every
  // sequence's state_slot.
  std::span<const int32_t> state_checkpoints = {};
  // The NextN (MTP) layer's second input (model/nextn_model.h): for each new token, the
  // target model's final-normed hidden state at the position before it. [n_new * hidden_size];
  // read by a NextnModel only.
  std::span<const float> nextn_hidden = {};
  // Spans of new tokens whose input rows are given (EmbeddingSpan), in order and disjoint;
  // not with a draft tree.
  std::span<const EmbeddingSpan> embedding_spans = {};
  // M-RoPE models (ModelConfig::mrope()): each new token's (t, h, w) rotary positions, [n_new * 3]
  // token by token; empty: all three are the token's position (prefix_slots.size() + i), as for
  // text. Only RoPE reads them: the causal mask and the KV slots stay by position in the
  // sequence (an image's tokens share t and differ in h, w; text after it continues from
  // its t + max(rows, cols), so rotary positions fall behind sequence positions). A draft
  // tree's node gives the positions of its depth. Refused by models without M-RoPE.
  std::span<const int64_t> rope_positions = {};
};

struct ForwardBatch {
  std::vector<SequenceInput> sequences;
  std::span<const int32_t> swa_slot_map = {};  // [>= every slot used] or empty
  // Also return every new token's final-normed hidden state (ForwardOutput::hidden).
  bool output_hidden = false;
};

// Logits of a batch, rows in sequence order. Buffers are reused across calls (they grow to
// the largest batch seen and never shrink).
struct ForwardOutput {
  std::vector<float> logits;        // [n_rows, vocab]
  std::vector<int64_t> row_offset;  // [n_sequences]: first row of sequence s
  std::vector<int64_t> row_count;   // [n_sequences]: 0, 1 or n_new
  int64_t n_rows = 0;
  int64_t vocab_size = 0;
  // With ForwardBatch::output_hidden: [n_tokens, hidden_size], each new token's hidden state
  // after the final norm (the LM head's input), in batch order (sequence by sequence).
  std::vector<float> hidden;

  // Logits row r of sequence s ([vocab]); r < row_count[s].
  const float* Row(size_t s, int64_t r = 0) const {
    return logits.data() + (row_offset[s] + r) * vocab_size;
  }
  // The last row of sequence s (its next-token logits).
  const float* LastRow(size_t s) const { return Row(s, row_count[s] - 1); }
};

}  // namespace radixlm::model
