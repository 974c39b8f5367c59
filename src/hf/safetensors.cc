#include "hf/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "hf/json_file.h"

namespace radixlm::hf {
namespace {

struct DtypeName {
  std::string_view name;
  StDtype dtype;
  int bytes;
};
constexpr DtypeName kDtypes[] = {{"F64", StDtype::kF64, 8}, {"F32", StDtype::kF32, 4},
                                 {"F16", StDtype::kF16, 2}, {"BF16", StDtype::kBF16, 2},
                                 {"I64", StDtype::kI64, 8}, {"I32", StDtype::kI32, 4},
                                 {"I16", StDtype::kI16, 2}, {"I8", StDtype::kI8, 1},
                                 {"U8", StDtype::kU8, 1},   {"BOOL", StDtype::kBool, 1}};

// Header JSON larger than this is refused (the format's own reader caps it at 100 MB).
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

Status Bad(const std::string& path, const std::string& what) {
  return InvalidArgument(path + ": bad safetensors header: " + what);
}

}  // namespace

bool ParseStDtype(std::string_view name, StDtype* out) {
  for (const DtypeName& d : kDtypes) {
    if (d.name == name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

std::string_view StDtypeName(StDtype t) {
  for (const DtypeName& d : kDtypes) {
    if (d.dtype == t) return d.name;
  }
  return "?";
}

int StDtypeBytes(StDtype t) {
  for (const DtypeName& d : kDtypes) {
    if (d.dtype == t) return d.bytes;
  }
  return 0;
}

int64_t StTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'" + path + "' is not a regular file");
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* map = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    ::close(fd);
    if (map == MAP_FAILED) {
      return IoError("cannot mmap '" + path + "': " + std::strerror(map_errno));
    }
    file->base_ = static_cast<const uint8_t*>(map);
  } else {
    ::close(fd);
  }
  RADIXLM_RETURN_IF_ERROR(file->Parse());
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), size_);
}

Status SafetensorsFile::Parse() {
  if (size_ < 8) return Bad(path_, "file of " + std::to_string(size_) + " bytes has no header");
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | base_[i];
  if (header_bytes > size_ - 8 || header_bytes > kMaxHeaderBytes) {
    return Bad(path_, "header length " + std::to_string(header_bytes) + " exceeds the file (" +
                          std::to_string(size_) + " bytes)");
  }
  const char* text = reinterpret_cast<const char*>(base_ + 8);
  nlohmann::json header =
      nlohmann::json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Bad(path_, "not a JSON object");
  const uint64_t data_bytes = size_ - 8 - header_bytes;
  const uint8_t* data = base_ + 8 + header_bytes;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) return Bad(path_, "__metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (m.value().is_string()) metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string who = "tensor '" + name + "': ";
    if (!entry.is_object()) return Bad(path_, who + "not an object");
    StTensor t;
    t.name = name;
    t.file = path_;
    const auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) return Bad(path_, who + "no dtype");
    if (!ParseStDtype(dtype->get<std::string>(), &t.dtype)) {
      return Bad(path_, who + "unsupported dtype '" + dtype->get<std::string>() + "'");
    }
    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array() || shape->size() > 8) {
      return Bad(path_, who + "no shape (an array of at most 8 dimensions)");
    }
    uint64_t elements = 1;
    for (const nlohmann::json& d : *shape) {
      if (!d.is_number_unsigned())
        return Bad(path_, who + "a dimension is not a non-negative integer");
      const uint64_t v = d.get<uint64_t>();
      if (v > (uint64_t{1} << 40) || (v != 0 && elements > (uint64_t{1} << 48) / v)) {
        return Bad(path_, who + "shape too large");
      }
      elements *= v;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    const auto offsets = entry.find("data_offsets");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      return Bad(path_, who + "data_offsets is not [begin, end]");
    }
    const uint64_t begin = (*offsets)[0].get<uint64_t>();
    const uint64_t end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_bytes) {
      return Bad(path_, who + "data_offsets [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") outside the " + std::to_string(data_bytes) +
                            " data bytes");
    }
    if (end - begin != elements * static_cast<uint64_t>(StDtypeBytes(t.dtype))) {
      return Bad(path_, who + std::to_string(end - begin) + " bytes for " +
                            std::to_string(elements) + " " + dtype->get<std::string>() +
                            " elements");
    }
    t.data = data + begin;
    t.size_bytes = end - begin;
    tensors_.push_back(std::move(t));
  }
  std::vector<const StTensor*> order;
  for (const StTensor& t : tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const StTensor* a, const StTensor* b) { return a->data < b->data; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->data + order[i - 1]->size_bytes > order[i]->data) {
      return Bad(path_,
                 "tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap");
    }
  }
  return Status::Ok();
}

const StTensor* Checkpoint::Find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

Status Checkpoint::Add(std::unique_ptr<SafetensorsFile> file) {
  for (const StTensor& t : file->tensors()) {
    if (!index_.emplace(t.name, &t).second) {
      return InvalidArgument("tensor '" + t.name + "' is in both '" + index_[t.name]->file +
                             "' and '" + t.file + "'");
    }
    tensors_.push_back(&t);
  }
  files_.push_back(std::move(file));
  return Status::Ok();
}

StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& dir) {
  namespace fs = std::filesystem;
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  const std::string single = (fs::path(dir) / "model.safetensors").string();
  const std::string index_path = (fs::path(dir) / "model.safetensors.index.json").string();
  std::error_code ec;
  if (fs::is_regular_file(single, ec)) {
    RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(single));
    RADIXLM_RETURN_IF_ERROR(c->Add(std::move(file)));
    c->description_ = "model.safetensors";
    return c;
  }
  if (!fs::is_regular_file(index_path, ec)) {
    return NotFound(dir + ": no model.safetensors or model.safetensors.index.json");
  }
  RADIXLM_ASSIGN_OR_RETURN(nlohmann::json index, ReadJsonObject(index_path));
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) {
    return InvalidArgument(index_path + ": no \"weight_map\" object");
  }
  std::vector<std::string> shards;  // in order of first mention
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it.value().is_string()) {
      return InvalidArgument(index_path + ": weight_map[\"" + it.key() + "\"] is not a file name");
    }
    const std::string shard = it.value().get<std::string>();
    if (shard.find('/') != std::string::npos || shard.empty() || shard[0] == '.') {
      return InvalidArgument(index_path + ": shard name '" + shard +
                             "' is not a file in the folder");
    }
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
  }
  for (const std::string& shard : shards) {
    const std::string path = (fs::path(dir) / shard).string();
    if (!fs::is_regular_file(path, ec)) {
      return NotFound(index_path + " names shard '" + shard + "', which is missing");
    }
    RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(path));
    RADIXLM_RETURN_IF_ERROR(c->Add(std::move(file)));
  }
  for (auto it = map->begin(); it != map->end(); ++it) {
    const StTensor* t = c->Find(it.key());
    const std::string shard = it.value().get<std::string>();
    if (t == nullptr) {
      return InvalidArgument(index_path + ": tensor '" + it.key() + "' is not in '" + shard + "'");
    }
    if (fs::path(t->file).filename() != shard) {
      return InvalidArgument(index_path + ": tensor '" + it.key() + "' is in '" + t->file +
                             "', not in '" + shard + "'");
    }
  }
  c->description_ = "model.safetensors.index.json (" + std::to_string(shards.size()) + " shards)";
  return c;
}

}  // namespace radixlm::hf
