// GgufFile::ReleasePages: the released range leaves the mapping's resident set and reads back
// unchanged; a FromBuffer image and ranges outside the mapping are left alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "support/mapping_rss.h"

namespace radixlm::gguf {
namespace {

using radixlm::testing::MappingRssBytes;
using testing::RandomBytes;

class ReleasePagesTest : public ::testing::Test {
 protected:
  static constexpr int64_t kElements = 1 << 20;  // 4 MiB of F32

  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("radixlm_release_pages_" + std::to_string(::getpid()) + ".gguf"))
                .string();
    bytes_ = RandomBytes(kElements * sizeof(float), 7);
    GgufWriter writer;
    writer.AddMetadata("general.architecture", Value::Str("test"));
    ASSERT_TRUE(writer.AddTensor("small", GgmlType::kF32, {8}, RandomBytes(32, 1)).ok());
    ASSERT_TRUE(writer.AddTensor("big", GgmlType::kF32, {kElements}, bytes_).ok());
    ASSERT_TRUE(writer.WriteToFile(path_).ok());
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(ReleasePagesTest, ReleasedBytesLeaveTheResidentSetAndReadBackUnchanged) {
  auto file = GgufFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->is_mapped());
  const TensorInfo* big = (*file)->FindTensor("big");
  ASSERT_NE(big, nullptr);
  ASSERT_EQ(std::memcmp(big->data, bytes_.data(), bytes_.size()), 0);  // faults every page in
  const int64_t rss_before = MappingRssBytes(big->data);

  const size_t released = (*file)->ReleasePages(big->data, big->size_bytes);
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(released % page, 0u);
  EXPECT_LE(released, big->size_bytes);
  EXPECT_GE(released, big->size_bytes - 2 * page);          // all but the partial end pages
  if (rss_before >= 0) {                                    // (smaps readable)
    EXPECT_GE(rss_before, static_cast<int64_t>(released));  // every page was read in
    const int64_t rss_after = MappingRssBytes(big->data);
    EXPECT_LE(rss_after, rss_before - static_cast<int64_t>(released)) << rss_before;
  }
  // Still readable, and the same bytes (faulted back in from the file).
  EXPECT_EQ(std::memcmp(big->data, bytes_.data(), bytes_.size()), 0);
  // The tensor before it shares no released page: its bytes are intact too.
  const TensorInfo* small = (*file)->FindTensor("small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(std::memcmp(small->data, RandomBytes(32, 1).data(), 32), 0);
}

TEST_F(ReleasePagesTest, RangesWithoutAWholePageOrOutsideTheMappingReleaseNothing) {
  auto file = GgufFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const TensorInfo* big = (*file)->FindTensor("big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ((*file)->ReleasePages(big->data, 0), 0u);
  EXPECT_EQ((*file)->ReleasePages(big->data + 1, 100), 0u);                   // inside one page
  EXPECT_EQ((*file)->ReleasePages(bytes_.data(), bytes_.size()), 0u);         // not the mapping
  EXPECT_EQ((*file)->ReleasePages(big->data, (*file)->file_size() + 1), 0u);  // runs past it
  EXPECT_EQ(std::memcmp(big->data, bytes_.data(), bytes_.size()), 0);
}

// ReadBytes copies bytes from the file without mapping them back in: a released range stays out
// of the resident set; a buffer image is copied as it is; ranges outside the bytes are refused.
TEST_F(ReleasePagesTest, ReadBytesLeavesAReleasedRangeReleased) {
  auto file = GgufFile::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const TensorInfo* big = (*file)->FindTensor("big");
  ASSERT_NE(big, nullptr);
  ASSERT_GT((*file)->ReleasePages(big->data, big->size_bytes), 0u);
  const int64_t rss_released = MappingRssBytes(big->data);
  std::vector<uint8_t> out(bytes_.size());
  for (size_t at = 0; at < bytes_.size(); at += 4096 + 24) {  // a row here and there
    const size_t n = std::min<size_t>(100, bytes_.size() - at);
    ASSERT_TRUE((*file)->ReadBytes(big->data + at, n, out.data() + at).ok());
    ASSERT_EQ(std::memcmp(out.data() + at, bytes_.data() + at, n), 0) << at;
  }
  if (rss_released >= 0) {
    EXPECT_EQ(MappingRssBytes(big->data), rss_released);
  }
  ASSERT_TRUE((*file)->ReadBytes(big->data, bytes_.size(), out.data()).ok());
  EXPECT_EQ(out, bytes_);
  EXPECT_EQ((*file)->ReadBytes(bytes_.data(), 4, out.data()).code(),
            StatusCode::kInvalidArgument);  // not the file's bytes
  EXPECT_EQ((*file)->ReadBytes(big->data, (*file)->file_size() + 1, out.data()).code(),
            StatusCode::kInvalidArgument);

  std::ifstream in(path_, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  auto buffer = GgufFile::FromBuffer(image.data(), image.size());
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  const TensorInfo* copy = (*buffer)->FindTensor("big");
  ASSERT_NE(copy, nullptr);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE((*buffer)->ReadBytes(copy->data, bytes_.size(), out.data()).ok());
  EXPECT_EQ(out, bytes_);
}

TEST_F(ReleasePagesTest, ABufferImageIsNeverReleased) {
  std::ifstream in(path_, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  auto file = GgufFile::FromBuffer(image.data(), image.size());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_FALSE((*file)->is_mapped());
  const TensorInfo* big = (*file)->FindTensor("big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ((*file)->ReleasePages(big->data, big->size_bytes), 0u);
  // MADV_DONTNEED on the caller's heap memory would have zeroed it.
  EXPECT_EQ(std::memcmp(big->data, bytes_.data(), bytes_.size()), 0);
}

}  // namespace
}  // namespace radixlm::gguf
