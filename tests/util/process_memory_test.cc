// ResidentSetBytes: the process's resident set, which grows as memory is first written.
#include "util/process_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace radixlm {
namespace {

TEST(ProcessMemoryTest, ResidentSetGrowsWithWrittenMemory) {
  const int64_t before = ResidentSetBytes();
  ASSERT_GT(before, 0);
  constexpr size_t kBytes = 64 << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);  // uninitialized: no pages yet
  std::memset(block.get(), 1, kBytes);
  asm volatile("" : : "r"(block.get()) : "memory");  // the writes happen before the count
  const int64_t after = ResidentSetBytes();
  EXPECT_GE(after - before, static_cast<int64_t>(kBytes) / 2) << before << " -> " << after;
  EXPECT_EQ(block[kBytes - 1], 1);  // keeps the writes
}

}  // namespace
}  // namespace radixlm
