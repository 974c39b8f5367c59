// The radix tree for observers (read-only; behind the API key like every data route):
//   GET /radix_tree?max_nodes=N         one JSON snapshot (radix_tree_json.h), N ≤ 20000
//   GET /radix_tree/events?max_nodes=N  SSE: "tree" / "stats" events at a bounded rate
//                                       (radix_tree_feed.h)
#pragma once

#include "server/radix_tree_feed.h"
#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddRadixTreeRoutes(const ServerContext& context, RadixTreeFeed* feed, Router* router);

}  // namespace radixlm::server
