// DecodeImage on images encoded in the test by the same libraries: each format's colour
// conversions (image.h), truncated and corrupt files, and the limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "test_encoders.h"
#include "tiny_projector.h"
#include "vision/image.h"

namespace radixlm::vision {
namespace {

using testing::EncodeGif;
using testing::EncodeJpeg;
using testing::EncodePalettePng;
using testing::EncodePng;
using testing::EncodeWebpLossless;
using testing::GifFrame;
using testing::TestPicture;

std::vector<uint8_t> WithAlpha(const Image& img, uint8_t alpha_seed) {
  std::vector<uint8_t> rgba;
  for (size_t i = 0; i < img.rgb.size(); i += 3) {
    rgba.insert(rgba.end(), {img.rgb[i], img.rgb[i + 1], img.rgb[i + 2],
                             static_cast<uint8_t>((i / 3 * 37 + alpha_seed) % 256)});
  }
  return rgba;
}

void ExpectInvalid(const StatusOr<Image>& r, const std::string& needle) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(ImageDecodeTest, SniffsFormatsByMagic) {
  const Image img = TestPicture(5, 4, 1);
  EXPECT_EQ(SniffImageFormat(EncodePng(img.rgb, 5, 4, 3)), ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat(EncodeJpeg(img.rgb, 5, 4, 3, 90)), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat(EncodeWebpLossless(img.rgb, 5, 4, 3)), ImageFormat::kWebp);
  EXPECT_EQ(
      SniffImageFormat(EncodeGif(2, 2, 0, {0, 0, 0, 255, 255, 255},
                                 {GifFrame{.width = 2, .height = 2, .indices = {0, 1, 1, 0}}})),
      ImageFormat::kGif);
  const std::vector<uint8_t> bmp = {'B', 'M', 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(SniffImageFormat(bmp).has_value());
}

TEST(ImageDecodeTest, PngRgbRoundTripsExactly) {
  for (bool interlaced : {false, true}) {
    const Image img = TestPicture(37, 23, 2);
    auto r = DecodeImage(EncodePng(img.rgb, 37, 23, 3, interlaced));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->width, 37);
    EXPECT_EQ(r->height, 23);
    EXPECT_EQ(r->rgb, img.rgb) << "interlaced " << interlaced;
  }
}

TEST(ImageDecodeTest, PngAlphaIsDroppedNotComposited) {
  const Image img = TestPicture(16, 9, 3);
  auto r = DecodeImage(EncodePng(WithAlpha(img, 0), 16, 9, 4));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rgb, img.rgb);
}

TEST(ImageDecodeTest, Png16BitKeepsTheHighByte) {
  // Samples hi << 8 | lo (big-endian in the file); stb_image keeps hi, whatever lo is.
  const Image img = TestPicture(11, 6, 9);
  for (int channels : {3, 4}) {
    std::vector<uint8_t> wide;
    for (size_t i = 0; i < img.rgb.size(); i += 3) {
      for (int c = 0; c < channels; ++c) {
        const uint8_t hi = c < 3 ? img.rgb[i + c] : 7;
        wide.insert(wide.end(), {hi, static_cast<uint8_t>(255 - hi)});
      }
    }
    auto r = DecodeImage(EncodePng(wide, 11, 6, channels, false, 16));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->rgb, img.rgb) << channels << " channels";
  }
}

TEST(ImageDecodeTest, PngGreyIsReplicated) {
  std::vector<uint8_t> grey(12 * 7), grey_alpha;
  for (size_t i = 0; i < grey.size(); ++i) grey[i] = static_cast<uint8_t>(i * 3);
  for (uint8_t g : grey) grey_alpha.insert(grey_alpha.end(), {g, static_cast<uint8_t>(255 - g)});
  for (int channels : {1, 2}) {
    auto r = DecodeImage(EncodePng(channels == 1 ? grey : grey_alpha, 12, 7, channels));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->rgb.size(), grey.size() * 3);
    for (size_t i = 0; i < grey.size(); ++i) {
      EXPECT_EQ(r->rgb[3 * i], grey[i]);
      EXPECT_EQ(r->rgb[3 * i + 1], grey[i]);
      EXPECT_EQ(r->rgb[3 * i + 2], grey[i]);
    }
  }
}

