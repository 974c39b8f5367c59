// The qwen2.5vl_merger projector on tiny GGUFs written by the test (tiny_qwen25vl.h): Encode
// against the plain float reference (window and full attention, 2-D rope, merger), dynamic
// resolution and token counts, batch and thread invariance, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gguf/gguf_file.h"
#include "tiny_qwen25vl.h"
#include "vision/image_resize.h"
#include "vision/projector.h"

namespace radixlm::vision::qwen25vl_test {
namespace {

using testing::MakeTinyQwen25Vl;
using testing::ReferenceQwen25Vl;
using testing::TestPicture;
using testing::TinyProjector;
using testing::TinyQwenSpec;

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

TEST(Qwen25VlTest, MatchesTheFloatReference) {
  for (gguf::GgmlType type : {gguf::GgmlType::kF32, gguf::GgmlType::kF16}) {
    const TinyQwenSpec spec{.matrix_type = type};
    const TinyProjector p = MakeTinyQwen25Vl(spec);
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    EXPECT_EQ((*proj)->type(), "qwen2.5vl_merger");
    EXPECT_EQ((*proj)->n_embd(), 24);
    // 56 x 40: 7 x 5 groups, windows of 2 x 2 groups (the last column and row narrower).
    for (const Image& img : {TestPicture(56, 40, 11), TestPicture(40, 24, 12)}) {
      EXPECT_EQ((*proj)->TokensFor(img), img.width / 8 * (img.height / 8));
      std::vector<float> out;
      ASSERT_TRUE((*proj)->Encode(img, &out).ok());
      ExpectClose(out, ReferenceQwen25Vl(p, spec, img), 5e-3);
    }
    const ImagePromptFormat fmt = (*proj)->prompt_format();
    EXPECT_EQ(fmt.begin, "<|vision_start|>");
    EXPECT_EQ(fmt.end, "<|vision_end|>");
    EXPECT_FALSE(fmt.non_causal_span);
  }
}

TEST(Qwen25VlTest, WindowsChangeTheWindowedLayersOnly) {
  // Every layer full (n_wa_pattern 0), windows of 16 and of llama.cpp's default 112 pixels (one
  // window for this image, so the same as full attention): each against the reference.
  const Image img = TestPicture(48, 32, 13);
  std::vector<std::vector<float>> outs;
  for (const TinyQwenSpec& spec :
       {TinyQwenSpec{.n_wa_pattern = 0}, TinyQwenSpec{}, TinyQwenSpec{.window_size = 0}}) {
    const TinyProjector p = MakeTinyQwen25Vl(spec);
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok());
    ExpectClose(out, ReferenceQwen25Vl(p, spec, img), 5e-3);
    outs.push_back(out);
  }
  EXPECT_NE(outs[0], outs[1]);
  EXPECT_EQ(outs[0], outs[2]);
}

TEST(Qwen25VlTest, ResizesToMultiplesOfTheMergedPatch) {
  const TinyQwenSpec spec;
  const TinyProjector p = MakeTinyQwen25Vl(spec);
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  // 45 x 29 rounds to 48 x 32 (multiples of 2 * patch = 8): bicubic resize, centred.
  const Image img = TestPicture(45, 29, 14);
  const ImageSize size = SizePreservingRatio(45, 29, 8, 8 * 64, 4096 * 64);
  ASSERT_EQ(size.width, 48);
  ASSERT_EQ(size.height, 32);
  EXPECT_EQ((*proj)->TokensFor(img), 24);
  // The merged grid, row by row: 32 / 8 rows of 48 / 8 columns (mtmd's nx, ny).
  EXPECT_EQ((*proj)->GridFor(img).rows, 4);
  EXPECT_EQ((*proj)->GridFor(img).cols, 6);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(img, &out).ok());
  ExpectClose(out, ReferenceQwen25Vl(p, spec, ResizeToFit(img, 48, 32, ResizeFilter::kBicubic)),
              5e-3);
}

