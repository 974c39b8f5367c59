#include "cache/block_file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace radixlm {
namespace {

namespace fs = std::filesystem;

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(message + " (disk full)");
  return IoError(message);
}

class PosixWritableFile : public WritableBlockFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  PosixWritableFile(const PosixWritableFile&) = delete;
  PosixWritableFile& operator=(const PosixWritableFile&) = delete;

  StatusOr<size_t> Write(std::span<const uint8_t> data) override {
    if (fd_ < 0) return IoError("writing " + path_ + " after it was closed");
    for (;;) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus("cannot write", path_, errno);
    }
  }

  Status Close() override {
    if (fd_ < 0) return IoError("closing " + path_ + " twice");
    const int fd = fd_;
    fd_ = -1;
    // A close interrupted by a signal has closed the descriptor on Linux: never retried.
    if (::close(fd) != 0 && errno != EINTR) return ErrnoStatus("cannot close", path_, errno);
    return Status::Ok();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixIo : public BlockFileIo {
 public:
  StatusOr<std::unique_ptr<WritableBlockFile>> Create(const std::string& path) override {
    int fd = -1;
    do {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return ErrnoStatus("cannot create", path, errno);
    return std::unique_ptr<WritableBlockFile>(new PosixWritableFile(fd, path));
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoStatus("cannot rename " + from + " to", to, errno);
    }
    return Status::Ok();
  }

  void Remove(const std::string& path) override { ::unlink(path.c_str()); }

  Status CreateDirectories(const std::string& dir) override {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return ErrnoStatus("cannot create the directory", dir, ec.value());
    return Status::Ok();
  }
};

}  // namespace

Status WriteAll(WritableBlockFile& file, std::span<const uint8_t> data) {
  while (!data.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(const size_t n, file.Write(data));
    if (n == 0 || n > data.size()) {
      return IoError("a write of " + std::to_string(data.size()) + " bytes wrote " +
                     std::to_string(n));
    }
    data = data.subspan(n);
  }
  return Status::Ok();
}

BlockFileIo& PosixBlockFileIo() {
  static PosixIo* const io = new PosixIo();  // never destroyed: usable until exit
  return *io;
}

}  // namespace radixlm
