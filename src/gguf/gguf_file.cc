// GgufFile: mapping the file and typed metadata lookups. Parsing is in gguf_file_parse.cc.
#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace radixlm::gguf {

int64_t TensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'" + path + "' is not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return InvalidArgument(path + ": truncated file: empty (0 bytes), not a GGUF file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  if (map == MAP_FAILED) {
    ::close(fd);
    return IoError("cannot mmap '" + path + "': " + std::strerror(map_errno));
  }
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  file->base_ = static_cast<const uint8_t*>(map);
  file->size_ = size;
  file->owns_mapping_ = true;
  file->fd_ = fd;  // for ReadBytes (the mapping holds its own reference)
  Status st_parse = file->Parse();
  if (!st_parse.ok()) return Status(st_parse.code(), path + ": " + st_parse.message());
  return file;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::FromBuffer(const uint8_t* data, size_t size) {
  static const uint8_t kEmpty[1] = {0};
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = "<buffer>";
  file->base_ = data != nullptr ? data : kEmpty;
  file->size_ = data != nullptr ? size : 0;
  RADIXLM_RETURN_IF_ERROR(file->Parse());
  return file;
}

GgufFile::~GgufFile() {
  if (owns_mapping_ && base_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(base_), size_);
  }
  if (fd_ >= 0) ::close(fd_);
}

Status GgufFile::ReadBytes(const void* at, size_t n, void* out) const {
  const auto start = reinterpret_cast<uintptr_t>(at);
  const auto map_start = reinterpret_cast<uintptr_t>(base_);
  if (start < map_start || n > size_ || start - map_start > size_ - n) {
    return InvalidArgument(path_ + ": a read outside the file's bytes");
  }
  if (fd_ < 0) {
    std::memcpy(out, at, n);
    return Status::Ok();
  }
  auto* dst = static_cast<uint8_t*>(out);
  auto offset = static_cast<off_t>(start - map_start);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, dst, n, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return IoError("cannot read '" + path_ + "': " +
                     (got < 0 ? std::string(std::strerror(errno)) : "unexpected end of file"));
    }
    dst += got;
    offset += got;
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

size_t GgufFile::ReleasePages(const void* begin, size_t bytes) const {
  if (!owns_mapping_ || base_ == nullptr || bytes == 0) return 0;
  const auto start = reinterpret_cast<uintptr_t>(begin);
  const auto map_start = reinterpret_cast<uintptr_t>(base_);
  if (start < map_start || bytes > size_ || start - map_start > size_ - bytes) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (start + page - 1) / page * page;  // the mapping is page-aligned
  const uintptr_t last = (start + bytes) / page * page;
  if (last <= first) return 0;
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

const Value* GgufFile::Find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

Status NotFoundKey(std::string_view key) {
  return NotFound("metadata key '" + std::string(key) + "' not found");
}

Status WrongType(std::string_view key, const Value& v, std::string_view expected) {
  return InvalidArgument("metadata key '" + std::string(key) + "' has type " +
                         std::string(ValueTypeName(v.type)) + ", expected " +
                         std::string(expected));
}

}  // namespace

StatusOr<std::string> GgufFile::GetString(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return NotFoundKey(key);
  if (!v->is_string()) return WrongType(key, *v, "string");
  return v->AsString();
}

StatusOr<int64_t> GgufFile::GetInt(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return NotFoundKey(key);
  if (!v->is_integer()) return WrongType(key, *v, "an integer");
  return v->AsInt();
}

StatusOr<double> GgufFile::GetFloat(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return NotFoundKey(key);
  if (!v->is_float() && !v->is_integer()) return WrongType(key, *v, "a number");
  return v->AsFloat();
}

StatusOr<bool> GgufFile::GetBool(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return NotFoundKey(key);
  if (!v->is_bool()) return WrongType(key, *v, "bool");
  return v->AsBool();
}

StatusOr<const Array*> GgufFile::GetArray(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return NotFoundKey(key);
  if (!v->is_array()) return WrongType(key, *v, "array");
  return &v->AsArray();
}

StatusOr<std::string> GgufFile::GetStringOr(std::string_view key, std::string def) const {
  if (!Has(key)) return def;
  return GetString(key);
}

StatusOr<int64_t> GgufFile::GetIntOr(std::string_view key, int64_t def) const {
  if (!Has(key)) return def;
  return GetInt(key);
}

StatusOr<double> GgufFile::GetFloatOr(std::string_view key, double def) const {
  if (!Has(key)) return def;
  return GetFloat(key);
}

StatusOr<bool> GgufFile::GetBoolOr(std::string_view key, bool def) const {
  if (!Has(key)) return def;
  return GetBool(key);
}

}  // namespace radixlm::gguf
