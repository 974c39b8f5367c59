// Human-readable description of a GGUF file (what `radixlm inspect` prints).
#pragma once

#include <cstddef>
#include <string>

#include "gguf/gguf_file.h"

namespace radixlm::gguf {

struct DescribeOptions {
  size_t max_items = 8;           // array items shown before "... (N items)"
  size_t max_string_bytes = 160;  // string bytes shown before "... (N bytes)"
  bool tensor_table = true;       // include the per-tensor table
};

// Multi-line text: header fields (file, version, alignment, sizes, tensor count), every
// metadata "key = value" in file order, the tensor table (name, type, shape, bytes) and a
// one-line "summary:" (total tensor bytes, tensor count per type, and the block count from
// `<general.architecture>.block_count`, or why it is unknown).
std::string DescribeGguf(const GgufFile& file, const DescribeOptions& options = {});

// "18 (gemma3.block_count)", or "unknown (<reason>)".
std::string DescribeBlockCount(const GgufFile& file);

}  // namespace radixlm::gguf
