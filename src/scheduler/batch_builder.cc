#include "scheduler/batch_builder.h"

#include <algorithm>

#include "util/check.h"

namespace radixlm {

model::LogitsMode ChunkLogitsMode(const Request& req, int64_t begin, int64_t end) {
  // Input logprobs read rows [first_logprob_row, prompt_len - 1).
  if (req.wants_input_logprobs() && end > req.first_logprob_row() && begin < req.prompt_len) {
    return model::LogitsMode::kAll;
  }
  const bool final = end == req.fill_len;
  if (req.is_embedding()) {
    if (req.in.pooling == Pooling::kMean) return model::LogitsMode::kAll;
    if (req.in.pooling == Pooling::kCls) {
      return begin == 0 ? model::LogitsMode::kAll : model::LogitsMode::kNone;
    }
    return final ? model::LogitsMode::kLast : model::LogitsMode::kNone;
  }
  const bool samples = req.max_new_tokens > req.output_len();
  return final && samples ? model::LogitsMode::kLast : model::LogitsMode::kNone;
}

void BuildForwardBatch(std::span<Request* const> decodes, std::span<const PrefillChunk> chunks,
                       const ReqToTokenTable& table, model::ForwardBatch* batch) {
  batch->sequences.clear();
  batch->sequences.reserve(decodes.size() + chunks.size());
  for (Request* req : decodes) {
    RADIXLM_CHECK(req->state == RequestState::kDecoding);
    RADIXLM_CHECK_EQ(req->kv_len + 1, static_cast<int64_t>(req->token_ids.size()));
    const std::span<const int32_t> row = table.Row(req->cache.req_pool_index);
    model::SequenceInput seq;
    seq.state_slot = req->cache.req_pool_index;  // (a hybrid model's linear-layer state)
    seq.lora = req->in.lora.get();
    seq.prefix_slots = row.first(req->kv_len);
    if (req->draft.size() > 1) {  // the root and its draft tree, every node's logits
      RADIXLM_CHECK_EQ(req->draft.token(0), req->token_ids.back());
      seq.tokens = req->draft.tokens();
      seq.new_slots = row.subspan(req->kv_len, req->draft.size());
      seq.logits = model::LogitsMode::kAll;
      seq.tree_depth = req->draft.depths();
      seq.tree_mask = req->draft.masks();
      if (HasMropeImages(req->in.images)) {  // node i continues the text at depth i
        req->rope_positions.clear();
        for (const int32_t depth : req->draft.depths()) {
          MropePositions(req->in.images, req->kv_len + depth, req->kv_len + depth + 1,
                         &req->rope_positions);
        }
        seq.rope_positions = req->rope_positions;
      }
    } else {
      seq.tokens = std::span<const int32_t>(req->token_ids).subspan(req->kv_len, 1);
      seq.new_slots = row.subspan(req->kv_len, 1);
      seq.logits = model::LogitsMode::kLast;
      if (HasMropeImages(req->in.images)) {  // behind its index by the images' rows
        req->rope_positions.clear();
        MropePositions(req->in.images, req->kv_len, req->kv_len + 1, &req->rope_positions);
        seq.rope_positions = req->rope_positions;
      }
    }
    batch->sequences.push_back(seq);
  }
  for (const PrefillChunk& chunk : chunks) {
    Request* req = chunk.req;
    RADIXLM_CHECK(req->state == RequestState::kPrefilling);
    RADIXLM_CHECK(chunk.begin == req->kv_len && chunk.end > chunk.begin &&
                  chunk.end <= req->fill_len)
        << "chunk [" << chunk.begin << ", " << chunk.end << ") of a request with kv_len "
        << req->kv_len << ", fill_len " << req->fill_len;
    const std::span<const int32_t> row = table.Row(req->cache.req_pool_index);
    const auto n = static_cast<size_t>(chunk.end - chunk.begin);
    model::SequenceInput seq;
    seq.tokens = std::span<const int32_t>(req->token_ids).subspan(chunk.begin, n);
    seq.new_slots = row.subspan(chunk.begin, n);
    seq.prefix_slots = row.first(chunk.begin);
    seq.logits = chunk.logits;
    seq.state_slot = req->cache.req_pool_index;
    seq.lora = req->in.lora.get();
    req->chunk_spans.clear();
    for (const PromptImage& image : req->in.images) {
      const int64_t b = std::max(image.begin, chunk.begin);
      const int64_t e = std::min(image.begin + image.n, chunk.end);
      if (b >= e) continue;
      RADIXLM_CHECK(!image.bidirectional || e == image.begin + image.n)
          << "a prefill chunk ends inside a bidirectional image span";
      const int64_t rows = image.image_rows > 0 ? image.image_rows : image.n;
      const int64_t width = static_cast<int64_t>(image.embeddings->size()) / rows;
      const int64_t row = image.first_row + (b - image.begin);
      req->chunk_spans.push_back({.begin = b - chunk.begin,
                                  .n = e - b,
                                  .rows = image.embeddings->data() + row * width,
                                  .bidirectional = image.bidirectional});
    }
    seq.embedding_spans = req->chunk_spans;
    if (HasMropeImages(req->in.images)) {
      req->rope_positions.clear();
      MropePositions(req->in.images, chunk.begin, chunk.end, &req->rope_positions);
      seq.rope_positions = req->rope_positions;
    }
    batch->sequences.push_back(seq);
  }
}

}  // namespace radixlm
