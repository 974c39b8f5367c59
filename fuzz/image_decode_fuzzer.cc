// Image decoding: vision::DecodeImage on arbitrary bytes (the bytes of an image_url / image_data
// a client sends), under the limits the server decodes with (DecodeLimits' defaults, which the
// engine's projector encoder uses) and under small ones.
//
// Rejected bytes are fine (a Status); a decoded image must keep DecodeImage's contract: a
// format its magic bytes name, dimensions inside the limits, and exactly width * height * 3
// bytes of RGB. The input is copied to an exact-size allocation so any read past its end is an
// AddressSanitizer report.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "vision/image.h"

namespace {

using radixlm::vision::DecodeImage;
using radixlm::vision::DecodeLimits;
using radixlm::vision::Image;

void CheckDecoded(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  auto image = DecodeImage(bytes, limits);
  if (!image.ok()) return;
  const Image& img = *image;
  if (!radixlm::vision::SniffImageFormat(bytes).has_value()) std::abort();
  if (img.width <= 0 || img.height <= 0 || img.width > limits.max_width ||
      img.height > limits.max_height || int64_t{img.width} * img.height > limits.max_pixels) {
    std::abort();  // the header check lets nothing over the limits through
  }
  if (img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  const std::span<const uint8_t> bytes(copy.get(), size);
  CheckDecoded(bytes, DecodeLimits{});
  // Small limits: a header over them must be refused before any pixel is decoded.
  CheckDecoded(
      bytes, DecodeLimits{.max_bytes = 2048, .max_width = 12, .max_height = 12, .max_pixels = 100});
  return 0;
}