TEST(ImageDecodeTest, PngPaletteIsLookedUp) {
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  std::vector<uint8_t> idx(9 * 5);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint8_t>(i % 4);
  auto r = DecodeImage(EncodePalettePng(idx, 9, 5, palette));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rgb.size(), idx.size() * 3);
  for (size_t i = 0; i < idx.size(); ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(r->rgb[3 * i + c], palette[idx[i] * 3 + c]);
  }
}

TEST(ImageDecodeTest, JpegDecodesCloseToTheSource) {
  for (bool progressive : {false, true}) {
    const Image img = TestPicture(64, 48, 4);
    auto r = DecodeImage(EncodeJpeg(img.rgb, 64, 48, 3, 95, progressive));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->width, 64);
    ASSERT_EQ(r->height, 48);
    double err = 0;
    for (size_t i = 0; i < img.rgb.size(); ++i) err += std::abs(int(r->rgb[i]) - int(img.rgb[i]));
    EXPECT_LT(err / img.rgb.size(), 6.0) << "progressive " << progressive;
  }
}

TEST(ImageDecodeTest, JpegGreyIsReplicated) {
  std::vector<uint8_t> grey(32 * 16);
  for (size_t i = 0; i < grey.size(); ++i) grey[i] = static_cast<uint8_t>(i % 32 * 8);
  auto r = DecodeImage(EncodeJpeg(grey, 32, 16, 1, 90));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (size_t i = 0; i < grey.size(); ++i) {
    EXPECT_EQ(r->rgb[3 * i], r->rgb[3 * i + 1]);
    EXPECT_EQ(r->rgb[3 * i], r->rgb[3 * i + 2]);
  }
}

TEST(ImageDecodeTest, WebpLosslessRoundTripsAndDropsAlpha) {
  const Image img = TestPicture(21, 13, 5);
  auto rgb = DecodeImage(EncodeWebpLossless(img.rgb, 21, 13, 3));
  ASSERT_TRUE(rgb.ok()) << rgb.status().ToString();
  EXPECT_EQ(rgb->rgb, img.rgb);
  // Alpha 255 everywhere except nowhere zero: WebP's lossless encoder may rewrite the colour of
  // fully transparent pixels, so none is fully transparent here.
  std::vector<uint8_t> rgba = WithAlpha(img, 1);
  for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = std::max<uint8_t>(rgba[i], 1);
  auto with_alpha = DecodeImage(EncodeWebpLossless(rgba, 21, 13, 4));
  ASSERT_TRUE(with_alpha.ok()) << with_alpha.status().ToString();
  EXPECT_EQ(with_alpha->rgb, img.rgb);
}

TEST(ImageDecodeTest, GifFirstFrameOnItsScreen) {
  // Palette: 0 black, 1 red, 2 green, 3 blue. Screen 6x4, background 3 (blue); the first frame
  // covers x 1..4, y 1..2 with index 2 (green) transparent; a second frame (all red) is ignored.
  const std::vector<uint8_t> palette = {0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255};
  for (bool interlaced : {false, true}) {
    GifFrame first{.left = 1,
                   .top = 1,
                   .width = 4,
                   .height = 2,
                   .indices = {1, 2, 1, 3, 3, 1, 2, 1},
                   .transparent = 2,
                   .interlaced = interlaced};
    GifFrame second{.width = 6, .height = 4, .indices = std::vector<uint8_t>(24, 1)};
    auto r = DecodeImage(EncodeGif(6, 4, 3, palette, {first, second}));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->width, 6);
    ASSERT_EQ(r->height, 4);
    auto px = [&](int x, int y) {
      const uint8_t* p = r->rgb.data() + (y * 6 + x) * 3;
      return std::vector<int>{p[0], p[1], p[2]};
    };
    const std::vector<int> blue = {0, 0, 255}, red = {255, 0, 0}, black = {0, 0, 0};
    EXPECT_EQ(px(0, 0), blue);  // outside the frame: the background colour
    EXPECT_EQ(px(5, 3), blue);
    EXPECT_EQ(px(1, 1), red);
    EXPECT_EQ(px(2, 1), black);  // transparent: black, as stb_image leaves it
    EXPECT_EQ(px(4, 1), blue);   // index 3 drawn
    EXPECT_EQ(px(3, 2), black);
    EXPECT_EQ(px(4, 2), red);
  }
}

