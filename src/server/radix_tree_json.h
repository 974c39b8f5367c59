// The JSON of a RadixTreeSnapshot (GET /radix_tree, the "tree" events of /radix_tree/events;
// the shape is in API.md), and the query parameter both routes take.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/radix_tree_view.h"
#include "server/api_error.h"
#include "tokenizer/text_codec.h"

namespace radixlm::server {

inline constexpr int32_t kDefaultTreeNodes = 500;
inline constexpr int32_t kMaxTreeNodes = 20000;

// max_nodes from a query string ("max_nodes=N&..."): default kDefaultTreeNodes; an integer in
// [1, kMaxTreeNodes], else a 400 ApiError naming the parameter. Other parameters are ignored.
bool ParseMaxNodes(const std::string& query, int32_t* max_nodes, ApiError* error);

// The whole snapshot. Snippets are decoded with `codec` (special tokens kept).
nlohmann::json RadixTreeJson(const RadixTreeSnapshot& snap, const TokenTextCodec& codec);

// Only the O(1) counters (pool, hit rate, sizes, eviction totals): the "stats" events.
nlohmann::json RadixTreeCountersJson(const RadixTreeSnapshot& snap);

}  // namespace radixlm::server
