// DiskStore: writes through the writer thread, loads with checks, the size cap, restarts, and
// failures that must be misses (never errors, never wrong bytes): corrupt files, a removed or
// unwritable directory, a full disk (through FaultyBlockFileIo) and short writes.
#include "cache/disk_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/faulty_block_file_io.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

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
                                                 .warn =
                                                     [this](const std::string& m) {
                                                       MutexLock lock(&mu_);
                                                       warnings_.push_back(m);
                                                     },
                                                 .io = io_,
                                                 .clock = [this] { return Now(); }});
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
  std::string last_warning() {
    MutexLock lock(&mu_);
    return warnings_.empty() ? "" : warnings_.back();
  }
  // The files in the store's directory (block files and any temporary leftovers).
  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }
  // The store's clock (its write pause): starts at 0 and moves only when a test says.
  std::chrono::steady_clock::time_point Now() const {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(now_ns_.load()));
  }
  void Advance(std::chrono::milliseconds d) {
    now_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  }

  fs::path dir_;
  Mutex mu_;
  std::vector<std::string> warnings_;
  BlockFileIo* io_ = nullptr;  // null: the real file system
  std::atomic<int64_t> now_ns_{0};
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

TEST_F(DiskStoreTest, ABlockEvictedBeforeItIsReadIsAMissNotAFailure) {
  auto store = Open(2 * kFileBytes);
  Put(*store, 1);
  Put(*store, 2);
  Put(*store, 3);  // the size cap evicts 1, which a load job may still name
  std::vector<uint8_t> out(100, 0);
  const Status evicted = store->Load(Key(1), Tokens(1), out);
  EXPECT_EQ(evicted.code(), StatusCode::kNotFound) << evicted.ToString();
  Put(*store, 4);
  EXPECT_EQ(store->Clear(), 2);  // so are cleared blocks
  EXPECT_EQ(store->Load(Key(4), Tokens(4), out).code(), StatusCode::kNotFound);
  EXPECT_EQ(out, std::vector<uint8_t>(100, 0));
  const DiskStoreStats s = store->stats();
  EXPECT_EQ(s.files_evicted, 2);
  EXPECT_EQ(s.load_failures, 0);
  EXPECT_EQ(warnings(), 0u);
  Put(*store, 1);
  EXPECT_TRUE(LoadsRight(*store, 1));
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

TEST_F(DiskStoreTest, AFileOfTheWrongSizeIsRefusedBeforeItIsRead) {
  auto store = Open();
  Put(*store, 1);
  store->Flush();
  // A sparse 32 GiB file under the block's name: refused by its size, never read into memory.
  fs::resize_file(store->BlockPath(Key(1)), 32ull << 30);
  std::vector<uint8_t> out(100, 0);
  const Status status = store->Load(Key(1), Tokens(1), out);
  fs::remove(store->BlockPath(Key(1)));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("expected"), std::string::npos) << status.message();
  EXPECT_FALSE(store->Contains(Key(1)));
  EXPECT_EQ(store->stats().load_failures, 1);
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
  // Past the pause the failure started. Root writes anywhere: the rest is for other users.
  Advance(DiskStore::kFirstWritePause);
  if (::geteuid() != 0) {
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

TEST_F(DiskStoreTest, FullDiskSkipsTheBlockLeavesNoPartFileAndPausesWrites) {
  // Room for two blocks and part of a third.
  testing::FaultyBlockFileIo io(2 * kFileBytes + 50);
  io_ = &io;
  auto store = Open();
  Put(*store, 1);
  Put(*store, 2);
  Put(*store, 3);  // runs out of space 50 bytes in
  EXPECT_EQ(io.failed_writes(), 1);
  EXPECT_FALSE(store->Contains(Key(3)));
  EXPECT_FALSE(fs::exists(store->BlockPath(Key(3))));
  EXPECT_EQ(Files().size(), 2u) << "the partial temporary file is removed";
  EXPECT_EQ(warnings(), 1u);
  EXPECT_NE(last_warning().find("No space left on device"), std::string::npos) << last_warning();
  EXPECT_NE(last_warning().find("paused for 1 s"), std::string::npos) << last_warning();
  DiskStoreStats s = store->stats();
  EXPECT_EQ(s.write_failures, 1);
  EXPECT_EQ(s.blocks_stored, 2);
  // The blocks written before it still serve; serving goes on.
  EXPECT_TRUE(LoadsRight(*store, 1));
  EXPECT_TRUE(LoadsRight(*store, 2));

  // Paused: blocks offered are dropped without touching the disk.
  EXPECT_FALSE(store->AcceptsWrite(Key(4)));
  EXPECT_FALSE(store->EnqueueWrite(Key(4), Tokens(4), Payload(4)));
  EXPECT_EQ(store->stats().writes_dropped, 2);
  EXPECT_EQ(io.creates(), 3);
  EXPECT_EQ(warnings(), 1u);

  // After the pause one write is tried; still full, the next pause is twice as long.
  Advance(std::chrono::seconds(1));
  Put(*store, 4);
  EXPECT_FALSE(store->Contains(Key(4)));
  EXPECT_EQ(io.creates(), 4);
  EXPECT_EQ(warnings(), 2u);
  EXPECT_NE(last_warning().find("paused for 2 s"), std::string::npos) << last_warning();
  Advance(std::chrono::seconds(1));
  EXPECT_FALSE(store->AcceptsWrite(Key(4)));
  Advance(std::chrono::seconds(1));
  EXPECT_TRUE(store->AcceptsWrite(Key(4)));

  // Space freed: writes work again, and a success resets the pause to its first length.
  io.set_budget(1 << 20);
  Put(*store, 4);
  EXPECT_TRUE(LoadsRight(*store, 4));
  io.set_budget(0);
  Put(*store, 5);
  EXPECT_NE(last_warning().find("paused for 1 s"), std::string::npos) << last_warning();
  EXPECT_EQ(store->stats().write_failures, 3);

  // A restart finds exactly the blocks that were written whole.
  store.reset();
  io_ = nullptr;
  auto again = Open();
  EXPECT_EQ(again->stats().blocks, 3);
  for (int32_t i : {1, 2, 4}) EXPECT_TRUE(LoadsRight(*again, i)) << i;
  EXPECT_FALSE(again->Contains(Key(3)));
  EXPECT_FALSE(again->Contains(Key(5)));
}

TEST_F(DiskStoreTest, FullDiskDoesNotRetryEveryQueuedBlock) {
  testing::FaultyBlockFileIo io(0);
  io_ = &io;
  auto store = Open();
  int queued = 0;
  for (int32_t i = 1; i <= 20; ++i) queued += store->EnqueueWrite(Key(i), Tokens(i), Payload(i));
  store->Flush();
  ASSERT_GE(queued, 1);
  // One attempt fails; the blocks behind it (queued or offered later) are dropped unattempted.
  EXPECT_EQ(io.creates(), 1);
  EXPECT_EQ(io.failed_writes(), 1);
  const DiskStoreStats s = store->stats();
  EXPECT_EQ(s.write_failures, 1);
  EXPECT_EQ(s.writes_dropped, 19);
  EXPECT_EQ(s.blocks, 0);
  EXPECT_EQ(warnings(), 1u);
  EXPECT_TRUE(Files().empty());
}

TEST_F(DiskStoreTest, ShortWritesStillWriteWholeBlocks) {
  testing::FaultyBlockFileIo io;
  io.set_max_write(7);  // every write(2) writes at most 7 bytes
  io_ = &io;
  auto store = Open();
  Put(*store, 1);
  Put(*store, 2);
  EXPECT_GT(io.short_writes(), 0);
  EXPECT_TRUE(LoadsRight(*store, 1));
  EXPECT_TRUE(LoadsRight(*store, 2));
  EXPECT_EQ(fs::file_size(store->BlockPath(Key(1))), kFileBytes);
  EXPECT_EQ(store->stats().write_failures, 0);
  EXPECT_EQ(warnings(), 0u);
}

// A file that accepts at most `step` bytes per write (0: none), into `sink`.
class StepFile : public WritableBlockFile {
 public:
  StepFile(size_t step, std::vector<uint8_t>* sink) : step_(step), sink_(sink) {}
  StatusOr<size_t> Write(std::span<const uint8_t> data) override {
    const size_t n = std::min(step_, data.size());
    sink_->insert(sink_->end(), data.begin(), data.begin() + static_cast<ptrdiff_t>(n));
    return n;
  }
  Status Close() override { return Status::Ok(); }

 private:
  size_t step_;
  std::vector<uint8_t>* sink_;
};

TEST(BlockFileIoTest, WriteAllContinuesShortWritesAndStopsWhenNothingIsWritten) {
  std::vector<uint8_t> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> sink;
  StepFile three(3, &sink);
  EXPECT_TRUE(WriteAll(three, data).ok());
  EXPECT_EQ(sink, data);
  StepFile stuck(0, &sink);
  const Status status = WriteAll(stuck, data);
  EXPECT_EQ(status.code(), StatusCode::kIoError) << status.ToString();
  EXPECT_TRUE(WriteAll(stuck, {}).ok());
}

TEST(BlockFileIoTest, PosixWritesRenamesAndReportsFailures) {
  const fs::path dir =
      fs::temp_directory_path() / ("radixlm_block_file_io_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  BlockFileIo& io = PosixBlockFileIo();
  ASSERT_TRUE(io.CreateDirectories((dir / "a" / "b").string()).ok());
  const std::string tmp = (dir / "a" / "b" / "tmp").string();
  const std::string final_path = (dir / "a" / "b" / "final").string();
  {
    auto file = io.Create(tmp);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5};
    EXPECT_TRUE(WriteAll(**file, bytes).ok());
    EXPECT_TRUE((*file)->Close().ok());
    EXPECT_FALSE((*file)->Close().ok()) << "closed once";
  }
  ASSERT_TRUE(io.Rename(tmp, final_path).ok());
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_EQ(fs::file_size(final_path), 5u);
  io.Remove(final_path);
  io.Remove(final_path);  // a missing file is no error
  EXPECT_FALSE(fs::exists(final_path));
  // A missing directory is an I/O error, not a full disk.
  auto missing = io.Create((dir / "nowhere" / "x").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError) << missing.status().ToString();
  EXPECT_FALSE(io.Rename((dir / "nowhere" / "x").string(), final_path).ok());
  fs::remove_all(dir);
  // /dev/full fails every write with ENOSPC: the real full-disk error, without privileges.
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  auto full = io.Create("/dev/full");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const std::vector<uint8_t> bytes(64, 1);
  const Status status = WriteAll(**full, bytes);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
  EXPECT_NE(status.message().find("disk full"), std::string::npos) << status.ToString();
}

TEST(FaultyBlockFileIoTest, FillsUpAfterItsBudget) {
  const fs::path path =
      fs::temp_directory_path() / ("radixlm_faulty_io_test_" + std::to_string(::getpid()));
  testing::FaultyBlockFileIo io(10);
  auto file = io.Create(path.string());
  ASSERT_TRUE(file.ok());
  const std::vector<uint8_t> bytes(8, 9);
  auto n = (*file)->Write(bytes);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 8u);
  n = (*file)->Write(bytes);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u) << "what is left of the budget";
  n = (*file)->Write(bytes);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE((*file)->Close().ok());
  EXPECT_EQ(fs::file_size(path), 10u) << "the bytes written are really there";
  EXPECT_EQ(io.creates(), 1);
  EXPECT_EQ(io.failed_writes(), 1);
  EXPECT_EQ(io.short_writes(), 1);
  fs::remove(path);
}

