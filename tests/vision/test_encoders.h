// Encoders for the decode tests, through the same Debian libraries the decoders use (libpng's
// simplified writer, libjpeg-turbo, libwebp, giflib), so every test image is made in the test.
#pragma once

#include <cstdint>
#include <vector>

#include "vision/image.h"

namespace radixlm::vision::testing {

// PNG of `channels` 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA) samples per pixel of
// `bit_depth` 8, or 16 (each sample two bytes, big-endian, as PNG stores them).
std::vector<uint8_t> EncodePng(const std::vector<uint8_t>& pixels, int width, int height,
                               int channels, bool interlaced = false, int bit_depth = 8);
// Palette PNG: `indices` [height, width] into `palette` (RGB triples).
std::vector<uint8_t> EncodePalettePng(const std::vector<uint8_t>& indices, int width, int height,
                                      const std::vector<uint8_t>& palette);
// JPEG of 1 (grey) or 3 (RGB) channels.
std::vector<uint8_t> EncodeJpeg(const std::vector<uint8_t>& pixels, int width, int height,
                                int channels, int quality, bool progressive = false);
// Lossless WebP of RGB (3) or RGBA (4) pixels.
std::vector<uint8_t> EncodeWebpLossless(const std::vector<uint8_t>& pixels, int width, int height,
                                        int channels);

struct GifFrame {
  int left = 0, top = 0, width = 0, height = 0;
  std::vector<uint8_t> indices = {};  // [height, width]
  int transparent = -1;               // index, or -1
  bool interlaced = false;
};
// A GIF89a with a global palette (RGB triples, a power of two entries), the screen size and
// background index, and the frames in order.
std::vector<uint8_t> EncodeGif(int screen_w, int screen_h, int background,
                               const std::vector<uint8_t>& palette,
                               const std::vector<GifFrame>& frames);

}  // namespace radixlm::vision::testing
