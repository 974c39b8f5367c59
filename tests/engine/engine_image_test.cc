// Images through the engine (with FakeImageEncoder, a projector's test double, over the fake
// runner): the prompt built around each image, its span keyed by the image's content in the
// radix tree, encoder outputs cached by content, spans never cut by chunked prefill, and every
// request that cannot take images refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/image_prompt.h"
#include "fake_engine.h"
#include "testing/fake_image_encoder.h"

namespace radixlm {
namespace {

using engine_testing::FakeEngine;
using engine_testing::MakeEngine;

constexpr int64_t kImageTokens = 6;
constexpr int64_t kHidden = 8;  // FakeModelConfig::hidden_size

// The fake codec with EncodeVerbatim adding no BOS (as a real tokenizer's).
class VerbatimCodec : public FakeTokenTextCodec {
 public:
  StatusOr<std::vector<int32_t>> EncodeVerbatim(std::string_view text) const override {
    RADIXLM_ASSIGN_OR_RETURN(std::vector<int32_t> ids, Encode(text));
    ids.erase(ids.begin());
    return ids;
  }
};

EncodedImage Encoded(FakeImageEncoder& encoder, const std::string& seed) {
  ImageCache cache(&encoder, 0);
  StatusOr<EncodedImage> image = cache.Get(FakeImageEncoder::File(seed));
  EXPECT_TRUE(image.ok());
  return *image;
}

TEST(ImagePromptTest, PlacesEachImageBetweenItsMarkerTexts) {
  FakeImageEncoder encoder(3, kHidden);
  const std::vector<EncodedImage> images = {Encoded(encoder, "a"), Encoded(encoder, "b")};
  const ImagePromptLayout layout{.begin_text = "A", .end_text = "B", .bidirectional = true};
  VerbatimCodec codec;
  StatusOr<ImagePrompt> p =
      BuildImagePrompt("x<__media__>y<__media__>", /*verbatim=*/false, images, layout, codec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // BOS x A img(3) B y A img(3) B
  const std::vector<int32_t> text_a = *codec.Encode("xA");
  ASSERT_EQ(p->ids.size(), text_a.size() + 3 + 3 + 3 + 1);
  EXPECT_EQ(std::vector<int32_t>(p->ids.begin(), p->ids.begin() + 3), text_a);
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(p->images[0].begin, 3);
  EXPECT_EQ(p->images[1].begin, 3 + 3 + 3);  // after "B y A"
  for (const PromptImage& image : p->images) {
    EXPECT_TRUE(image.bidirectional);
    for (int64_t i = image.begin; i < image.begin + image.n; ++i) EXPECT_TRUE(IsImageId(p->ids[i]));
  }
  EXPECT_EQ(p->ids[6], *codec.EncodeVerbatim("B")->begin());
  EXPECT_EQ(p->ids.back(), *codec.EncodeVerbatim("B")->begin());
  // Different images: different ids from the first position on; the same image: the same.
  EXPECT_NE(p->ids[3], p->ids[9]);
  std::vector<int32_t> again(3);
  WriteImageIds(images[0].hash, again);
  EXPECT_EQ(again, std::vector<int32_t>(p->ids.begin() + 3, p->ids.begin() + 6));

  const StatusOr<ImagePrompt> short_of_markers =
      BuildImagePrompt("x<__media__>y", false, images, layout, codec);
  EXPECT_EQ(short_of_markers.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(short_of_markers.status().message().find("1 image markers"), std::string::npos);
}

// An encoder whose tokens lie on a grid (qwen2.5vl_merger's) gives each image's span its grid,
// which the scheduler turns into M-RoPE positions (MropePositions).
TEST(ImagePromptTest, CarriesTheImageGrid) {
  FakeImageEncoder grid(6, kHidden, {.begin_text = "A", .end_text = "B"}, 2, 3);
  FakeImageEncoder plain(6, kHidden);
  const std::vector<EncodedImage> images = {Encoded(grid, "a"), Encoded(plain, "b")};
  VerbatimCodec codec;
  StatusOr<ImagePrompt> p = BuildImagePrompt("x<__media__>y<__media__>", false, images,
                                             {.begin_text = "A", .end_text = "B"}, codec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(p->images[0].grid_rows, 2);
  EXPECT_EQ(p->images[0].grid_cols, 3);
  EXPECT_FALSE(p->images[0].bidirectional);
  EXPECT_EQ(p->images[1].grid_cols, 0);
  EXPECT_TRUE(HasMropeImages(p->images));
  // An encoder whose grid does not hold its tokens is an internal error, not a wrong prompt.
  FakeImageEncoder wrong(6, kHidden, {}, 2, 2);
  ImageCache cache(&wrong, 0);
  EXPECT_EQ(cache.Get(FakeImageEncoder::File("c")).status().code(), StatusCode::kInternal);
}

// An image laid out as pieces (idefics3's tiles: text, a run of rows, a token, ...): each run
// of rows is a span of its own holding its rows (first_row) and their ids, counted over the
// image's rows; the text pieces are tokenized on their own, a token piece is one token.
TEST(ImagePromptTest, LaysOutTextTokenAndRowPiecesInOrder) {
  using Kind = ImagePiece::Kind;
  FakeImageEncoder encoder(6, kHidden);
  encoder.set_pieces({{.kind = Kind::kText, .text = "x"},
                      {.kind = Kind::kRows, .first_row = 0, .n_rows = 2},
                      {.kind = Kind::kToken, .text = "\n"},
                      {.kind = Kind::kText, .text = "ab"},
                      {.kind = Kind::kRows, .first_row = 2, .n_rows = 4},
                      {.kind = Kind::kToken, .text = "."}});
  const std::vector<EncodedImage> images = {Encoded(encoder, "a")};
  VerbatimCodec codec;
  StatusOr<ImagePrompt> p = BuildImagePrompt("c<__media__>d", false, images, {}, codec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // BOS c | x | rows 0-1 | "\n" | a b | rows 2-5 | . | d
  const int32_t bos = FakeTokenTextCodec::kBos;
  auto id = [&](std::string_view c) { return codec.EncodeVerbatim(c)->front(); };
  ASSERT_EQ(p->ids.size(), 2u + 1 + 2 + 1 + 2 + 4 + 1 + 1);
  EXPECT_EQ(std::vector<int32_t>(p->ids.begin(), p->ids.begin() + 3),
            (std::vector<int32_t>{bos, id("c"), id("x")}));
  EXPECT_EQ(p->ids[5], 30);  // the fake vocabulary's "\n"
  EXPECT_EQ(p->ids[6], id("a"));
  EXPECT_EQ(p->ids[7], id("b"));
  EXPECT_EQ(p->ids[12], id("."));
  EXPECT_EQ(p->ids[13], id("d"));
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(p->images[0].begin, 3);
  EXPECT_EQ(p->images[0].n, 2);
  EXPECT_EQ(p->images[0].first_row, 0);
  EXPECT_EQ(p->images[1].begin, 8);
  EXPECT_EQ(p->images[1].n, 4);
  EXPECT_EQ(p->images[1].first_row, 2);
  for (const PromptImage& span : p->images) {
    EXPECT_EQ(span.image_rows, 6);
    EXPECT_EQ(span.hash, images[0].hash);
  }
  // The spans' ids are the image's six, in order, as one span of the whole image has them.
  std::vector<int32_t> whole(6);
  WriteImageIds(images[0].hash, whole);
  EXPECT_EQ(std::vector<int32_t>(p->ids.begin() + 3, p->ids.begin() + 5),
            std::vector<int32_t>(whole.begin(), whole.begin() + 2));
  EXPECT_EQ(std::vector<int32_t>(p->ids.begin() + 8, p->ids.begin() + 12),
            std::vector<int32_t>(whole.begin() + 2, whole.end()));

  // A token the vocabulary lacks is refused by name.
  FakeImageEncoder lacking(2, kHidden);
  lacking.set_pieces({{.kind = Kind::kToken, .text = "<global-img>"},
                      {.kind = Kind::kRows, .first_row = 0, .n_rows = 2}});
  const std::vector<EncodedImage> lacking_image = {Encoded(lacking, "a")};
  const StatusOr<ImagePrompt> missing =
      BuildImagePrompt("<__media__>", false, lacking_image, {}, codec);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'<global-img>'"), std::string::npos)
      << missing.status().message();

  // Pieces whose rows do not cover the image's in order are the encoder's internal error.
  FakeImageEncoder gap(6, kHidden);
  gap.set_pieces({{.kind = Kind::kRows, .first_row = 0, .n_rows = 2},
                  {.kind = Kind::kRows, .first_row = 3, .n_rows = 3}});
  ImageCache cache(&gap, 0);
  EXPECT_EQ(cache.Get(FakeImageEncoder::File("c")).status().code(), StatusCode::kInternal);
}

class EngineImageTest : public ::testing::Test {
 protected:
  void Start(EngineConfig config = {}, std::string pad = "") {
    fe_ = MakeEngine(config);
    auto encoder = std::make_unique<FakeImageEncoder>(
        kImageTokens, kHidden,
        ImagePromptLayout{
            .begin_text = "A", .end_text = "B", .pad_text = std::move(pad), .bidirectional = true});
    encoder_ = encoder.get();
    ASSERT_TRUE(fe_.engine->SetImageEncoder(std::move(encoder)).ok());
  }

  static GenerateRequest WithImages(const std::string& text, std::vector<std::string> seeds,
                                    int32_t max_new = 4) {
    GenerateRequest r;
    r.text = text;
    for (const std::string& s : seeds) r.image_data.push_back(FakeImageEncoder::File(s));
    r.sampling_params.temperature = 0;
    r.sampling_params.max_new_tokens = max_new;
    r.sampling_params.ignore_eos = true;
    return r;
  }

  struct Result {
    std::vector<int32_t> output;
    int64_t cached_tokens = 0;
    int64_t prompt_tokens = 0;
  };
  Result Run(GenerateRequest r) {
    StatusOr<std::shared_ptr<GenerateStream>> stream = fe_.engine->Submit(std::move(r));
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    Result result;
    if (!stream.ok()) return result;
    const std::vector<GenerateResult> results = (*stream)->Collect();
    EXPECT_EQ(results.size(), 1u);
    if (results.empty()) return result;
    EXPECT_TRUE(results[0].finish_reason.has_value());
    result.output = results[0].output_ids;
    result.cached_tokens = results[0].meta.cached_tokens;
    result.prompt_tokens = results[0].meta.prompt_tokens;
    return result;
  }

  Status SubmitStatus(GenerateRequest r) { return fe_.engine->Submit(std::move(r)).status(); }

  FakeEngine fe_;
  FakeImageEncoder* encoder_ = nullptr;
};

// "ab cdA" is 7 ids with BOS; the image 6; "B ef gh" 7 (no BOS: the fake's Encode adds one, which
// the text after an image also gets here: a piece is tokenized as a prompt of its own).
TEST_F(EngineImageTest, SameImageSharesTheCacheThroughTheImageAndBeyond) {
  Start();
  const Result first = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  const Result second = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  EXPECT_EQ(first.cached_tokens, 0);
  EXPECT_EQ(second.prompt_tokens, first.prompt_tokens);
  EXPECT_EQ(second.cached_tokens, second.prompt_tokens - 1);  // all but the last prompt token
  EXPECT_EQ(second.output, first.output);
  EXPECT_EQ(encoder_->encodes(), 1);  // the second request's image came from the cache
  EXPECT_EQ(fe_.engine->image_counters()->hits, 1);
  EXPECT_EQ(fe_.engine->image_counters()->encodes, 1);
}

// SGLang's qwen2-vl chat template writes "<|vision_start|><|image_pad|><|vision_end|>" per image:
// begin text, pads and end text are one marker, not an image followed by "<|image_pad|>...".
TEST_F(EngineImageTest, ABeginTextWithPadsAndEndTextIsOneImage) {
  Start(EngineConfig{}, "P");
  const Result marked = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  for (const char* padded : {"ab cdAPB ef gh", "ab cdAPPPB ef gh"}) {
    const Result sgl = Run(WithImages(padded, {"cat"}));
    EXPECT_EQ(sgl.prompt_tokens, marked.prompt_tokens) << padded;
    EXPECT_EQ(sgl.output, marked.output) << padded;
  }
  // A begin text alone is the marker, and what follows it stays text.
  const Result bare = Run(WithImages("ab cdA ef gh", {"cat"}));
  EXPECT_EQ(bare.prompt_tokens, marked.prompt_tokens);
  const Result unclosed = Run(WithImages("ab cdAP ef gh", {"cat"}));
  EXPECT_GT(unclosed.prompt_tokens, marked.prompt_tokens);
}

TEST_F(EngineImageTest, ADifferentImageMatchesOnlyTheTextBeforeIt) {
  Start();
  const Result cat = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  const Result dog = Run(WithImages("ab cd<__media__> ef gh", {"dog"}));
  // The text before the image's span: BOS "ab cd", then the begin text as a piece of its own
  // (mtmd_tokenize's layout), which the fake codec's EncodeVerbatim gives a BOS too: BOS "A".
  EXPECT_EQ(dog.cached_tokens, 8);
  EXPECT_EQ(encoder_->encodes(), 2);
  // The outputs are those of two different prompts (the rows reach the model).
  EXPECT_NE(cat.output, dog.output);
}

TEST_F(EngineImageTest, OutputIsTheSameWithTheRadixCacheOff) {
  Start();
  const Result on1 = Run(WithImages("ab<__media__>cd", {"cat"}, 8));
  const Result on2 = Run(WithImages("ab<__media__>cd", {"cat"}, 8));
  EngineConfig off;
  off.disable_radix_cache = true;
  Start(off);
  const Result off1 = Run(WithImages("ab<__media__>cd", {"cat"}, 8));
  EXPECT_GT(on2.cached_tokens, 0);
  EXPECT_EQ(off1.cached_tokens, 0);
  EXPECT_EQ(on1.output, off1.output);
  EXPECT_EQ(on2.output, off1.output);
}

// Chunks of 5 tokens: the prompt "abcdefgA" (9 ids) then a 6-token image would be cut at 5
// and 10; the image is never cut (a chunk ends before it and the next one holds it whole).
TEST_F(EngineImageTest, ChunkedPrefillNeverCutsAnImage) {
  EngineConfig config;
  config.chunked_prefill_size = 7;
  Start(config);
  const Result chunked = Run(WithImages("abcdefg<__media__>hijklmnop", {"cat"}));
  EXPECT_EQ(fe_.runner->embedding_rows(), kImageTokens);
  EXPECT_LE(fe_.runner->max_chunk_tokens(), 7);
  Start();
  const Result whole = Run(WithImages("abcdefg<__media__>hijklmnop", {"cat"}));
  EXPECT_EQ(chunked.output, whole.output);
}

// An image in pieces: each span takes its own rows (an image split into two adjacent spans
// gives the output of the whole span); the same image twice shares the cache through all its
// spans; a different one matches only up to its first row.
TEST_F(EngineImageTest, AnImageInPiecesTakesEachSpansRowsAndSharesTheCache) {
  using Kind = ImagePiece::Kind;
  Start();
  const Result whole = Run(WithImages("ab cd<__media__> ef gh", {"cat"}, 8));
  fe_ = MakeEngine();
  auto split = std::make_unique<FakeImageEncoder>(
      kImageTokens, kHidden,
      ImagePromptLayout{.begin_text = "A", .end_text = "B", .bidirectional = true});
  split->set_pieces({{.kind = Kind::kRows, .first_row = 0, .n_rows = 2},
                     {.kind = Kind::kRows, .first_row = 2, .n_rows = 4}});
  ASSERT_TRUE(fe_.engine->SetImageEncoder(std::move(split)).ok());
  const Result halves = Run(WithImages("ab cd<__media__> ef gh", {"cat"}, 8));
  EXPECT_EQ(halves.prompt_tokens, whole.prompt_tokens);
  EXPECT_EQ(halves.output, whole.output);

  fe_ = MakeEngine();
  auto tiled = std::make_unique<FakeImageEncoder>(kImageTokens, kHidden,
                                                  ImagePromptLayout{.vocabulary_tokens = {"."}});
  tiled->set_pieces({{.kind = Kind::kText, .text = "xy"},
                     {.kind = Kind::kRows, .first_row = 0, .n_rows = 3},
                     {.kind = Kind::kToken, .text = "."},
                     {.kind = Kind::kRows, .first_row = 3, .n_rows = 3},
                     {.kind = Kind::kText, .text = "z"}});
  ASSERT_TRUE(fe_.engine->SetImageEncoder(std::move(tiled)).ok());
  const Result cat = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  const Result again = Run(WithImages("ab cd<__media__> ef gh", {"cat"}));
  const Result dog = Run(WithImages("ab cd<__media__> ef gh", {"dog"}));
  EXPECT_EQ(again.cached_tokens, again.prompt_tokens - 1);  // through every span and beyond
  EXPECT_EQ(again.output, cat.output);
  // BOS "ab cd" (6), then "xy" as a piece of its own (the fake codec's EncodeVerbatim adds a
  // BOS: 3): the text before the first row.
  EXPECT_EQ(dog.cached_tokens, 9);
  EXPECT_NE(dog.output, cat.output);

  // A layout token the model's vocabulary lacks is refused when the projector is set.
  FakeEngine other = MakeEngine();
  const Status lacking = other.engine->SetImageEncoder(std::make_unique<FakeImageEncoder>(
      2, kHidden, ImagePromptLayout{.vocabulary_tokens = {"<global-img>"}}));
  EXPECT_EQ(lacking.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(lacking.message().find("'<global-img>'"), std::string::npos) << lacking.message();
}

TEST_F(EngineImageTest, RefusesWhatCannotTakeImages) {
  EngineConfig config;
  config.max_images_per_request = 2;
  config.chunked_prefill_size = 4;  // smaller than an image
  Start(config);
  auto expect = [&](GenerateRequest r, StatusCode code, const std::string& words) {
    const Status st = SubmitStatus(std::move(r));
    EXPECT_EQ(st.code(), code) << st.ToString();
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  };
  expect(WithImages("a<__media__>", {"x"}), StatusCode::kInvalidArgument,
         "more than one prefill chunk");
  Start();
  GenerateRequest bad = WithImages("a<__media__>", {});
  bad.image_data.push_back({'G', 'I', 'F', '8'});
  expect(std::move(bad), StatusCode::kInvalidArgument, "image 0: cannot decode");
  EngineConfig two;
  two.max_images_per_request = 2;
  Start(two);
  expect(WithImages("<__media__><__media__><__media__>", {"a", "b", "c"}),
         StatusCode::kInvalidArgument, "the limit is 2");
  expect(WithImages("a<__media__>", {"a", "b"}), StatusCode::kInvalidArgument, "1 image markers");
  GenerateRequest ids_only;
  ids_only.input_ids = std::vector<int32_t>{3, 4};
  ids_only.image_data.push_back(FakeImageEncoder::File("a"));
  expect(std::move(ids_only), StatusCode::kInvalidArgument, "not input_ids");
  GenerateRequest logprobs = WithImages("abc<__media__>de", {"a"});
  logprobs.return_logprob = true;
  logprobs.logprob_start_len = 2;
  expect(std::move(logprobs), StatusCode::kInvalidArgument, "cannot cover an image");

  FakeEngine plain = MakeEngine();
  const Status st = plain.engine->Submit(WithImages("a<__media__>", {"a"})).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--mmproj"), std::string::npos) << st.message();
  EXPECT_FALSE(plain.engine->image_counters().has_value());

  // A projector whose rows are not the model's width is refused.
  const Status wide = plain.engine->SetImageEncoder(std::make_unique<FakeImageEncoder>(2, 16));
  EXPECT_EQ(wide.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wide.message().find("the model takes rows of 8"), std::string::npos) << wide.message();
}

}  // namespace
}  // namespace radixlm
