// The per-format decoders behind DecodeImage (image.h). Each takes the whole encoded file and
// the limits, checks the header's dimensions with CheckImageSize before allocating pixels, and
// returns 8-bit RGB with the conversions image.h describes. Internal to src/vision.
#pragma once

#include <span>

#include "vision/image.h"

namespace radixlm::vision::internal {

// InvalidArgument naming the format and the limit when width x height is empty or over
// `limits`.
Status CheckImageSize(std::string_view format, int64_t width, int64_t height,
                      const DecodeLimits& limits);

StatusOr<Image> DecodePng(std::span<const uint8_t> bytes, const DecodeLimits& limits);
StatusOr<Image> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
StatusOr<Image> DecodeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
StatusOr<Image> DecodeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits);

}  // namespace radixlm::vision::internal
