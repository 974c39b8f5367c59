// Embedding request bodies, parsed into engine requests (GenerateRequest::embed):
//
//   POST /v1/embeddings (OpenAI)  {"input": "text" | ["a", "b"] | [ids] | [[ids], [ids]],
//                                  "model", "encoding_format": "float" | "base64",
//                                  "dimensions": d, "user"}
//   POST /encode (SGLang native)  {"text": "text" | ["a", "b"]} or {"input_ids": [ids] | [[ids]]},
//                                  "rid"
//
// Every input must be non-empty; at most kMaxEmbeddingInputs per request (OpenAI's limit).
// Bad input is InvalidArgument naming the field (the routes' 400); prompt length is checked by
// the engine (a prompt past the context length is its 400).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/api.h"
#include "util/status.h"

namespace radixlm::server {

inline constexpr size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingCall {
  std::vector<GenerateRequest> requests;  // one per input, in order, embed set
  bool batch = false;                     // the input was a list of inputs (native: a list back)
  bool base64 = false;                    // encoding_format "base64"
  std::optional<int64_t> dimensions;      // truncate to this many, then renormalise
};

StatusOr<EmbeddingCall> ParseOpenAiEmbedding(const nlohmann::json& body);
StatusOr<EmbeddingCall> ParseNativeEmbedding(const nlohmann::json& body);

// The first `dimensions` values of a unit vector, renormalised (matryoshka embeddings, as
// OpenAI's and SGLang's `dimensions`); the whole vector when dimensions is unset.
std::vector<float> TruncateEmbedding(std::vector<float> v, std::optional<int64_t> dimensions);

// OpenAI's base64 embedding: the values as little-endian float32, base64-encoded.
std::string EmbeddingToBase64(const std::vector<float>& v);

}  // namespace radixlm::server
