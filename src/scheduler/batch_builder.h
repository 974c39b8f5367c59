// Batch building: turns a round's decodes and prefill chunks into one ragged ForwardBatch.
//
// Prefill chunks and decode steps mix in one forward (SGLang separates them unless
// --enable-mixed-chunk; with our ragged forward, mixing costs nothing and keeps decodes
// flowing while long prompts prefill). Sequence order: decodes first, then chunks, so output
// row s of the ForwardOutput belongs to the s-th of that concatenation.
#pragma once

#include <cstdint>
#include <span>

#include "cache/req_to_token.h"
#include "model/forward_batch.h"
#include "scheduler/request.h"

namespace radixlm {

// One request's prefill work this round: tokens [begin, end) of its token_ids, whose KV slots
// are already written in its row.
struct PrefillChunk {
  Request* req = nullptr;
  int64_t begin = 0;
  int64_t end = 0;
  model::LogitsMode logits = model::LogitsMode::kLast;
  bool is_final() const { return end == req->fill_len; }
};

// The logits a chunk needs: every row when input logprobs are due in it, the last row when it
// completes the prefill and a token will be sampled, none otherwise.
model::LogitsMode ChunkLogitsMode(const Request& req, int64_t begin, int64_t end);

// Fills *batch (cleared first). Spans point into the requests' token_ids and the table, which
// must not change until the forward is done. A decode's input is its newest output token
// (token_ids[kv_len], kv_len == token_ids.size() - 1), written to row slot kv_len; a decode
// with a draft (Request::draft) sends the whole tree, node i to row slot kv_len + i, and asks
// for every node's logits. A chunk's images (RequestInput::images) go as embedding spans over
// the positions of each that the chunk covers (kept in Request::chunk_spans). A request whose
// images have grids (M-RoPE) gives every new token, prefill and decode, its rotary positions
// (MropePositions, kept in Request::rope_positions).
void BuildForwardBatch(std::span<Request* const> decodes, std::span<const PrefillChunk> chunks,
                       const ReqToTokenTable& table, model::ForwardBatch* batch);

}  // namespace radixlm
