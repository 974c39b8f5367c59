// `radixlm inspect FILE`: prints a GGUF file's header, metadata, tensor table and a summary.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/commands.h"
#include "gguf/gguf_file.h"
#include "util/model_path.h"

namespace radixlm::apps {
namespace {

struct InspectOptions {
  std::string file = "default";
  size_t max_items = 8;
  size_t max_string_bytes = 160;
  bool no_tensors = false;
};

std::string ShapeString(const gguf::TensorInfo& t) {
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

// "18 (gemma3.block_count)", or why the block count is unknown.
std::string BlockCountText(const gguf::GgufFile& file) {
  StatusOr<std::string> arch = file.GetString("general.architecture");
  if (!arch.ok()) return "unknown (" + arch.status().message() + ")";
  const std::string key = *arch + ".block_count";
  StatusOr<int64_t> blocks = file.GetInt(key);
  if (!blocks.ok()) return "unknown (" + blocks.status().message() + ")";
  return std::to_string(*blocks) + " (" + key + ")";
}

void PrintTensors(const gguf::GgufFile& file) {
  size_t name_width = 4;
  size_t shape_width = 5;
  for (const gguf::TensorInfo& t : file.tensors()) {
    name_width = std::max(name_width, t.name.size());
    shape_width = std::max(shape_width, ShapeString(t).size());
  }
  const int nw = static_cast<int>(name_width);
  const int sw = static_cast<int>(shape_width);
  std::printf("tensors:\n  %-*s  %-5s  %-*s  %s\n", nw, "NAME", "TYPE", sw, "SHAPE", "BYTES");
  for (const gguf::TensorInfo& t : file.tensors()) {
    std::printf("  %-*s  %-5s  %-*s  %llu\n", nw, t.name.c_str(),
                std::string(gguf::GgmlTypeName(t.type)).c_str(), sw, ShapeString(t).c_str(),
                static_cast<unsigned long long>(t.size_bytes));
  }
}

void PrintSummary(const gguf::GgufFile& file) {
  uint64_t total = 0;
  std::map<uint32_t, size_t> by_type;  // ordered by type id
  for (const gguf::TensorInfo& t : file.tensors()) {
    total += t.size_bytes;
    ++by_type[static_cast<uint32_t>(t.type)];
  }
  std::string types;
  for (const auto& [id, count] : by_type) {
    if (!types.empty()) types += ", ";
    types += std::string(gguf::GgmlTypeName(static_cast<gguf::GgmlType>(id))) + " x" +
             std::to_string(count);
  }
  if (types.empty()) types = "none";
  std::printf("summary: %zu tensors, %llu bytes (%s); types: %s; blocks: %s\n",
              file.tensors().size(), static_cast<unsigned long long>(total),
              HumanBytes(total).c_str(), types.c_str(), BlockCountText(file).c_str());
}

void RunInspect(const InspectOptions& opts) {
  StatusOr<std::string> path = ResolveModelPath(opts.file);
  if (!path.ok()) {
    std::fprintf(stderr, "inspect: %s\n", path.status().ToString().c_str());
    SetExitCode(1);
    return;
  }
  StatusOr<std::unique_ptr<gguf::GgufFile>> opened = gguf::GgufFile::Open(*path);
  if (!opened.ok()) {
    std::fprintf(stderr, "inspect: %s\n", opened.status().ToString().c_str());
    SetExitCode(1);
    return;
  }
  const gguf::GgufFile& file = **opened;
  std::printf("file: %s\n", file.path().c_str());
  std::printf("version: %u\n", file.version());
  std::printf("alignment: %llu\n", static_cast<unsigned long long>(file.alignment()));
  std::printf("file size: %zu bytes (%s)\n", file.file_size(),
              HumanBytes(file.file_size()).c_str());
  std::printf("data offset: %llu\n", static_cast<unsigned long long>(file.data_offset()));
  std::printf("tensor count: %zu\n", file.tensors().size());
  std::printf("metadata (%zu keys):\n", file.metadata().size());
  for (const auto& [key, value] : file.metadata()) {
    std::printf("  %s = %s\n", key.c_str(),
                value.ToString(opts.max_items, opts.max_string_bytes).c_str());
  }
  if (!opts.no_tensors) PrintTensors(file);
  PrintSummary(file);
}

const bool kRegistered = RegisterCommand("inspect", [](CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Print a GGUF file's header, metadata, tensors and a summary");
  cmd->add_option("file", opts->file, "GGUF file, or \"default\" for the default model")
      ->capture_default_str();
  cmd->add_option("--max-items", opts->max_items, "Array items shown before abbreviating")
      ->capture_default_str();
  cmd->add_option("--max-string", opts->max_string_bytes,
                  "String bytes shown before abbreviating")
      ->capture_default_str();
  cmd->add_flag("--no-tensors", opts->no_tensors, "Omit the tensor table");
  cmd->callback([opts] { RunInspect(*opts); });
});

}  // namespace
}  // namespace radixlm::apps
