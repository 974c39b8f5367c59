// DiskStore: writes through the writer thread, loads with checks, the size cap, restarts, and
// failures that must be misses (never errors, never wrong bytes).
#include "cache/disk_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "util/mutex.h"

namespace radixlm {
namespace {

namespace fs = std::filesystem;

class DiskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("radixlm_disk_store_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<DiskStore> Open(uint64_t capacity = 1 << 20, uint64_t model = 7) {
    auto store = DiskStore::Open(DiskStoreConfig{.dir = dir_.string(),
                                                 .capacity_bytes = capacity,
                                                 .model_id = model,
                                                 .warn = [this](const std::string& m) {
                                                   MutexLock lock(&mu_);
                                                   warnings_.push_back(m);
                                                 }});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  static std::vector<int32_t> Tokens(int32_t i) { return {i, i + 1, i + 2, i + 3}; }
  static BlockKey Key(int32_t i) {
    PrefixHasher h;
    h.Update(Tokens(i));
    return h.key();
  }
  static std::vector<uint8_t> Payload(int32_t i) {
    std::vector<uint8_t> p(100);
    for (size_t j = 0; j < p.size(); ++j) p[j] = static_cast<uint8_t>(i + j);
    return p;
  }
  void Put(DiskStore& store, int32_t i) {
    ASSERT_TRUE(store.EnqueueWrite(Key(i), Tokens(i), Payload(i)));
    store.Flush();
  }
  bool LoadsRight(DiskStore& store, int32_t i) {
    std::vector<uint8_t> out(100);
    return store.Load(Key(i), Tokens(i), out).ok() && out == Payload(i);
  }
  size_t warnings() {
    MutexLock lock(&mu_);
    return warnings_.size();
  }

  fs::path dir_;
  Mutex mu_;
  std::vector<std::string> warnings_;
};

// One block file: 48-byte header + 4 tokens + 100 payload bytes + checksum.
constexpr uint64_t kFileBytes = 48 + 16 + 100 + 4;

TEST_F(DiskStoreTest, WritesLoadsAndSurvivesARestart) {
  {
    auto store = Open();
    EXPECT_FALSE(store->Contains(Key(1)));
    Put(*store, 1);
    EXPECT_TRUE(store->Contains(Key(1)));
    EXPECT_FALSE(store->EnqueueWrite(Key(1), Tokens(1), Payload(1)));  // already held
    EXPECT_TRUE(LoadsRight(*store, 1));
    const DiskStoreStats s = store->stats();
    EXPECT_EQ(s.blocks, 1);
    EXPECT_EQ(s.blocks_stored, 1);
    EXPECT_EQ(s.bytes_stored, static_cast<int64_t>(kFileBytes));
    EXPECT_EQ(s.blocks_loaded, 1);
  }
  auto again = Open();
  EXPECT_TRUE(again->Contains(Key(1)));
  EXPECT_TRUE(LoadsRight(*again, 1));
  // Another model's store in the same directory sees nothing.
  auto other = Open(1 << 20, /*model=*/8);
  EXPECT_FALSE(other->Contains(Key(1)));
  EXPECT_EQ(warnings(), 0u);
}

TEST_F(DiskStoreTest, SizeCapDeletesTheOldestFiles) {
  auto store = Open(3 * kFileBytes);
  Put(*store, 1);
  Put(*store, 2);
  Put(*store, 3);
  EXPECT_TRUE(LoadsRight(*store, 1));  // a load makes 1 the newest
  Put(*store, 4);                      // evicts 2, the least recently used
  EXPECT_TRUE(store->Contains(Key(1)));
  EXPECT_FALSE(store->Contains(Key(2)));
  EXPECT_TRUE(store->Contains(Key(3)));
  EXPECT_TRUE(store->Contains(Key(4)));
  EXPECT_FALSE(fs::exists(store->BlockPath(Key(2))));
  const DiskStoreStats s = store->stats();
  EXPECT_EQ(s.files_evicted, 1);
  EXPECT_LE(s.bytes_on_disk, static_cast<int64_t>(3 * kFileBytes));
  // A smaller cap at restart trims at once.
  store.reset();
  auto smaller = Open(kFileBytes);
  EXPECT_EQ(smaller->stats().blocks, 1);
}

TEST_F(DiskStoreTest, CorruptTruncatedOrForeignFilesAreMissesWithAWarning) {
  auto store = Open();
  Put(*store, 1);
  Put(*store, 2);
  Put(*store, 3);
  {  // flip a payload byte
    std::fstream f(store->BlockPath(Key(1)), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(80);
    f.put('\x5a');
  }
  fs::resize_file(store->BlockPath(Key(2)), 60);  // truncate
  // A file of another model under this key's name.
  {
    auto foreign = Open(1 << 20, /*model=*/99);
    Put(*foreign, 3);
    foreign->Flush();
    fs::copy_file(foreign->BlockPath(Key(3)), store->BlockPath(Key(3)),
                  fs::copy_options::overwrite_existing);
  }
  for (int32_t i : {1, 2, 3}) {
    std::vector<uint8_t> out(100, 0);
    EXPECT_FALSE(store->Load(Key(i), Tokens(i), out).ok()) << i;
    EXPECT_EQ(out, std::vector<uint8_t>(100, 0)) << "nothing of a bad file is handed out";
    EXPECT_FALSE(store->Contains(Key(i))) << "a bad block is forgotten";
  }
  EXPECT_EQ(store->stats().load_failures, 3);
  EXPECT_EQ(warnings(), 3u);
  // Forgotten blocks can be written again.
  Put(*store, 1);
  EXPECT_TRUE(LoadsRight(*store, 1));
}

TEST_F(DiskStoreTest, UnwritableOrRemovedDirectorySkipsWrites) {
  auto store = Open();
  Put(*store, 1);
  fs::remove_all(dir_);  // removed while serving: the next write makes it again
  EXPECT_FALSE(LoadsRight(*store, 1));
  Put(*store, 2);
  EXPECT_TRUE(LoadsRight(*store, 2));
  // The directory replaced by a file: nothing can be written there, even by root.
  fs::remove_all(dir_);
  std::ofstream(dir_) << "not a directory";
  ASSERT_TRUE(store->EnqueueWrite(Key(3), Tokens(3), Payload(3)));
  store->Flush();
  EXPECT_FALSE(store->Contains(Key(3)));
  EXPECT_EQ(store->stats().write_failures, 1);
  fs::remove(dir_);
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
    ASSERT_TRUE(store->EnqueueWrite(Key(4), Tokens(4), Payload(4)));
    store->Flush();
    EXPECT_FALSE(store->Contains(Key(4)));
    EXPECT_EQ(store->stats().write_failures, 2);
  }
  EXPECT_GE(warnings(), 2u);
}

TEST_F(DiskStoreTest, QueuedBlocksLoadBeforeTheyAreWritten) {
  DiskStoreConfig config;
  config.dir = dir_.string();
  config.capacity_bytes = 1 << 20;
  config.model_id = 7;
  config.max_queued_bytes = 150;
  auto store = DiskStore::Open(config);
  ASSERT_TRUE(store.ok());
  DiskStore& s = **store;
  // The queue holds 116 bytes of one block; a second does not fit and is dropped, not waited
  // for (the writer may already have taken the first: then both fit).
  ASSERT_TRUE(s.EnqueueWrite(Key(1), Tokens(1), Payload(1)));
  EXPECT_TRUE(s.Contains(Key(1)));
  EXPECT_TRUE(LoadsRight(s, 1));
  s.Flush();
  EXPECT_TRUE(LoadsRight(s, 1));
}

TEST_F(DiskStoreTest, OpenFailsClearlyWhenTheDirectoryCannotBeMade) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  DiskStoreConfig config;
  config.dir = (dir_ / "file" / "sub").string();
  config.capacity_bytes = 1;
  config.model_id = 1;
  EXPECT_FALSE(DiskStore::Open(config).ok());
  config.dir = dir_.string();
  config.capacity_bytes = 0;
  EXPECT_FALSE(DiskStore::Open(config).ok());
}

}  // namespace
}  // namespace radixlm
