#include "server/radix_tree_api.h"

#include "server/radix_tree_json.h"

namespace radixlm::server {

void AddRadixTreeRoutes(const ServerContext& context, RadixTreeFeed* feed, Router* router) {
  const ServerContext ctx = context;
  router->Add("GET", "/radix_tree", [ctx](const HttpRequest& request) {
    int32_t max_nodes = 0;
    ApiError error;
    if (!ParseMaxNodes(request.query, &max_nodes, &error)) return HandlerResult::Error(error);
    return HandlerResult::Blocking([ctx, max_nodes] {
      StatusOr<RadixTreeSnapshot> snap =
          ctx.engine->GetRadixTree(RadixTreeQuery{.max_nodes = max_nodes});
      if (!snap.ok()) return ErrorResponse(ApiError{503, snap.status().message(), ""});
      nlohmann::json body = RadixTreeJson(*snap, ctx.engine->assets().codec());
      body["max_nodes"] = max_nodes;
      return HttpResponse::Json(200, body);
    });
  });
  router->Add("GET", "/radix_tree/events", [feed](const HttpRequest& request) {
    int32_t max_nodes = 0;
    ApiError error;
    if (!ParseMaxNodes(request.query, &max_nodes, &error)) return HandlerResult::Error(error);
    return HandlerResult::Generate(feed->Subscribe(max_nodes));
  });
}

}  // namespace radixlm::server