// The real file system, with Create held until the test opens the gate (a write in progress).
class GatedIo : public BlockFileIo {
 public:
  void WaitUntilEntered() {
    MutexLock lock(&mu_);
    while (!entered_) lock.Wait(cv_);
  }
  void Open() {
    {
      MutexLock lock(&mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  StatusOr<std::unique_ptr<WritableBlockFile>> Create(const std::string& path) override {
    {
      MutexLock lock(&mu_);
      entered_ = true;
      cv_.notify_all();
      while (!open_) lock.Wait(cv_);
    }
    return PosixBlockFileIo().Create(path);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    return PosixBlockFileIo().Rename(from, to);
  }
  void Remove(const std::string& path) override { PosixBlockFileIo().Remove(path); }
  Status CreateDirectories(const std::string& dir) override {
    return PosixBlockFileIo().CreateDirectories(dir);
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  bool entered_ GUARDED_BY(mu_) = false;
  bool open_ GUARDED_BY(mu_) = false;
};

TEST_F(DiskStoreTest, ClearDeletesThisModelsBlocksOnly) {
  auto other = Open(1 << 20, /*model=*/8);
  Put(*other, 1);
  auto store = Open();
  Put(*store, 1);
  Put(*store, 2);
  EXPECT_EQ(store->Clear(), 2);
  for (int32_t i : {1, 2}) {
    EXPECT_FALSE(store->Contains(Key(i)));
    EXPECT_FALSE(fs::exists(store->BlockPath(Key(i))));
  }
  EXPECT_EQ(store->stats().blocks, 0);
  EXPECT_EQ(store->stats().bytes_on_disk, 0);
  EXPECT_TRUE(other->Contains(Key(1)));
  EXPECT_TRUE(fs::exists(other->BlockPath(Key(1))));
  Put(*store, 3);  // writing goes on
  EXPECT_TRUE(LoadsRight(*store, 3));
  EXPECT_EQ(warnings(), 0u);
}

TEST_F(DiskStoreTest, ClearDropsQueuedWritesAndTheOneInProgress) {
  GatedIo io;
  io_ = &io;
  auto store = Open();
  ASSERT_TRUE(store->EnqueueWrite(Key(1), Tokens(1), Payload(1)));
  io.WaitUntilEntered();  // the writer is inside the write of block 1
  ASSERT_TRUE(store->EnqueueWrite(Key(2), Tokens(2), Payload(2)));
  EXPECT_EQ(store->Clear(), 2);
  EXPECT_FALSE(store->Contains(Key(2)));
  io.Open();
  store->Flush();
  EXPECT_FALSE(store->Contains(Key(1)));
  EXPECT_TRUE(Files().empty()) << "the block written during the clear is deleted";
  EXPECT_EQ(store->stats().blocks, 0);
  Put(*store, 1);
  EXPECT_TRUE(LoadsRight(*store, 1));
}

TEST_F(DiskStoreTest, ClearEndsAWritePause) {
  testing::FaultyBlockFileIo io(0);
  io_ = &io;
  auto store = Open();
  Put(*store, 1);  // the disk is full: writes pause
  EXPECT_FALSE(store->AcceptsWrite(Key(2)));
  io.set_budget(1 << 20);
  store->Clear();  // frees space
  EXPECT_TRUE(store->AcceptsWrite(Key(2)));
  Put(*store, 2);
  EXPECT_TRUE(LoadsRight(*store, 2));
}

}  // namespace
}  // namespace radixlm
