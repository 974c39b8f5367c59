#include "gguf/gguf_describe.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

namespace radixlm::gguf {

namespace {

std::string ShapeString(const TensorInfo& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string PadRight(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

void AppendTensorTable(std::string& out, const GgufFile& file) {
  size_t name_width = 4;
  size_t shape_width = 5;
  for (const TensorInfo& t : file.tensors()) {
    name_width = std::max(name_width, t.name.size());
    shape_width = std::max(shape_width, ShapeString(t).size());
  }
  out += "tensors:\n  " + PadRight("NAME", name_width) + "  TYPE   " +
         PadRight("SHAPE", shape_width) + "  BYTES\n";
  for (const TensorInfo& t : file.tensors()) {
    out += "  " + PadRight(t.name, name_width) + "  " +
           PadRight(std::string(GgmlTypeName(t.type)), 5) + "  " +
           PadRight(ShapeString(t), shape_width) + "  " + std::to_string(t.size_bytes) + "\n";
  }
}

void AppendSummary(std::string& out, const GgufFile& file) {
  uint64_t total = 0;
  std::map<uint32_t, size_t> by_type;  // ordered by type id
  for (const TensorInfo& t : file.tensors()) {
    total += t.size_bytes;
    ++by_type[static_cast<uint32_t>(t.type)];
  }
  std::string types;
  for (const auto& [id, count] : by_type) {
    if (!types.empty()) types += ", ";
    types += std::string(GgmlTypeName(static_cast<GgmlType>(id))) + " x" + std::to_string(count);
  }
  if (types.empty()) types = "none";
  out += "summary: " + std::to_string(file.tensors().size()) + " tensors, " +
         std::to_string(total) + " bytes (" + HumanBytes(total) + "); types: " + types +
         "; blocks: " + DescribeBlockCount(file) + "\n";
}

}  // namespace

std::string DescribeBlockCount(const GgufFile& file) {
  StatusOr<std::string> arch = file.GetString("general.architecture");
  if (!arch.ok()) return "unknown (" + arch.status().message() + ")";
  const std::string key = *arch + ".block_count";
  StatusOr<int64_t> blocks = file.GetInt(key);
  if (!blocks.ok()) return "unknown (" + blocks.status().message() + ")";
  return std::to_string(*blocks) + " (" + key + ")";
}

std::string DescribeGguf(const GgufFile& file, const DescribeOptions& options) {
  std::string out;
  out += "file: " + file.path() + "\n";
  out += "version: " + std::to_string(file.version()) + "\n";
  out += "alignment: " + std::to_string(file.alignment()) + "\n";
  out += "file size: " + std::to_string(file.file_size()) + " bytes (" +
         HumanBytes(file.file_size()) + ")\n";
  out += "data offset: " + std::to_string(file.data_offset()) + "\n";
  out += "tensor count: " + std::to_string(file.tensors().size()) + "\n";
  out += "metadata (" + std::to_string(file.metadata().size()) + " keys):\n";
  for (const auto& [key, value] : file.metadata()) {
    out += "  " + key + " = " + value.ToString(options.max_items, options.max_string_bytes) + "\n";
  }
  if (options.tensor_table) AppendTensorTable(out, file);
  AppendSummary(out, file);
  return out;
}

}  // namespace radixlm::gguf
