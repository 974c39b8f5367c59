// Image references read into bytes (server/image_input.h): data URLs and raw base64, local
// paths only under the allowed folder, size limits, https refused; every failure names it.
#include "server/image_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace radixlm::server {
namespace {

namespace fs = std::filesystem;

std::string MessageOf(const StatusOr<std::vector<uint8_t>>& r) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(ImageInputTest, DataUrlsAndRawBase64) {
  const std::vector<uint8_t> hello = {'h', 'e', 'l', 'l', 'o', '!'};
  ImageInputLimits limits;
  EXPECT_EQ(*ReadImageReference("data:image/png;base64,aGVsbG8h", limits), hello);
  EXPECT_EQ(*ReadImageReference("aGVsbG8h", limits), hello);
  EXPECT_EQ(*DecodeBase64("aGVsbA=="), (std::vector<uint8_t>{'h', 'e', 'l', 'l'}));
  EXPECT_NE(MessageOf(ReadImageReference("data:image/png,rawbytes", limits)).find("not base64"),
            std::string::npos);
  EXPECT_NE(MessageOf(ReadImageReference("not an image!", limits)).find("neither a URL"),
            std::string::npos);
  EXPECT_NE(MessageOf(ReadImageReference("https://example.com/a.png", limits)).find("https"),
            std::string::npos);
  limits.max_bytes = 4;
  EXPECT_NE(MessageOf(ReadImageReference("data:image/png;base64,aGVsbG8h", limits))
                .find("larger than the limit"),
            std::string::npos);
}

TEST(ImageInputTest, LocalFilesOnlyUnderTheAllowedFolder) {
  const fs::path root =
      fs::temp_directory_path() / ("radixlm_image_input_" + std::to_string(getpid()));
  fs::create_directories(root / "allowed");
  std::ofstream(root / "allowed" / "a.png") << "PNGDATA";
  std::ofstream(root / "b.png") << "OTHER";
  ImageInputLimits limits;
  const std::string inside = (root / "allowed" / "a.png").string();
  EXPECT_NE(MessageOf(ReadImageReference(inside, limits)).find("--allowed-local-media-path"),
            std::string::npos);
  limits.allowed_local_media_path = (root / "allowed").string();
  EXPECT_EQ(ReadImageReference(inside, limits)->size(), 7u);
  EXPECT_EQ(ReadImageReference("file://" + inside, limits)->size(), 7u);
  for (const std::string& outside :
       {(root / "b.png").string(), (root / "allowed" / ".." / "b.png").string()}) {
    EXPECT_NE(MessageOf(ReadImageReference(outside, limits)).find("outside the allowed"),
              std::string::npos)
        << outside;
  }
  EXPECT_NE(MessageOf(ReadImageReference((root / "allowed" / "none.png").string(), limits))
                .find("no such file"),
            std::string::npos);
  // The folder named with a trailing slash holds the same files.
  limits.allowed_local_media_path = (root / "allowed").string() + "/";
  EXPECT_EQ(ReadImageReference(inside, limits)->size(), 7u);
  // A link inside the folder to a file outside it, and a sibling folder whose name starts with
  // the allowed one's, are outside.
  fs::create_symlink(root / "b.png", root / "allowed" / "link.png");
  fs::create_directories(root / "allowed2");
  std::ofstream(root / "allowed2" / "c.png") << "SIBLING";
  for (const std::string& outside :
       {(root / "allowed" / "link.png").string(), (root / "allowed2" / "c.png").string()}) {
    EXPECT_NE(MessageOf(ReadImageReference(outside, limits)).find("outside the allowed"),
              std::string::npos)
        << outside;
  }
  fs::remove_all(root);
}

TEST(ImageInputTest, AServerWithoutAProjectorSaysSo) {
  EXPECT_TRUE(CheckTakesImages(true).ok());
  const Status no = CheckTakesImages(false);
  EXPECT_EQ(no.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no.message().find("--mmproj"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::server
