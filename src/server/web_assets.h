// The web page's files (web/ in the source tree), compiled into the binary by
// cmake/embed_files.cmake, so the server needs nothing on disk and nothing from the network.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace radixlm::server {

struct WebAsset {
  const char* path;          // "/index.html", "/app.js", ...
  const char* content_type;  // from the extension
  const unsigned char* data;
  size_t size;
};

std::span<const WebAsset> WebAssets();  // defined in the generated web_assets.cc

}  // namespace radixlm::server
