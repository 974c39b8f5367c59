// Writes fuzz/corpus/fuzz_image_decode/: tiny valid images of every format and variant the
// decoders handle, through the tests' encoders (tests/vision/test_encoders.h: the same Debian
// libraries the decoders use). Not part of the build; from the repository root:
//
//   g++ -std=c++20 -O1 -I src -I tests/vision fuzz/corpus/make_image_seeds.cc \
//     tests/vision/test_encoders.cc -o /tmp/make_image_seeds -lpng -ljpeg -lwebp -lgif
//   /tmp/make_image_seeds fuzz/corpus/fuzz_image_decode
#include <webp/encode.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_encoders.h"

namespace t = radixlm::vision::testing;

namespace {

std::vector<uint8_t> Pixels(int width, int height, int channels) {
  std::vector<uint8_t> p(static_cast<size_t>(width) * height * channels);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>((i * 37 + i / 5) & 0xff);
  return p;
}

std::vector<uint8_t> WebpLossy(int width, int height) {
  const std::vector<uint8_t> rgb = Pixels(width, height, 3);
  uint8_t* mem = nullptr;
  const size_t n = WebPEncodeRGB(rgb.data(), width, height, width * 3, 50, &mem);
  std::vector<uint8_t> out(mem, mem + n);
  WebPFree(mem);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto write = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  };
  write("rgb.png", t::EncodePng(Pixels(5, 4, 3), 5, 4, 3));
  write("rgba_interlaced.png", t::EncodePng(Pixels(9, 7, 4), 9, 7, 4, /*interlaced=*/true));
  write("grey_alpha.png", t::EncodePng(Pixels(4, 3, 2), 4, 3, 2));
  write("grey16.png", t::EncodePng(Pixels(3, 3, 2), 3, 3, 1, false, /*bit_depth=*/16));
  std::vector<uint8_t> indices(6 * 5);
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i % 4;
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 250, 250, 250};
  write("palette.png", t::EncodePalettePng(indices, 6, 5, palette));
  write("rgb.jpg", t::EncodeJpeg(Pixels(8, 8, 3), 8, 8, 3, 75));
  write("progressive.jpg", t::EncodeJpeg(Pixels(17, 9, 3), 17, 9, 3, 60, /*progressive=*/true));
  write("grey.jpg", t::EncodeJpeg(Pixels(8, 8, 1), 8, 8, 1, 90));
  write("lossless_rgba.webp", t::EncodeWebpLossless(Pixels(6, 5, 4), 6, 5, 4));
  write("lossy.webp", WebpLossy(8, 8));
  write("frames.gif",
        t::EncodeGif(
            8, 6, 2, palette,
            {{.left = 1, .top = 1, .width = 6, .height = 5, .indices = indices, .transparent = 3},
             {.left = 0, .top = 0, .width = 6, .height = 5, .indices = indices}}));
  write("interlaced.gif",
        t::EncodeGif(6, 5, 0, palette,
                     {{.width = 6, .height = 5, .indices = indices, .interlaced = true}}));
  return 0;
}
