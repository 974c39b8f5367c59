// image() on the fake engine with a projector's test double (FakeImageEncoder): the image reaches
// the engine with the prompt (encoded once per content, keyed by it in the radix tree), from
// bytes or a file, and what cannot take an image is a clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fake_backend.h"
#include "frontend/frontend.h"
#include "testing/fake_image_encoder.h"

namespace radixlm::frontend {
namespace {

using testing::FakeSetup;
using testing::MakeFakeSetup;

constexpr int64_t kFakeImageTokens = 6;
const RunOptions kImageRun{.default_gen = {.temperature = 0.0f, .ignore_eos = true}};

FakeSetup ImageSetup() {
  FakeSetup f = MakeFakeSetup();
  auto encoder = std::make_unique<FakeImageEncoder>(
      kFakeImageTokens, f.runner->hidden_size(),
      ImagePromptLayout{.begin_text = "A", .end_text = "B", .bidirectional = true});
  EXPECT_TRUE(f.engine->SetImageEncoder(std::move(encoder)).ok());
  return f;
}

struct DescribedImage {
  ProgramResult result;
  GenerateReply reply;  // gen "answer"'s
};

DescribedImage DescribeImage(Backend& backend, const Expr& picture) {
  DescribedImage d;
  d.result = frontend::Run(backend, kImageRun, [&](State& s) {
    s += user(picture + "what is it");
    s += assistant(gen("answer", {.max_tokens = 6}));
    d.reply = s.gen_reply("answer").value_or(GenerateReply{});
  });
  return d;
}

TEST(FrontendImageTest, TheImageReachesTheEngineAndARepeatIsACacheHit) {
  FakeSetup f = ImageSetup();
  const DescribedImage cat = DescribeImage(*f.backend, image(FakeImageEncoder::File("cat")));
  ASSERT_TRUE(cat.result.status.ok()) << cat.result.status.ToString();
  EXPECT_NE(cat.result.text.find(std::string(kImageMarker)), std::string::npos);
  EXPECT_EQ(f.engine->image_counters()->encodes, 1);

  const DescribedImage again = DescribeImage(*f.backend, image(FakeImageEncoder::File("cat")));
  ASSERT_TRUE(again.result.status.ok()) << again.result.status.ToString();
  EXPECT_EQ(again.result.variables.at("answer"), cat.result.variables.at("answer"));
  EXPECT_EQ(f.engine->image_counters()->encodes, 1);  // the same content is not encoded again
  EXPECT_EQ(f.engine->image_counters()->hits, 1);
  const GenerateReply reply = again.reply;
  EXPECT_EQ(reply.cached_tokens, reply.prompt_tokens - 1);  // through the image and beyond

  const DescribedImage dog = DescribeImage(*f.backend, image(FakeImageEncoder::File("dog")));
  ASSERT_TRUE(dog.result.status.ok()) << dog.result.status.ToString();
  EXPECT_EQ(f.engine->image_counters()->encodes, 2);
  const GenerateReply dog_reply = dog.reply;
  EXPECT_LT(dog_reply.cached_tokens, reply.prompt_tokens - kFakeImageTokens);  // not past the text
  EXPECT_NE(dog.result.variables.at("answer"),
            cat.result.variables.at("answer"));  // the model saw the image
}

TEST(FrontendImageTest, AnImageIsReadFromItsPath) {
  FakeSetup f = ImageSetup();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("radixlm_frontend_image_" + std::to_string(getpid()) + ".img");
  const std::vector<uint8_t> bytes = FakeImageEncoder::File("cat");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  const DescribedImage from_file = DescribeImage(*f.backend, image(path.string()));
  std::filesystem::remove(path);
  ASSERT_TRUE(from_file.result.status.ok()) << from_file.result.status.ToString();
  const DescribedImage from_bytes = DescribeImage(*f.backend, image(bytes));
  ASSERT_TRUE(from_bytes.result.status.ok()) << from_bytes.result.status.ToString();
  EXPECT_EQ(from_bytes.result.variables.at("answer"), from_file.result.variables.at("answer"));
  EXPECT_EQ(f.engine->image_counters()->encodes, 1);  // the same content

  const DescribedImage missing = DescribeImage(*f.backend, image(path.string()));
  EXPECT_EQ(missing.result.status.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.result.status.message().find(path.string()), std::string::npos);
}

TEST(FrontendImageTest, AModelWithoutAProjectorSaysSo) {
  FakeSetup f = MakeFakeSetup();
  const DescribedImage r = DescribeImage(*f.backend, image(FakeImageEncoder::File("cat")));
  EXPECT_EQ(r.result.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.result.status.message().find("takes no images"), std::string::npos)
      << r.result.status.message();
  EXPECT_NE(r.result.status.message().find("--mmproj"), std::string::npos)
      << r.result.status.message();
}

TEST(FrontendImageTest, AnUndecodableImageIsTheEnginesError) {
  FakeSetup f = ImageSetup();
  const DescribedImage r =
      DescribeImage(*f.backend, image(std::vector<uint8_t>{'n', 'o', 'p', 'e'}));
  EXPECT_EQ(r.result.status.code(), StatusCode::kInvalidArgument) << r.result.status.ToString();
  EXPECT_NE(r.result.status.message().find("image 0"), std::string::npos)
      << r.result.status.message();
}

TEST(FrontendImageTest, SelectAfterAnImageIsUnimplemented) {
  FakeSetup f = ImageSetup();
  const ProgramResult r = frontend::Run(*f.backend, kImageRun, [](State& s) {
    s += user(image(FakeImageEncoder::File("cat")) + "is it a cat");
    s += assistant(select("verdict", {"yes", "no"}));
  });
  EXPECT_EQ(r.status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status.message().find("after an image"), std::string::npos);
}

TEST(FrontendImageTest, ForkAfterAnImageCommitsNothingAndBranchesSendTheImage) {
  FakeSetup f = ImageSetup();
  std::vector<std::string> answers;
  const ProgramResult r = frontend::Run(*f.backend, kImageRun, [&](State& s) {
    s += user(image(FakeImageEncoder::File("cat")) + "what is it");
    ForkGroup branches = s.fork(2);
    for (size_t i = 0; i < branches.size(); ++i) {
      branches[i] += assistant("take " + std::to_string(i) + gen("a", {.max_tokens = 4}));
    }
    for (State& b : branches) answers.push_back(b["a"]);
    join(branches);
  });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(f.backend->counters().commit_calls, 0);
  EXPECT_EQ(f.backend->counters().generate_calls, 2);
  const ImageCounters c = *f.engine->image_counters();
  EXPECT_EQ(c.encodes + c.hits, 2);  // each branch sent the image
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_FALSE(answers[0].empty());
}

TEST(FrontendImageTest, TheIrNamesTheImage) {
  Node n = image("photo.png").nodes()[0];
  EXPECT_EQ(n.ToString(), "Image(\"photo.png\")");
  EXPECT_EQ(image(std::vector<uint8_t>(3)).nodes()[0].ToString(), "Image(3 bytes)");
}

}  // namespace
}  // namespace radixlm::frontend
