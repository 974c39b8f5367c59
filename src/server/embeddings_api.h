// Embedding routes (an --is-embedding server), as SGLang serves them:
//
//   POST /v1/embeddings  OpenAI's (server/embedding_request.h has the body)
//        → {"object": "list", "data": [{"object": "embedding", "index": i, "embedding":
//           [floats] | "base64"}], "model", "usage": {"prompt_tokens", "total_tokens"}}
//   POST|PUT /encode     SGLang's native EmbeddingReqInput ({"text"} or {"input_ids"})
//        → {"embedding": [floats], "meta_info": {"id", "prompt_tokens", "cached_tokens", ...}}
//          (a list of those for a list of inputs)
//
// Each input is one engine request (GenerateRequest::embed): they are batched and scheduled
// like prompts, and a decoder embedder with last pooling reuses cached prefixes. The vectors
// are L2-normalised; `dimensions` keeps the first d values and renormalises (larger than the
// model's width: a 400). A generation server answers the embedding routes with a 400 naming
// --is-embedding; an embedding server answers /generate, /v1/completions and
// /v1/chat/completions with a 400 naming the routes it serves.
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

// Adds the embedding routes; on an embedding server, replaces the generation routes with the
// refusal (so call it after they are added).
void AddEmbeddingRoutes(const ServerContext& context, Router* router);

}  // namespace radixlm::server
