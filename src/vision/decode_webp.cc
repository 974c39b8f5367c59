// WebP (lossy, lossless, with or without alpha) through libwebp's simple decoding API, straight
// into RGB (alpha dropped, not composited). Animated WebP is refused: its frames need
// libwebpdemux's compositing, and llama.cpp decodes no WebP at all without its ffmpeg build.
#include <webp/decode.h>

#include <string>

#include "vision/image_decoders.h"

namespace radixlm::vision::internal {

StatusOr<Image> DecodeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (status == VP8_STATUS_NOT_ENOUGH_DATA) {
    return InvalidArgument("webp image: the file is truncated");
  }
  if (status != VP8_STATUS_OK) {
    return InvalidArgument("webp image: the header is corrupt (libwebp status " +
                           std::to_string(static_cast<int>(status)) + ")");
  }
  if (features.has_animation) return InvalidArgument("webp image: animated WebP is not supported");
  RADIXLM_RETURN_IF_ERROR(CheckImageSize("webp", features.width, features.height, limits));
  Image image;
  image.width = features.width;
  image.height = features.height;
  image.rgb.resize(size_t(features.width) * features.height * 3);
  if (WebPDecodeRGBInto(bytes.data(), bytes.size(), image.rgb.data(), image.rgb.size(),
                        features.width * 3) == nullptr) {
    return InvalidArgument("webp image: the file is truncated or corrupt");
  }
  return image;
}

}  // namespace radixlm::vision::internal