TEST(Qwen25VlTest, TokensForMatchesWhatEncodeProduces) {
  const TinyProjector tiny = MakeTinyQwen25Vl({});  // the projector reads from its bytes
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const int sizes[][2] = {{1, 1}, {3, 50}, {50, 3}, {8, 8}, {17, 9}, {64, 64}, {100, 37}, {23, 90}};
  for (const auto& [w, h] : sizes) {
    const Image img = TestPicture(w, h, static_cast<uint32_t>(w * 131 + h));
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok()) << w << "x" << h;
    const int64_t tokens = (*proj)->TokensFor(img);
    EXPECT_EQ(static_cast<int64_t>(out.size()), tokens * (*proj)->n_embd()) << w << "x" << h;
    EXPECT_EQ((*proj)->GridFor(img).rows * (*proj)->GridFor(img).cols, tokens) << w << "x" << h;
    // llama.cpp's limits for Qwen-VL: 8 to 4096 tokens.
    EXPECT_GE(tokens, 8) << w << "x" << h;
  }
  // Large images are scaled down to at most 4096 tokens (not encoded here).
  for (const auto& [w, h] : {std::pair{4000, 3000}, std::pair{8000, 100}, std::pair{513, 7000}}) {
    const Image img{.width = w, .height = h, .rgb = {}};
    const int64_t tokens = (*proj)->TokensFor(img);
    EXPECT_LE(tokens, 4096) << w << "x" << h;
    EXPECT_GT(tokens, 3000) << w << "x" << h;
  }
}

TEST(Qwen25VlTest, EmbeddingsDoNotDependOnOtherImagesOrThreads) {
  const TinyProjector p = MakeTinyQwen25Vl({.matrix_type = gguf::GgmlType::kF16});
  auto one = FromBytes(p, 1);
  auto four = FromBytes(p, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  const Image a = TestPicture(56, 40, 21), b = TestPicture(30, 70, 22);
  std::vector<float> a1, b1, a2, a4;
  ASSERT_TRUE((*one)->Encode(a, &a1).ok());
  ASSERT_TRUE((*one)->Encode(b, &b1).ok());
  ASSERT_TRUE((*one)->Encode(a, &a2).ok());
  ASSERT_TRUE((*four)->Encode(a, &a4).ok());
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(a1, a4);
  EXPECT_NE(a1.size(), b1.size());
}

Status LoadStatus(const TinyQwenSpec& spec) {
  auto p = FromBytes(MakeTinyQwen25Vl(spec));
  return p.ok() ? Status::Ok() : p.status();
}

void ExpectRefused(const TinyQwenSpec& spec, StatusCode code, const std::string& names) {
  const Status s = LoadStatus(spec);
  ASSERT_FALSE(s.ok()) << names;
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.ToString();
}

TEST(Qwen25VlTest, RefusesWhatItDoesNotBuild) {
  ExpectRefused({.projector_type = "qwen2vl_merger"}, StatusCode::kUnimplemented,
                "'qwen2vl_merger'");
  // (a qwen3vl_merger file has a patch bias and learned positions)
  ExpectRefused({.projector_type = "qwen3vl_merger"}, StatusCode::kInvalidArgument,
                "v.patch_embd.bias");
  ExpectRefused({.n_wa_pattern = -1}, StatusCode::kInvalidArgument, "clip.vision.n_wa_pattern");
  ExpectRefused({.spatial_merge = 3}, StatusCode::kUnimplemented, "spatial_merge_size");
  ExpectRefused({.omit_tensors = {"v.patch_embd.weight.1"}}, StatusCode::kInvalidArgument,
                "v.patch_embd.weight.1");
  ExpectRefused({.omit_tensors = {"v.blk.1.ffn_up.weight"}}, StatusCode::kInvalidArgument,
                "v.blk.1.ffn_up.weight");
  ExpectRefused({.omit_tensors = {"mm.2.weight"}}, StatusCode::kInvalidArgument, "mm.2.weight");
  ExpectRefused({.extra_tensors = {"v.patch_embd.bias"}}, StatusCode::kUnimplemented,
                "v.patch_embd.bias");
  ExpectRefused({.extra_tensors = {"v.blk.0.attn_q_norm.weight"}}, StatusCode::kUnimplemented,
                "v.blk.0.attn_q_norm.weight");
  ExpectRefused({.extra_tensors = {"v.deepstack.1.fc1.weight"}}, StatusCode::kUnimplemented,
                "deepstack");
  ExpectRefused({.window_size = 4}, StatusCode::kInvalidArgument, "window");
  ExpectRefused({.n_heads = 16}, StatusCode::kUnimplemented, "multiple of 4");  // head size 2
}

TEST(Qwen25VlTest, RefusesABadImageBuffer) {
  const TinyProjector tiny = MakeTinyQwen25Vl({});
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
}  // namespace radixlm::vision::qwen25vl_test
