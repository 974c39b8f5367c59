// ResizePillow and ResizeToFit (llama.cpp's img_tool): properties any correct resampler has,
// and the fit-and-pad geometry. (Their exact values against llama.cpp's are in the golden test,
// whose image is not square.)
#include "vision/image_resize.h"

#include <gtest/gtest.h>

#include "tiny_projector.h"

namespace radixlm::vision {
namespace {

Image Uniform(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  Image img{.width = w, .height = h, .rgb = {}};
  img.rgb.resize(size_t(w) * h * 3);
  for (size_t i = 0; i < img.rgb.size(); i += 3) {
    img.rgb[i] = r;
    img.rgb[i + 1] = g;
    img.rgb[i + 2] = b;
  }
  return img;
}

TEST(ImageResizeTest, UniformImagesStayUniform) {
  for (ResizeFilter f : {ResizeFilter::kBilinear, ResizeFilter::kBicubic, ResizeFilter::kLanczos}) {
    const Image out = ResizePillow(Uniform(37, 11, 200, 17, 99), 16, 29, f);
    ASSERT_EQ(out.width, 16);
    ASSERT_EQ(out.height, 29);
    for (size_t i = 0; i < out.rgb.size(); i += 3) {
      ASSERT_EQ(out.rgb[i], 200);
      ASSERT_EQ(out.rgb[i + 1], 17);
      ASSERT_EQ(out.rgb[i + 2], 99);
    }
  }
}

TEST(ImageResizeTest, HalvingAveragesPairsBilinear) {
  // Bilinear 2:1 downscale: support 2 input pixels around each centre with weights 1/4, 3/4,
  // 3/4, 1/4 (Pillow's triangle widened by the scale).
  Image img{.width = 4, .height = 1, .rgb = {}};
  img.rgb = {0, 0, 0, 100, 100, 100, 200, 200, 200, 40, 40, 40};
  const Image out = ResizePillow(img, 2, 1, ResizeFilter::kBilinear);
  ASSERT_EQ(out.width, 2);
  // centre 1.0: pixels 0..2 at distances 0.5, 0.5, 1.5 (/2 -> weights .75 .75 .25), normalised.
  EXPECT_NEAR(out.rgb[0], (0 * 0.75 + 100 * 0.75 + 200 * 0.25) / 1.75, 1.0);
  EXPECT_NEAR(out.rgb[3], (100 * 0.25 + 200 * 0.75 + 40 * 0.75) / 1.75, 1.0);
}

TEST(ImageResizeTest, FitPadsTheShortSideCentred) {
  // 40x20 into 16x16: scale 0.4 -> 16x8, on black at y 4..11.
  const Image out = ResizeToFit(Uniform(40, 20, 255, 255, 255), 16, 16, ResizeFilter::kBilinear);
  ASSERT_EQ(out.width, 16);
  ASSERT_EQ(out.height, 16);
  for (int y = 0; y < 16; ++y) {
    const uint8_t want = (y >= 4 && y < 12) ? 255 : 0;
    for (int x = 0; x < 16; ++x) ASSERT_EQ(out.rgb[(y * 16 + x) * 3], want) << x << "," << y;
  }
  const Image same = testing::TestPicture(16, 16, 1);
  EXPECT_EQ(ResizeToFit(same, 16, 16, ResizeFilter::kBilinear).rgb, same.rgb);
}

}  // namespace
}  // namespace radixlm::vision
