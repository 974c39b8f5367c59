// The gemma4v projector on tiny GGUFs written by the test (tiny_gemma4v.h): Encode against the
// plain float reference (RMS-norm ViT with q / k / v norms, 2-D NeoX rope, position tables,
// clamps, pooling, standardisation, projection), dynamic resolution and token counts, thread
// invariance, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gguf/gguf_file.h"
#include "tiny_gemma4v.h"
#include "vision/image_resize.h"
#include "vision/projector.h"

namespace radixlm::vision::gemma4v_test {
namespace {

using testing::MakeTinyGemma4v;
using testing::ReferenceGemma4v;
using testing::TestPicture;
using testing::TinyGemma4vSpec;
using testing::TinyProjector;

// The projector reads the weights in place: `p` must outlive what this returns.
StatusOr<std::unique_ptr<Projector>> FromBytes(const TinyProjector& p, int threads = 2) {
  auto file = gguf::GgufFile::FromBuffer(p.gguf.data(), p.gguf.size());
  if (!file.ok()) return file.status();
  return Projector::FromGguf(std::move(*file), {.n_threads = threads});
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  double dot = 0, ng = 0, nw = 0, max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    dot += double(got[i]) * want[i];
    ng += double(got[i]) * got[i];
    nw += double(want[i]) * want[i];
    max_diff = std::max(max_diff, double(std::abs(got[i] - want[i])));
    max_abs = std::max(max_abs, double(std::abs(want[i])));
  }
  EXPECT_GT(dot / std::sqrt(ng * nw), 0.99999);
  EXPECT_LT(max_diff, tol * max_abs) << "max |diff| " << max_diff << " of max " << max_abs;
}

TEST(Gemma4vTest, MatchesTheFloatReference) {
  for (gguf::GgmlType type : {gguf::GgmlType::kF32, gguf::GgmlType::kF16}) {
    const TinyGemma4vSpec spec{.matrix_type = type};
    const TinyProjector p = MakeTinyGemma4v(spec);
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    EXPECT_EQ((*proj)->type(), "gemma4v");
    EXPECT_EQ((*proj)->n_embd(), 24);
    // Sizes that are multiples of patch * merge = 8 with 70 to 1120 tokens: not resized.
    for (const Image& img : {TestPicture(80, 64, 11), TestPicture(72, 72, 12)}) {
      EXPECT_EQ((*proj)->TokensFor(img), img.width / 8 * (img.height / 8));
      std::vector<float> out;
      ASSERT_TRUE((*proj)->Encode(img, &out).ok());
      ExpectClose(out, ReferenceGemma4v(p, spec, img), 5e-3);
    }
    const ImagePromptFormat fmt = (*proj)->prompt_format();
    EXPECT_EQ(fmt.begin, "<|image>");
    EXPECT_EQ(fmt.end, "<image|>");
    EXPECT_TRUE(fmt.non_causal_span);
  }
}

TEST(Gemma4vTest, OptionalPartsFollowTheFile) {
  // Each optional piece off in turn, gelu instead of gelu_quick, and llama.cpp's default pooling
  // of 3 (120 x 84: 10 x 7 tokens of 3 x 3 patches): each against the reference.
  const Image img = TestPicture(80, 72, 13);
  std::vector<std::vector<float>> outs;
  for (const TinyGemma4vSpec& spec :
       {TinyGemma4vSpec{}, TinyGemma4vSpec{.clamps = false}, TinyGemma4vSpec{.standardize = false},
        TinyGemma4vSpec{.out_scale = false}, TinyGemma4vSpec{.use_gelu = true}}) {
    const TinyProjector p = MakeTinyGemma4v(spec);
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok());
    ExpectClose(out, ReferenceGemma4v(p, spec, img), 5e-3);
    for (const std::vector<float>& other : outs) EXPECT_NE(out, other);
    outs.push_back(out);
  }
  const TinyGemma4vSpec spec{.merge = 0};
  const TinyProjector p = MakeTinyGemma4v(spec);
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const Image wide = TestPicture(120, 84, 14);
  EXPECT_EQ((*proj)->TokensFor(wide), 70);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(wide, &out).ok());
  ExpectClose(out, ReferenceGemma4v(p, spec, wide), 5e-3);
}

TEST(Gemma4vTest, ResizesToMultiplesOfThePooledPatch) {
  const TinyGemma4vSpec spec;
  const TinyProjector p = MakeTinyGemma4v(spec);
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  // 45 x 29 has fewer than 70 tokens of 8 x 8 pixels: scaled up (bicubic), sides multiples of 8.
  const Image img = TestPicture(45, 29, 15);
  const ImageSize size = SizePreservingRatio(45, 29, 8, 70 * 64, 1120 * 64);
  ASSERT_EQ(size.width % 8, 0);
  ASSERT_EQ(size.height % 8, 0);
  const int64_t tokens = (size.width / 8) * (size.height / 8);
  ASSERT_GE(tokens, 70);
  EXPECT_EQ((*proj)->TokensFor(img), tokens);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(img, &out).ok());
  ExpectClose(
      out,
      ReferenceGemma4v(p, spec, ResizeToFit(img, size.width, size.height, ResizeFilter::kBicubic)),
      5e-3);
}

