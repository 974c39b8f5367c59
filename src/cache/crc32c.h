// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every disk KV block
// (kv_block.h). A table-driven software implementation: a block of a few MB is checked in a few
// milliseconds, far below the cost of reading it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace radixlm {

// CRC-32C of data[0, size), continuing from `crc` (0 for a fresh checksum): Crc32c(b, Crc32c(a))
// equals the checksum of a followed by b. Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace radixlm