TEST(ImageDecodeTest, TruncatedFilesOfEveryFormatAreRefused) {
  const Image img = TestPicture(40, 30, 6);
  std::vector<uint8_t> gif_idx(40 * 30);
  for (size_t i = 0; i < gif_idx.size(); ++i) gif_idx[i] = static_cast<uint8_t>(i * 7 % 251);
  std::vector<uint8_t> palette(256 * 3);
  for (size_t i = 0; i < palette.size(); ++i) palette[i] = static_cast<uint8_t>(i * 13);
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"png", EncodePng(img.rgb, 40, 30, 3)},
      {"jpeg", EncodeJpeg(img.rgb, 40, 30, 3, 90)},
      {"webp", EncodeWebpLossless(img.rgb, 40, 30, 3)},
      {"gif",
       EncodeGif(40, 30, 0, palette, {GifFrame{.width = 40, .height = 30, .indices = gif_idx}})},
  };
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(DecodeImage(bytes).ok()) << name;
    for (double frac : {0.1, 0.5, 0.9}) {
      const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size_t(bytes.size() * frac));
      auto r = DecodeImage(cut);
      EXPECT_FALSE(r.ok()) << name << " cut at " << frac;
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
        EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
      }
    }
  }
  // PNG and JPEG are refused even when only their last bytes are missing.
  for (int i : {0, 1}) {
    std::vector<uint8_t> cut = files[i].second;
    cut.resize(cut.size() - 2);
    EXPECT_FALSE(DecodeImage(cut).ok()) << files[i].first;
  }
}

TEST(ImageDecodeTest, CorruptBytesNeverCrash) {
  const Image img = TestPicture(24, 24, 7);
  const std::vector<std::vector<uint8_t>> files = {
      EncodePng(img.rgb, 24, 24, 3), EncodeJpeg(img.rgb, 24, 24, 3, 80),
      EncodeWebpLossless(img.rgb, 24, 24, 3),
      EncodeGif(24, 24, 0, {0, 0, 0, 255, 255, 255},
                {GifFrame{.width = 24, .height = 24, .indices = std::vector<uint8_t>(576, 1)}})};
  std::mt19937 rng(3);
  int refused = 0;
  for (const auto& good : files) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<uint8_t> bad = good;
      for (int k = 0; k < 4; ++k) {
        const size_t at = 8 + rng() % (bad.size() - 8);  // keep the magic
        bad[at] = static_cast<uint8_t>(rng());
      }
      auto r = DecodeImage(bad);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
        ++refused;
      } else {
        EXPECT_EQ(r->rgb.size(), size_t(r->width) * r->height * 3);
      }
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(ImageDecodeTest, LimitsAndBadInputAreNamed) {
  const Image img = TestPicture(40, 30, 8);
  const std::vector<uint8_t> png = EncodePng(img.rgb, 40, 30, 3);
  ExpectInvalid(DecodeImage(std::vector<uint8_t>{}), "empty");
  ExpectInvalid(DecodeImage(std::vector<uint8_t>{'B', 'M', 1, 2, 3, 4, 5, 6, 7, 8}),
                "unsupported image format");
  ExpectInvalid(DecodeImage(png, {.max_bytes = 100}), "over the limit");
  ExpectInvalid(DecodeImage(png, {.max_width = 39}), "wider than the limit");
  ExpectInvalid(DecodeImage(png, {.max_height = 29}), "taller than the limit");
  ExpectInvalid(DecodeImage(png, {.max_pixels = 40 * 30 - 1}), "more pixels than the limit");
  ExpectInvalid(DecodeImage(EncodeJpeg(img.rgb, 40, 30, 3, 90), {.max_width = 20}),
                "jpeg image is 40x30");
  ExpectInvalid(DecodeImage(EncodeWebpLossless(img.rgb, 40, 30, 3), {.max_height = 20}),
                "webp image is 40x30");
  ExpectInvalid(
      DecodeImage(
          EncodeGif(40, 30, 0, {0, 0, 0, 9, 9, 9},
                    {GifFrame{.width = 4, .height = 4, .indices = std::vector<uint8_t>(16)}}),
          {.max_pixels = 100}),
      "gif image is 40x30");
  EXPECT_TRUE(
      DecodeImage(png,
                  {.max_bytes = png.size(), .max_width = 40, .max_height = 30, .max_pixels = 1200})
          .ok());
}

}  // namespace
}  // namespace radixlm::vision
