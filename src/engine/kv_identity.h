// KvIdentity: which model (and KV layout) computed a block of KV, for the disk tier
// (--hicache-storage-backend file): blocks written under another identity are never used.
#pragma once

#include <cstdint>

#include "gguf/gguf_file.h"
#include "kernels/attention.h"

namespace radixlm {

// FNV-1a over the file size, every metadata key and value, every tensor's name, type, shape and
// first 256 bytes of data (models with the same layout but other weights differ), the KV dtype,
// the disk block size (tokens per block) and the version of the linear-state layout.
uint64_t KvIdentity(const gguf::GgufFile& file, int32_t block_tokens, kernels::KvDtype dtype);

}  // namespace radixlm
