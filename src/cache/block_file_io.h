// BlockFileIo: the file operations the disk tier's writer performs (disk_store.h) — create a
// file, write it, close it, rename it into place, remove it — behind an interface, so that
// tests can make them fail the way a full disk does (ENOSPC after some bytes, short writes),
// which a real directory cannot be made to do on demand without privileges.
// PosixBlockFileIo() is the real one; tests/cache/faulty_block_file_io.h wraps it with faults.
//
// Errors: ResourceExhausted for a full disk or an exhausted quota (ENOSPC, EDQUOT), IoError
// for anything else; messages name the path and the system's reason. Implementations are
// thread-safe (the store's writer thread is the only caller today).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "util/status.h"

namespace radixlm {

// One file open for writing. Destroying it closes it if Close was not called.
class WritableBlockFile {
 public:
  virtual ~WritableBlockFile() = default;
  // Writes a prefix of `data`, as write(2) may: the count written (more than 0 when `data` is
  // not empty: a short count is not an error), or an error (nothing more can be written).
  virtual StatusOr<size_t> Write(std::span<const uint8_t> data) = 0;
  // Closes the file (at most once). An error means the bytes written may not all be there.
  virtual Status Close() = 0;
};

class BlockFileIo {
 public:
  virtual ~BlockFileIo() = default;
  // Creates `path` for writing, truncating a file already there.
  virtual StatusOr<std::unique_ptr<WritableBlockFile>> Create(const std::string& path) = 0;
  // Renames `from` to `to`, atomically replacing a file at `to`.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Removes the file at `path` if there is one (best effort: a leftover temporary file is
  // never read, and the next start deletes it).
  virtual void Remove(const std::string& path) = 0;
  // Creates the directory `dir` and its parents where missing.
  virtual Status CreateDirectories(const std::string& dir) = 0;
};

// Writes all of `data` to `file`, continuing after short writes; a write that makes no
// progress is an IoError (never a loop).
Status WriteAll(WritableBlockFile& file, std::span<const uint8_t> data);

// The real file system (open / write / close / rename / unlink). Stateless, lives forever.
BlockFileIo& PosixBlockFileIo();

}  // namespace radixlm
