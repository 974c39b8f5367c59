// AllocPacked (kernels/packed_alloc.cc): zeroed, 64-byte aligned buffers that do not overlap,
// whatever their sizes and the order they are freed in, from any thread; a freed chunk's bytes
// are handed out again zeroed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/packed_weights.h"

namespace radixlm::kernels {
namespace {

using Buffer = std::unique_ptr<uint8_t[], void (*)(void*)>;

bool AllZero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// Every live buffer is aligned, zero until written, and disjoint from the others: each is
// filled with its own byte and checked after all were written.
void CheckDisjoint(std::vector<std::pair<Buffer, size_t>>& live) {
  for (size_t i = 0; i < live.size(); ++i) {
    std::fill_n(live[i].first.get(), live[i].second, static_cast<uint8_t>(1 + i % 251));
  }
  for (size_t i = 0; i < live.size(); ++i) {
    const uint8_t want = static_cast<uint8_t>(1 + i % 251);
    const uint8_t* p = live[i].first.get();
    ASSERT_TRUE(std::all_of(p, p + live[i].second, [want](uint8_t b) { return b == want; }))
        << "buffer " << i << " of " << live[i].second << " bytes was overwritten";
  }
}

TEST(AllocPackedTest, ZeroedAlignedAndDisjointAcrossSizes) {
  // Sizes around the chunked path's edges (64 MiB pieces, 256 MiB chunks) and odd ones.
  const size_t sizes[] = {1,
                          63,
                          64,
                          65,
                          4096,
                          1 << 20,
                          3 << 20,
                          (17 << 20) + 5,
                          (64 << 20),
                          (64 << 20) + 1,
                          100,
                          2 << 20,
                          (60 << 20) + 3,
                          12345};
  std::vector<std::pair<Buffer, size_t>> live;
  for (size_t n : sizes) {
    Buffer b = AllocPacked(n);
    ASSERT_NE(b.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 64, 0u) << n << " bytes";
    EXPECT_TRUE(AllZero(b.get(), n)) << n << " bytes";
    live.emplace_back(std::move(b), n);
  }
  CheckDisjoint(live);
}

TEST(AllocPackedTest, FreedBytesComeBackZeroed) {
  // Fill a chunk's worth of buffers, free them in a scrambled order, and allocate again: the
  // new buffers (possibly the same bytes) are zero.
  std::mt19937 rng(7);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<Buffer, size_t>> live;
    for (int i = 0; i < 40; ++i) {
      const size_t n = 64 + rng() % (8 << 20);
      Buffer b = AllocPacked(n);
      ASSERT_TRUE(AllZero(b.get(), n)) << "round " << round << ", buffer " << i;
      live.emplace_back(std::move(b), n);
    }
    CheckDisjoint(live);
    std::shuffle(live.begin(), live.end(), rng);
    live.clear();
  }
}

TEST(AllocPackedTest, ThreadsAllocateAndFreeConcurrently) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      std::mt19937 rng(100 + t);
      std::vector<std::pair<Buffer, size_t>> live;
      for (int i = 0; i < 200; ++i) {
        const size_t n = 1 + rng() % (1 << 20);
        Buffer b = AllocPacked(n);
        if (!AllZero(b.get(), n)) ++failures[t];
        std::fill_n(b.get(), n, static_cast<uint8_t>(t + 1));
        live.emplace_back(std::move(b), n);
        if (rng() % 3 == 0) live.erase(live.begin() + static_cast<ptrdiff_t>(rng() % live.size()));
      }
      for (auto& [b, n] : live) {
        if (!std::all_of(b.get(), b.get() + n, [t](uint8_t x) { return x == t + 1; })) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace radixlm::kernels
