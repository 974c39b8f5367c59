// The idefics3 projector (SmolVLM) on tiny projector GGUFs written by the test
// (tiny_projector.h): each tile against the plain float reference (ViT, pixel shuffle,
// mm.model.fc), the tiles-then-overview order and count, the refusals; and against llama.cpp's
// libmtmd on the files of tests/vision/testdata (a tiny projector, two PNGs, llama.cpp's
// embeddings and token counts in idefics3_golden.json), written by
//   python bench/vision_oracle.py --type idefics3 --golden tests/vision/testdata
// (llama.cpp decodes the PNGs itself; never edit the values by hand).
#include "vision/idefics3.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tiny_projector.h"
#include "vision/image_resize.h"
#include "vision/projector.h"

namespace radixlm::vision {
namespace idefics3_test {
namespace {

using testing::MakeTinyProjector;
using testing::ReferenceIdefics3Tile;
using testing::TestPicture;
using testing::TinyProjector;
using testing::TinyProjectorSpec;

// image 32, patch 4, shuffle 2: 16 tokens of 32 * 4 = 128 values per tile, projected to 24.
TinyProjectorSpec Spec(int64_t longest_edge, gguf::GgmlType type = gguf::GgmlType::kF32) {
  return {.projector_type = "idefics3",
          .scale_factor = 2,
          .preproc_image_size = longest_edge,
          .matrix_type = type};
}

StatusOr<std::unique_ptr<Projector>> FromBytes(const TinyProjector& p) {
  auto file = gguf::GgufFile::FromBuffer(p.gguf.data(), p.gguf.size());
  if (!file.ok()) return file.status();
  return Projector::FromGguf(std::move(*file), {.n_threads = 2});
}

// Cosine and max |difference| of got[offset, offset + want.size()) against want; returns the
// cosine.
double ExpectClose(const std::vector<float>& got, size_t offset, const std::vector<float>& want,
                   double cosine_min, double tol, const std::string& what) {
  EXPECT_LE(offset + want.size(), got.size()) << what;
  if (offset + want.size() > got.size()) return 0;
  double dot = 0, ng = 0, nw = 0, max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got[offset + i];
    dot += g * want[i];
    ng += g * g;
    nw += double(want[i]) * want[i];
    max_diff = std::max(max_diff, std::abs(g - want[i]));
    max_abs = std::max(max_abs, double(std::abs(want[i])));
  }
  const double cosine = dot / std::sqrt(ng * nw);
  EXPECT_GT(cosine, cosine_min) << what;
  EXPECT_LT(max_diff, tol * max_abs) << what << ": max |diff| " << max_diff << " of " << max_abs;
  return cosine;
}

TEST(Idefics3Test, ATileMatchesTheFloatReference) {
  for (gguf::GgmlType type : {gguf::GgmlType::kF32, gguf::GgmlType::kF16}) {
    // The longest edge is the tile: a square tile-sized image is one tile, and the overview is
    // the same picture.
    const TinyProjector p = MakeTinyProjector(Spec(32, type));
    auto proj = FromBytes(p);
    ASSERT_TRUE(proj.ok()) << proj.status().ToString();
    EXPECT_EQ((*proj)->type(), "idefics3");
    EXPECT_EQ((*proj)->n_embd(), 24);
    const Image img = TestPicture(32, 32, 5);
    EXPECT_EQ((*proj)->TokensFor(img), 2 * 16);
    std::vector<float> out;
    ASSERT_TRUE((*proj)->Encode(img, &out).ok());
    ASSERT_EQ(out.size(), size_t{2 * 16 * 24});
    const std::vector<float> want = ReferenceIdefics3Tile(p, img);
    ExpectClose(out, 0, want, 0.99999, 5e-3, "the tile");
    ExpectClose(out, want.size(), want, 0.99999, 5e-3, "the overview");
    const ImagePromptFormat fmt = (*proj)->prompt_format();
    EXPECT_TRUE(fmt.begin.empty() && fmt.end.empty());
    EXPECT_FALSE(fmt.non_causal_span);
  }
}

TEST(Idefics3Test, TilesRowByRowThenTheOverview) {
  const TinyProjector p = MakeTinyProjector(Spec(64));
  auto proj = FromBytes(p);
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const Image img = TestPicture(70, 40, 9);
  auto slices = SliceIdefics3(img, 32, 64);
  ASSERT_TRUE(slices.ok());
  // 70 x 40 -> 64 x 36 (the longer side at 64), stretched to 2 x 2 tiles of 32.
  EXPECT_EQ(slices->grid.width, 64);
  EXPECT_EQ(slices->grid.height, 36);
  ASSERT_EQ(slices->grid.cols, 2);
  ASSERT_EQ(slices->grid.rows, 2);
  ASSERT_EQ(slices->tiles.size(), 4u);
  const Image refined = ResizePillow(ResizePillow(img, 64, 36, ResizeFilter::kLanczos), 64, 64,
                                     ResizeFilter::kLanczos);
  for (int t = 0; t < 4; ++t) {
    const Image& tile = slices->tiles[t];
    ASSERT_EQ(tile.width, 32);
    ASSERT_EQ(tile.height, 32);
    const int x0 = (t % 2) * 32, y0 = (t / 2) * 32;
    for (int y = 0; y < 32; y += 7) {
      for (int x = 0; x < 32; x += 5) {
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(tile.rgb[(y * 32 + x) * 3 + c], refined.rgb[((y0 + y) * 64 + x0 + x) * 3 + c])
              << "tile " << t;
        }
      }
    }
  }
  EXPECT_EQ((*proj)->TokensFor(img), 5 * 16);
  std::vector<float> out;
  ASSERT_TRUE((*proj)->Encode(img, &out).ok());
  ASSERT_EQ(out.size(), size_t{5 * 16 * 24});
  const size_t per_tile = 16 * 24;
  for (int t = 0; t < 4; ++t) {
    ExpectClose(out, t * per_tile, ReferenceIdefics3Tile(p, slices->tiles[t]), 0.99999, 5e-3,
                "tile " + std::to_string(t));
  }
  ExpectClose(out, 4 * per_tile, ReferenceIdefics3Tile(p, slices->overview), 0.99999, 5e-3,
              "the overview");
}

// What the prompt holds for a 2 x 2 image (llama.cpp's mtmd_tokenize for idefics3; checked
// token by token against llama.cpp below, Idefics3LayoutGoldenTest).
TEST(Idefics3Test, PromptPiecesAreTheTilesRowByRowThenTheOverview) {
  using Kind = ImagePromptPiece::Kind;
  auto proj = FromBytes(MakeTinyProjector(Spec(64)));
  ASSERT_TRUE(proj.ok()) << proj.status().ToString();
  const std::vector<ImagePromptPiece> pieces = (*proj)->PromptPieces(TestPicture(70, 40, 9));
  struct Want {
    Kind kind;
    std::string text;
    int64_t first_row = 0;
  };
  const std::vector<Want> want = {
      {Kind::kText, "<fake_token_around_image><row_1_col_1>"},
      {Kind::kRows, "", 0},
      {Kind::kText, "<fake_token_around_image><row_1_col_2>"},
      {Kind::kRows, "", 16},
      {Kind::kToken, "\n"},
      {Kind::kText, "<fake_token_around_image><row_2_col_1>"},
      {Kind::kRows, "", 32},
      {Kind::kText, "<fake_token_around_image><row_2_col_2>"},
      {Kind::kRows, "", 48},
      {Kind::kToken, "\n\n"},
      {Kind::kToken, "<fake_token_around_image>"},
      {Kind::kToken, "<global-img>"},
      {Kind::kRows, "", 64},
      {Kind::kToken, "<fake_token_around_image>"},
  };
  ASSERT_EQ(pieces.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(pieces[i].kind, want[i].kind) << i;
    EXPECT_EQ(pieces[i].text, want[i].text) << i;
    if (want[i].kind == Kind::kRows) {
      EXPECT_EQ(pieces[i].first_row, want[i].first_row) << i;
      EXPECT_EQ(pieces[i].n_rows, 16) << i;
    }
  }
  const std::vector<std::string> tokens = (*proj)->PromptTokens();
  for (const ImagePromptPiece& p : pieces) {
    if (p.kind == Kind::kToken) {
      EXPECT_NE(std::find(tokens.begin(), tokens.end(), p.text), tokens.end()) << p.text;
    }
  }
}

TEST(Idefics3Test, RefusesWhatItDoesNotBuild) {
  auto no_edge = FromBytes(MakeTinyProjector(Spec(0)));
  ASSERT_FALSE(no_edge.ok());
  EXPECT_EQ(no_edge.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(no_edge.status().message().find("clip.vision.preproc_image_size"), std::string::npos);

  TinyProjectorSpec no_scale = Spec(64);
  no_scale.scale_factor = 0;  // not written: llama.cpp's n_merge stays 1 and it cannot shuffle
  auto unscaled = FromBytes(MakeTinyProjector(no_scale));
  ASSERT_FALSE(unscaled.ok());
  EXPECT_EQ(unscaled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unscaled.status().message().find("scale_factor"), std::string::npos);

  TinyProjectorSpec three = Spec(64);
  three.scale_factor = 3;  // 8 patches per side
  auto odd = FromBytes(MakeTinyProjector(three));
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), StatusCode::kInvalidArgument);

