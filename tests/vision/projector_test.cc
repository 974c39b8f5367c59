// Projector::Load on tiny gemma3 projector GGUFs written by the test (tiny_projector.h): Encode
// against the plain float reference, batch and thread invariance, and the refusals.
#include "vision/projector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tiny_projector.h"
#include "vision/image_resize.h"

namespace radixlm::vision {
namespace {

using testing::MakeTinyProjector;
using testing::ReferenceGemma3;
using testing::TestPicture;
using testing::TinyProjector;
using testing::TinyProjectorSpec;

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

TEST(ProjectorTest, Gemma3MatchesTheFloatReference) {
  for (gguf::GgmlType type : {gguf::GgmlType::kF32, gguf::GgmlType::kF16}) {
    const TinyProjector p = MakeTinyProjector({.matrix_type = type});
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    EXPECT_EQ((*proj)->type(), "gemma3");
    EXPECT_EQ((*proj)->n_embd(), 24);
    const Image img = TestPicture(32, 32, 11);
    EXPECT_EQ((*proj)->TokensFor(img), 16);    // (32 / 4 / 2)^2
    EXPECT_EQ((*proj)->GridFor(img).cols, 0);  // a plain sequence (no M-RoPE grid)
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok());
    ExpectClose(out, ReferenceGemma3(p, img), 5e-3);
    const ImagePromptFormat fmt = (*proj)->prompt_format();
    EXPECT_EQ(fmt.begin, "<start_of_image>");
    EXPECT_EQ(fmt.end, "<end_of_image>");
    EXPECT_TRUE(fmt.non_causal_span);
  }
}

TEST(ProjectorTest, Gemma3ResizesOtherSizesToFit) {
  const TinyProjector p = MakeTinyProjector({});
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const Image wide = TestPicture(50, 21, 12);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(wide, &out).ok());
  EXPECT_EQ((*proj)->TokensFor(wide), 16);
  ExpectClose(out, ReferenceGemma3(p, ResizeToFit(wide, 32, 32, ResizeFilter::kBilinear)), 5e-3);
}

TEST(ProjectorTest, EmbeddingsDoNotDependOnOtherImagesOrThreads) {
  const TinyProjector p = MakeTinyProjector({.matrix_type = gguf::GgmlType::kF16});
  auto one = FromBytes(p, 1);
  auto four = FromBytes(p, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  const Image a = TestPicture(32, 32, 21), b = TestPicture(40, 33, 22);
  std::vector<float> a1, b1, a2, a4;
  ASSERT_TRUE((*one)->Encode(a, &a1).ok());
  ASSERT_TRUE((*one)->Encode(b, &b1).ok());
  ASSERT_TRUE((*one)->Encode(a, &a2).ok());
  ASSERT_TRUE((*four)->Encode(a, &a4).ok());
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(a1, a4);
  EXPECT_NE(a1, b1);
}

TEST(ProjectorTest, LoadsFromAFile) {
  const TinyProjector p = MakeTinyProjector({});
  const std::string path =
      ::testing::TempDir() + "/tiny_gemma3_mmproj_" + std::to_string(getpid()) + ".gguf";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(p.gguf.data()),
             static_cast<std::streamsize>(p.gguf.size()));
  auto proj = Projector::Load(path, {.n_threads = 1});
  std::remove(path.c_str());
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  EXPECT_EQ((*proj)->type(), "gemma3");
  auto missing = Projector::Load(path, {});
  EXPECT_FALSE(missing.ok());
}

TEST(ProjectorTest, RefusesWhatItDoesNotBuild) {
  auto other = FromBytes(MakeTinyProjector({.projector_type = "qwen2vl"}));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(other.status().message().find("'qwen2vl'"), std::string::npos);
  EXPECT_NE(other.status().message().find("gemma3"), std::string::npos);

  auto missing = FromBytes(MakeTinyProjector({.omit_tensors = {"v.blk.1.attn_k.weight"}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("v.blk.1.attn_k.weight"), std::string::npos);

  auto no_norm = FromBytes(MakeTinyProjector({.omit_tensors = {"mm.soft_emb_norm.weight"}}));
  ASSERT_FALSE(no_norm.ok());
  EXPECT_NE(no_norm.status().message().find("mm.soft_emb_norm.weight"), std::string::npos);

  // Pooling by a factor that does not divide the patches per side (8 / 3).
  auto pool = FromBytes(MakeTinyProjector({.scale_factor = 3}));
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), StatusCode::kInvalidArgument);

  // A language model GGUF is not a projector.
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("gemma3"));
  const std::vector<uint8_t> bytes = w.Serialize();
  auto file = gguf::GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  auto lm = Projector::FromGguf(std::move(*file), {});
  ASSERT_FALSE(lm.ok());
  EXPECT_NE(lm.status().message().find("'clip'"), std::string::npos);
}

TEST(ProjectorTest, RefusesABadImageBuffer) {
  const TinyProjector tiny = MakeTinyProjector({});  // the projector reads from its bytes
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok());
  std::vector<float> out;
  EXPECT_EQ((*proj)->Encode(Image{}, &out).code(), StatusCode::kInvalidArgument);
  Image short_buffer = TestPicture(8, 8, 1);
  short_buffer.rgb.pop_back();
  EXPECT_EQ((*proj)->Encode(short_buffer, &out).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixlm::vision
