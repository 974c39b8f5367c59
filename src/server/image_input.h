// Image references as clients send them, read into the image file's bytes:
//   "data:image/png;base64,...."   a data URL (OpenAI's image_url; any image type)
//   "http(s)://host:port/path"     fetched (size and time limited, redirects followed)
//   "file:///abs/path", "a/b.png"  read only under --allowed-local-media-path (a path: any
//                                  string ending .png, .jpg, .jpeg, .webp or .gif, as SGLang)
//   "iVBORw0KGgo...", "/9j/4AAQ..." raw base64 (SGLang's image_data), anything else
// Every failure is InvalidArgument naming the problem (the route answers 400). Whether the
// bytes are an image is the decoder's question (engine/image_encoder.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/server_config.h"
#include "util/status.h"

namespace radixlm::server {

struct ImageInputLimits {
  std::string allowed_local_media_path;  // "": no local files
  int64_t max_bytes = 20 << 20;
  double fetch_timeout_s = 10;
};

// The server's flags as limits.
inline ImageInputLimits ImageLimits(const ServerConfig& config) {
  return {.allowed_local_media_path = config.allowed_local_media_path,
          .max_bytes = config.max_image_bytes,
          .fetch_timeout_s = config.image_fetch_timeout_s};
}

// InvalidArgument when the engine takes no images (no --mmproj): checked before any image is
// read or fetched.
Status CheckTakesImages(bool engine_takes_images);

StatusOr<std::vector<uint8_t>> ReadImageReference(const std::string& ref,
                                                  const ImageInputLimits& limits);

// Standard base64 (padding optional; whitespace skipped); InvalidArgument on other bytes.
StatusOr<std::vector<uint8_t>> DecodeBase64(std::string_view text);

}  // namespace radixlm::server