  TinyProjectorSpec no_fc = Spec(64);
  no_fc.omit_tensors = {"mm.model.fc.weight"};
  auto missing = FromBytes(MakeTinyProjector(no_fc));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("mm.model.fc.weight"), std::string::npos);
}

TEST(Idefics3Test, RefusesABadImageBuffer) {
  const TinyProjector tiny = MakeTinyProjector(Spec(64));
  auto proj = FromBytes(tiny);
  ASSERT_TRUE(proj.ok());
  std::vector<float> out;
  EXPECT_EQ((*proj)->Encode(Image{}, &out).code(), StatusCode::kInvalidArgument);
  Image short_buffer = TestPicture(8, 8, 1);
  short_buffer.rgb.pop_back();
  EXPECT_EQ((*proj)->Encode(short_buffer, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SliceIdefics3(short_buffer, 32, 64).status().code(), StatusCode::kInvalidArgument);
}

std::string TestData(const std::string& name) {
  return std::string(RADIXLM_SOURCE_DIR) + "/tests/vision/testdata/" + name;
}

TEST(Idefics3GoldenTest, MatchesLlamaCpp) {
  std::ifstream in(TestData("idefics3_golden.json"));
  ASSERT_TRUE(in.good())
      << "run bench/vision_oracle.py --type idefics3 --golden tests/vision/testdata";
  const nlohmann::json golden = nlohmann::json::parse(in);
  auto projector = Projector::Load(TestData(golden.at("projector")), {.n_threads = 2});
  ASSERT_TRUE(projector.ok()) << projector.status().ToString();
  int checked = 0;
  for (const nlohmann::json& g : golden.at("images")) {
    const std::string file = g.at("file");
    std::ifstream f(TestData(file), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    auto image = DecodeImage(bytes);
    ASSERT_TRUE(image.ok()) << file << ": " << image.status().ToString();
    std::vector<float> got;
    ASSERT_TRUE((*projector)->Encode(*image, &got).ok());
    EXPECT_EQ((*projector)->TokensFor(*image), g.at("n_tokens").get<int64_t>()) << file;
    EXPECT_EQ((*projector)->n_embd(), g.at("n_embd").get<int64_t>());
    const auto want = g.at("embeddings").get<std::vector<float>>();
    ASSERT_EQ(got.size(), want.size()) << file;
    const double cosine = ExpectClose(got, 0, want, 0.99999, 3e-3, file);
    std::printf("%s: %zu rows, cosine %.7f\n", file.c_str(),
                static_cast<size_t>(got.size() / (*projector)->n_embd()), cosine);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  int counted = 0;
  for (const nlohmann::json& c : golden.at("token_counts")) {
    const Image sized{.width = c.at("width").get<int>(), .height = c.at("height").get<int>()};
    EXPECT_EQ((*projector)->TokensFor(sized), c.at("n_tokens").get<int64_t>())
        << sized.width << "x" << sized.height;
    ++counted;
  }
  EXPECT_GE(counted, 8);
}

// The prompt layout against llama.cpp's mtmd_tokenize for the same projector file and image
// (idefics3_layout_golden.json: the prompt "<__media__>" beside SmolLM2-135M-Instruct with
// SmolVLM's image tokens; each text token's piece, -1 at image rows), written by
//   python bench/image_kl_oracle.py --type idefics3 --layout-golden tests/vision/testdata
// A text piece is the golden's next tokens whose pieces make up its text, a token piece one
// golden token of that text, a run of rows as many golden image rows; nothing else is left.
TEST(Idefics3LayoutGoldenTest, MatchesLlamaCppsMtmdTokenize) {
  using Kind = ImagePromptPiece::Kind;
  std::ifstream in(TestData("idefics3_layout_golden.json"));
  ASSERT_TRUE(in.good())
      << "run bench/image_kl_oracle.py --type idefics3 --layout-golden tests/vision/testdata";
  const nlohmann::json golden = nlohmann::json::parse(in);
  std::vector<std::string> grids;
  for (const nlohmann::json& g : golden.at("images")) {
    const std::string file = g.at("file");
    auto projector = Projector::Load(TestData(g.at("projector")), {.n_threads = 2});
    ASSERT_TRUE(projector.ok()) << projector.status().ToString();
    std::ifstream f(TestData(file), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    auto image = DecodeImage(bytes);
    ASSERT_TRUE(image.ok()) << file << ": " << image.status().ToString();
    // The golden as one sequence: a token's piece, or "" for an image row.
    std::vector<std::optional<std::string>> want;
    for (const nlohmann::json& chunk : g.at("chunks")) {
      if (chunk.contains("rows")) {
        want.insert(want.end(), chunk.at("rows").get<size_t>(), std::nullopt);
      } else {
        for (const nlohmann::json& piece : chunk.at("text")) {
          want.emplace_back(piece.get<std::string>());
        }
      }
    }
    size_t at = 0;
    int64_t rows = 0;
    int tiles = 0;
    for (const ImagePromptPiece& piece : (*projector)->PromptPieces(*image)) {
      const std::string where = file + " at golden position " + std::to_string(at);
      if (piece.kind == Kind::kRows) {
        EXPECT_EQ(piece.first_row, rows) << where;
        for (int64_t i = 0; i < piece.n_rows; ++i, ++at) {
          ASSERT_LT(at, want.size()) << where;
          ASSERT_FALSE(want[at].has_value()) << where << ": llama.cpp has '" << *want[at] << "'";
        }
        rows += piece.n_rows;
        ++tiles;
      } else if (piece.kind == Kind::kToken) {
        ASSERT_LT(at, want.size()) << where;
        ASSERT_TRUE(want[at].has_value()) << where << ": llama.cpp has an image row";
        EXPECT_EQ(*want[at], piece.text) << where;
        ++at;
      } else {
        std::string text;
        while (text.size() < piece.text.size() && at < want.size() && want[at].has_value()) {
          text += *want[at++];
        }
        EXPECT_EQ(text, piece.text) << where;
      }
    }
    EXPECT_EQ(at, want.size()) << file << ": llama.cpp's prompt goes on";
    EXPECT_EQ(rows, (*projector)->TokensFor(*image)) << file;
    grids.push_back(file + ": " + std::to_string(tiles) + " spans");
    std::printf("%s: %zu positions, %d row spans\n", file.c_str(), want.size(), tiles);
  }
  // 1 x 1 tile, 2 x 3 and 3 x 2, each with its overview.
  EXPECT_EQ(grids, (std::vector<std::string>{"idefics3_layout_45x29.png: 2 spans",
                                             "idefics3_layout_90x60.png: 7 spans",
                                             "idefics3_layout_60x90.png: 7 spans"}));
}

}  // namespace
}  // namespace idefics3_test
}  // namespace radixlm::vision
