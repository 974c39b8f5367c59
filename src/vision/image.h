// Images decoded from the bytes a client sends: PNG (libpng), JPEG (libjpeg-turbo), WebP
// (libwebp) and GIF (giflib, the first frame), the format sniffed from the magic bytes.
//
// The output is 8-bit RGB, row-major, as llama.cpp's mtmd helper hands images to its
// projectors (stb_image asked for 3 channels): grey is replicated to R, G and B; a palette is
// looked up; alpha (a PNG's or WebP's alpha channel, a PNG tRNS chunk, a GIF's transparent
// index) is dropped without compositing, so a transparent pixel keeps its stored colour (a GIF's
// transparent pixels, which store none, are black, as stb_image leaves them); 16-bit PNG samples
// keep their high byte. No colour management (gAMA, ICC, EXIF orientation are ignored, as
// stb_image ignores them). A GIF's canvas is its logical screen: pixels the first frame does
// not draw are the background colour when the screen names one other than index 0, else black
// (stb_image's rule). CMYK and YCCK JPEGs (Adobe) convert as stb_image does:
// R = C * K / 255 on the stored (inverted) values.
//
// Every failure is an InvalidArgument naming the problem: empty or unrecognised bytes, a
// truncated or corrupt file, dimensions or a pixel count over DecodeLimits (checked from the
// header, before the pixels are allocated). The C libraries' error paths (libpng's and
// libjpeg's longjmp) never cross a C++ object's lifetime.
//
// Thread-safety: DecodeImage is reentrant (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::vision {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb = {};  // [height, width, 3], row-major
};

struct DecodeLimits {
  size_t max_bytes = size_t{32} << 20;  // the encoded file
  int max_width = 8192;
  int max_height = 8192;
  int64_t max_pixels = int64_t{32} << 20;  // width * height (33.5 M: 96 MiB of RGB)
};

enum class ImageFormat { kPng, kJpeg, kWebp, kGif };

// "png", "jpeg", "webp", "gif".
std::string_view ImageFormatName(ImageFormat format);

// The format the magic bytes say, or nullopt (too short or none of the four).
std::optional<ImageFormat> SniffImageFormat(std::span<const uint8_t> bytes);

StatusOr<Image> DecodeImage(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

}  // namespace radixlm::vision
