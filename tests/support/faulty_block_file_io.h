// FaultyBlockFileIo: the real file system (PosixBlockFileIo) with a disk that fills up, for
// fault tests of the disk KV tier. After `budget` bytes written in all, a write writes what is
// left of the budget and the next one fails with ResourceExhausted ("No space left on
// device"), as write(2) does on a full disk; with max_write set, no write writes more than that
// (short writes, as on a pipe or an interrupted write). Bytes really reach the files, so a test
// sees what a failed write leaves behind. Thread-safe; counts what it was asked to do.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "cache/block_file_io.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace radixlm::testing {

class FaultyBlockFileIo : public BlockFileIo {
 public:
  explicit FaultyBlockFileIo(uint64_t budget = std::numeric_limits<uint64_t>::max())
      : budget_(budget) {}

  void set_budget(uint64_t bytes) {
    MutexLock lock(&mu_);
    budget_ = bytes;
  }
  void set_max_write(size_t bytes) {
    MutexLock lock(&mu_);
    max_write_ = bytes;
  }
  int64_t creates() const {
    MutexLock lock(&mu_);
    return creates_;
  }
  int64_t failed_writes() const {  // writes that returned the full-disk error
    MutexLock lock(&mu_);
    return failed_writes_;
  }
  int64_t short_writes() const {  // writes that wrote less than asked
    MutexLock lock(&mu_);
    return short_writes_;
  }

  StatusOr<std::unique_ptr<WritableBlockFile>> Create(const std::string& path) override {
    {
      MutexLock lock(&mu_);
      ++creates_;
    }
    StatusOr<std::unique_ptr<WritableBlockFile>> file = PosixBlockFileIo().Create(path);
    if (!file.ok()) return file.status();
    return std::unique_ptr<WritableBlockFile>(new File(this, std::move(file).value()));
  }
  Status Rename(const std::string& from, const std::string& to) override {
    return PosixBlockFileIo().Rename(from, to);
  }
  void Remove(const std::string& path) override { PosixBlockFileIo().Remove(path); }
  Status CreateDirectories(const std::string& dir) override {
    return PosixBlockFileIo().CreateDirectories(dir);
  }

 private:
  class File : public WritableBlockFile {
   public:
    File(FaultyBlockFileIo* io, std::unique_ptr<WritableBlockFile> inner)
        : io_(io), inner_(std::move(inner)) {}
    StatusOr<size_t> Write(std::span<const uint8_t> data) override {
      const size_t n = io_->Take(data.size());
      if (n == 0 && !data.empty()) return ResourceExhausted("No space left on device");
      StatusOr<size_t> written = inner_->Write(data.first(n));
      if (written.ok()) io_->Return(n - *written);
      return written;
    }
    Status Close() override { return inner_->Close(); }

   private:
    FaultyBlockFileIo* io_;
    std::unique_ptr<WritableBlockFile> inner_;
  };

  // Bytes a write of `want` may write now (0: the disk is full).
  size_t Take(size_t want) {
    MutexLock lock(&mu_);
    const size_t n = static_cast<size_t>(std::min<uint64_t>({want, budget_, max_write_}));
    budget_ -= n;
    if (n == 0 && want > 0) ++failed_writes_;
    if (n > 0 && n < want) ++short_writes_;
    return n;
  }
  void Return(size_t unused) {
    MutexLock lock(&mu_);
    budget_ += unused;
  }

  mutable Mutex mu_;
  uint64_t budget_ GUARDED_BY(mu_);
  uint64_t max_write_ GUARDED_BY(mu_) = std::numeric_limits<uint64_t>::max();
  int64_t creates_ GUARDED_BY(mu_) = 0;
  int64_t failed_writes_ GUARDED_BY(mu_) = 0;
  int64_t short_writes_ GUARDED_BY(mu_) = 0;
};

}  // namespace radixlm::testing
