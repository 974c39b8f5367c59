#include "vision/image.h"

#include <cstring>
#include <string>

#include "vision/image_decoders.h"

namespace radixlm::vision {

std::string_view ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kGif:
      return "gif";
  }
  return "unknown";
}

std::optional<ImageFormat> SniffImageFormat(std::span<const uint8_t> bytes) {
  auto starts = [&](size_t at, std::string_view magic) {
    return bytes.size() >= at + magic.size() &&
           std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
  };
  if (starts(0, "\x89PNG\r\n\x1a\n")) return ImageFormat::kPng;
  if (starts(0, "\xff\xd8\xff")) return ImageFormat::kJpeg;
  if (starts(0, "RIFF") && starts(8, "WEBP")) return ImageFormat::kWebp;
  if (starts(0, "GIF87a") || starts(0, "GIF89a")) return ImageFormat::kGif;
  return std::nullopt;
}

namespace internal {

Status CheckImageSize(std::string_view format, int64_t width, int64_t height,
                      const DecodeLimits& limits) {
  const std::string what = std::string(format) + " image";
  const std::string dims = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) return InvalidArgument(what + " has no pixels (" + dims + ")");
  if (width > limits.max_width) {
    return InvalidArgument(what + " is " + dims + ": wider than the limit of " +
                           std::to_string(limits.max_width) + " pixels");
  }
  if (height > limits.max_height) {
    return InvalidArgument(what + " is " + dims + ": taller than the limit of " +
                           std::to_string(limits.max_height) + " pixels");
  }
  if (width * height > limits.max_pixels) {
    return InvalidArgument(what + " is " + dims + ": more pixels than the limit of " +
                           std::to_string(limits.max_pixels));
  }
  return Status::Ok();
}

}  // namespace internal

StatusOr<Image> DecodeImage(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.empty()) return InvalidArgument("the image is empty (0 bytes)");
  if (bytes.size() > limits.max_bytes) {
    return InvalidArgument("the image is " + std::to_string(bytes.size()) +
                           " bytes, over the limit of " + std::to_string(limits.max_bytes));
  }
  const std::optional<ImageFormat> format = SniffImageFormat(bytes);
  if (!format) {
    return InvalidArgument(
        "unsupported image format: the bytes are not PNG, JPEG, WebP or GIF (by their magic "
        "bytes)");
  }
  switch (*format) {
    case ImageFormat::kPng:
      return internal::DecodePng(bytes, limits);
    case ImageFormat::kJpeg:
      return internal::DecodeJpeg(bytes, limits);
    case ImageFormat::kWebp:
      return internal::DecodeWebp(bytes, limits);
    case ImageFormat::kGif:
      return internal::DecodeGif(bytes, limits);
  }
  return InvalidArgument("unsupported image format");
}

}  // namespace radixlm::vision
