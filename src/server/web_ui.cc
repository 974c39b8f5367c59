#include "server/web_ui.h"

#include <string>

#include "server/web_assets.h"

namespace radixlm::server {

void AddWebUiRoutes(Router* router) {
  for (const WebAsset& asset : WebAssets()) {
    HttpResponse response;
    response.content_type = asset.content_type;
    response.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
    response.headers.emplace_back("Cache-Control", "no-cache");
    auto handler = [response](const HttpRequest&) { return HandlerResult::Respond(response); };
    const std::string path = asset.path;
    router->Add("GET", path, handler, /*open=*/true);
    if (path == "/index.html") router->Add("GET", "/", handler, /*open=*/true);
  }
}

}  // namespace radixlm::server
