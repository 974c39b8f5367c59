// BatchPlan: a validated, flattened view of a ForwardBatch (internal to the forward pass).
//
// The batch's new tokens are laid out back to back (sequence order), so every matmul sees one
// [n_tokens, cols] activation block; per sequence, the slots its attention reads (prefix then
// new tokens, i.e. slot of position j at j) are concatenated into kv_slots (per node for a
// draft tree: its prefix then its ancestors). Buffers keep their
// capacity between calls, so a warm plan allocates nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/forward_batch.h"
#include "util/status.h"

namespace radixlm::model {

struct BatchPlan {
  struct Sequence {
    int64_t first_token = 0;  // row of its first new token in the token arrays
    int64_t n_new = 0;
    int64_t first_logit = 0;  // first output row
    int64_t n_logits = 0;
  };
  // What one attention call covers: queries [first_token, first_token + n_q) over the slots
  // kv_slots[kv_offset, kv_offset + n_kv) (positions 0..n_kv-1). A chain sequence is one
  // entry; a draft tree is one entry per node, whose keys are the prefix and the node's
  // ancestors in depth order, so each node's attention is exactly that of decoding its path.
  struct AttentionEntry {
    int64_t first_token = 0;
    int64_t n_q = 0;
    int64_t kv_offset = 0;
    int64_t n_kv = 0;
  };

  // An EmbeddingSpan placed in the batch's rows.
  struct EmbeddingRows {
    int64_t first_token = 0;
    int64_t n = 0;
    const float* rows = nullptr;  // [n, hidden]
  };

  int64_t n_tokens = 0;
  std::vector<int32_t> tokens;     // [n_tokens] (0 where an embedding span gives the row)
  std::vector<int64_t> positions;  // [n_tokens]
  // [n_tokens * 3] or empty (no sequence gave SequenceInput::rope_positions): each token's
  // (t, h, w) M-RoPE positions, (p, p, p) for a sequence that gave none.
  std::vector<int64_t> rope_positions;
  std::vector<int32_t> new_slots;  // [n_tokens]
  std::vector<int32_t> kv_slots;   // [sum of n_kv]
  // The same slots as rows of the sliding-window layers (through the batch's swa_slot_map);
  // filled only when Build is given n_swa_slots > 0.
  std::vector<int32_t> swa_new_slots;  // [n_tokens]
  std::vector<int32_t> swa_kv_slots;   // [sum of n_kv]
  std::vector<Sequence> sequences;
  std::vector<AttentionEntry> attention;
  std::vector<int32_t> logit_rows;  // token rows whose logits are returned, output order
  std::vector<EmbeddingRows> embedding_rows;
  // [n_tokens] or empty (no bidirectional span in the batch): the last key position each
  // token attends to (kernels::AttentionSequence::q_last_key).
  std::vector<int64_t> last_key;

  // Validates and flattens. InvalidArgument (naming the sequence) for: an empty batch or
  // sequence, mismatched span sizes, token ids outside [0, vocab_size), slots outside
  // [0, n_slots), more than max_tokens new tokens, positions beyond max_positions, an
  // embedding span outside the sequence's new tokens or out of order, or a draft
  // tree that is not one (more than 64 nodes, a node whose mask is not its parent's plus
  // itself, depths that do not follow the masks). With n_swa_slots > 0 (windowed layers keep
  // their own rows) also: no swa_slot_map, a slot the map does not cover or maps outside
  // [0, n_swa_slots), a new token without a row, or a key inside some query's window of
  // swa_window positions whose windowed KV was released (row 0).
  Status Build(const ForwardBatch& batch, int64_t vocab_size, int64_t n_slots, int64_t max_tokens,
               int64_t max_positions, int64_t n_swa_slots = 0, int64_t swa_window = 0);

 private:
  Status CheckEmbeddingSpans(const SequenceInput& in, const std::string& where) const;
  Status TranslateSwa(std::span<const int32_t> map, int64_t n_swa_slots, int64_t swa_window);
};

}  // namespace radixlm::model