TEST(Gemma4vTest, TokensForMatchesWhatEncodeProduces) {
  const TinyProjector tiny = MakeTinyGemma4v({.n_layers = 1, .positions = 320});
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const int sizes[][2] = {{1, 1}, {3, 50}, {50, 3}, {8, 8}, {17, 9}, {64, 64}, {100, 37}};
  for (const auto& [w, h] : sizes) {
    const Image img = TestPicture(w, h, static_cast<uint32_t>(w * 131 + h));
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok()) << w << "x" << h;
    const int64_t tokens = (*proj)->TokensFor(img);
    EXPECT_EQ(static_cast<int64_t>(out.size()), tokens * (*proj)->n_embd()) << w << "x" << h;
    EXPECT_GE(tokens, 70) << w << "x" << h;  // llama.cpp's limits for Gemma 4: 70 to 1120
  }
  for (const auto& [w, h] : {std::pair{4000, 3000}, std::pair{8000, 100}, std::pair{513, 7000}}) {
    const Image img{.width = w, .height = h, .rgb = {}};
    const int64_t tokens = (*proj)->TokensFor(img);
    EXPECT_LE(tokens, 1120) << w << "x" << h;
    EXPECT_GT(tokens, 800) << w << "x" << h;
  }
}

TEST(Gemma4vTest, EmbeddingsDoNotDependOnOtherImagesOrThreads) {
  const TinyProjector p = MakeTinyGemma4v({.matrix_type = gguf::GgmlType::kF16});
  auto one = FromBytes(p, 1);
  auto four = FromBytes(p, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  const Image a = TestPicture(80, 64, 21), b = TestPicture(64, 96, 22);
  std::vector<float> a1, b1, a2, a4;
  ASSERT_TRUE((*one)->Encode(a, &a1).ok());
  ASSERT_TRUE((*one)->Encode(b, &b1).ok());
  ASSERT_TRUE((*one)->Encode(a, &a2).ok());
  ASSERT_TRUE((*four)->Encode(a, &a4).ok());
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(a1, a4);
  EXPECT_NE(a1.size(), b1.size());
}

TEST(Gemma4vTest, CausalImageSpansForE2BAndE4BWidths) {
  // mtmd_decode_use_non_causal: text widths 1536 and 2560 attend causally over the image.
  for (int64_t width : {1536, 2560, 1152}) {
    const TinyProjector p = MakeTinyGemma4v({.n_layers = 1, .projection_dim = width});
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    EXPECT_EQ((*proj)->prompt_format().non_causal_span, width == 1152) << width;
  }
}

TEST(Gemma4vTest, ReadsTheVisionTowerOfAFileWithAudio) {
  // Gemma 4's converter writes one file for both towers, each type under its own key.
  const TinyGemma4vSpec spec{.audio_tower = true};
  const TinyProjector p = MakeTinyGemma4v(spec);
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  EXPECT_EQ((*proj)->type(), "gemma4v");
  const Image img = TestPicture(72, 72, 23);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(img, &out).ok());
  ExpectClose(out, ReferenceGemma4v(p, spec, img), 5e-3);
}

TEST(Gemma4vTest, RefusesAnImageWiderThanThePositionTables) {
  const TinyProjector tiny = MakeTinyGemma4v({.n_layers = 1});  // 48 positions a side
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok());
  const Image wide = TestPicture(400, 40, 24);  // kept at 400 x 40: 100 patches wide
  std::vector<float> out;
  const Status s = (*proj)->Encode(wide, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("position tables"), std::string::npos) << s.ToString();
}

Status LoadStatus(const TinyGemma4vSpec& spec) {
  const TinyProjector tiny = MakeTinyGemma4v(spec);
  auto p = FromBytes(tiny);
  return p.ok() ? Status::Ok() : p.status();
}

void ExpectRefused(const TinyGemma4vSpec& spec, StatusCode code, const std::string& names) {
  const Status s = LoadStatus(spec);
  ASSERT_FALSE(s.ok()) << names;
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.ToString();
}

TEST(Gemma4vTest, RefusesWhatItDoesNotBuild) {
  ExpectRefused({.projector_type = "gemma4uv"}, StatusCode::kUnimplemented, "'gemma4uv'");
  ExpectRefused({.omit_tensors = {"v.position_embd.weight"}}, StatusCode::kInvalidArgument,
                "v.position_embd.weight");
  ExpectRefused({.omit_tensors = {"mm.input_projection.weight"}}, StatusCode::kInvalidArgument,
                "mm.input_projection.weight");
  ExpectRefused({.omit_tensors = {"v.blk.1.ffn_down.weight"}}, StatusCode::kInvalidArgument,
                "v.blk.1.ffn_down.weight");
  ExpectRefused({.extra_tensors = {"v.blk.0.ls1.weight"}}, StatusCode::kUnimplemented,
                "v.blk.0.ls1.weight");
  ExpectRefused({.extra_tensors = {"v.blk.1.attn_qkv.weight"}}, StatusCode::kUnimplemented,
                "v.blk.1.attn_qkv.weight");
  ExpectRefused({.n_heads = 16}, StatusCode::kUnimplemented, "multiple of 4");  // head size 2
}

TEST(Gemma4vTest, RefusesABadImageBuffer) {
  const TinyProjector tiny = MakeTinyGemma4v({});
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok());
  std::vector<float> out;
  EXPECT_EQ((*proj)->Encode(Image{}, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*proj)->TokensFor(Image{}), 0);
  Image short_buffer = TestPicture(8, 8, 1);
  short_buffer.rgb.pop_back();
  EXPECT_EQ((*proj)->Encode(short_buffer, &out).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixlm::vision::gemma4v_test
