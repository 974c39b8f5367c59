// The web page: GET / (index.html) and GET /<asset> for each file compiled in from web/
// (web_assets.h). Static and open: the page holds no data, and asks for the API key itself
// before it calls the data routes, which check it. Not added with --disable-web-ui (then /
// is the router's 404 JSON).
#pragma once

#include "server/router.h"

namespace radixlm::server {

void AddWebUiRoutes(Router* router);

}  // namespace radixlm::server
