// AllocPacked (kernels/packed_weights.h): the buffers packed weights live in.
//
// Decode streams every weight once per token, and from 4 KiB pages that stream takes a TLB
// miss every 4 KiB. Transparent huge pages come in 2 MiB units, and most of a model's matrices
// are not whole multiples of 2 MiB (a 3B model's K and V projections are 1.7 MiB each): given
// a buffer each, their tails (or all of them) would sit on small pages, or a huge page each
// would back up to 2 MiB that nothing reads (gigabytes for a model of thousands of experts).
// So buffers up to kArenaMaxPiece are carved one after another, 64-byte aligned, from chunks of
// kArenaChunk bytes advised for huge pages: only the last 2 MiB page a chunk has handed out is
// partly unused. A chunk is aligned to its size, so a buffer finds its chunk's header (a count
// of the buffers handed out and not yet freed, plus the carver's own hold) by masking its
// address. Larger buffers get a mapping of their own, all of it advised for huge pages (its first
// line holds the mapping's size; at most one partly used 2 MiB page each).
//
// Under AddressSanitizer every buffer is an allocation of its own, so an overrun past a
// matrix's bytes is caught rather than read from its neighbour.
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/packed_weights.h"
#include "util/check.h"
#include "util/mutex.h"
#include "util/sanitizers.h"

namespace radixlm::kernels {
namespace {

constexpr size_t kArenaHugePage = size_t{2} << 20;
constexpr size_t kArenaChunk = size_t{256} << 20;  // a power of two
constexpr size_t kArenaMaxPiece = size_t{64} << 20;
constexpr size_t kArenaHeader = 64;  // the chunk's first line: its ArenaHeader

struct ArenaHeader {
  std::atomic<int64_t> holds;  // buffers not yet freed, + 1 while the carver uses the chunk
};

// A region of `bytes` aligned to `align` (a power of two >= the page size), advised for huge
// pages; nullptr when the mapping fails.
uint8_t* MapHugeAligned(size_t bytes, size_t align) {
  const size_t span = bytes + align;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + align - 1) & ~(align - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = aligned + bytes;
  if (start + span > end) munmap(reinterpret_cast<void*>(end), start + span - end);
  auto* p = reinterpret_cast<uint8_t*>(aligned);
#if defined(MADV_HUGEPAGE)
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return p;
}

ArenaHeader* ArenaHeaderOf(const void* p) {
  return reinterpret_cast<ArenaHeader*>(reinterpret_cast<uintptr_t>(p) & ~(kArenaChunk - 1));
}

void DropArenaHold(ArenaHeader* h) {
  if (h->holds.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    h->~ArenaHeader();
    munmap(h, kArenaChunk);
  }
}

void FreeArenaPiece(void* p) { DropArenaHold(ArenaHeaderOf(p)); }

// Large buffers: the mapping's size sits in the line before the buffer.
void FreeOwnMapping(void* p) {
  uint8_t* base = static_cast<uint8_t*>(p) - 64;
  size_t mapped = 0;
  std::memcpy(&mapped, base, sizeof(mapped));
  munmap(base, mapped);
}

class ArenaCarver {
 public:
  // A zeroed buffer of `bytes` (<= kArenaMaxPiece) from the current chunk, or nullptr.
  uint8_t* Take(size_t bytes) {
    const size_t need = (bytes + 63) / 64 * 64;
    MutexLock lock(&mu_);
    if (chunk_ != nullptr && chunk_->holds.load(std::memory_order_acquire) == 1) {
      used_ = kArenaHeader;  // every buffer of the chunk was freed: hand its bytes out again
    }
    if (chunk_ == nullptr || used_ + need > kArenaChunk) {
      uint8_t* fresh = MapHugeAligned(kArenaChunk, kArenaChunk);
      if (fresh == nullptr) return nullptr;
      if (chunk_ != nullptr) DropArenaHold(chunk_);
      chunk_ = new (fresh) ArenaHeader{1};
      used_ = kArenaHeader;
    }
    uint8_t* p = reinterpret_cast<uint8_t*>(chunk_) + used_;
    used_ += need;
    chunk_->holds.fetch_add(1, std::memory_order_relaxed);
    std::memset(p, 0, bytes);  // a reused chunk's bytes are not zero
    return p;
  }

 private:
  Mutex mu_;
  ArenaHeader* chunk_ GUARDED_BY(mu_) = nullptr;
  size_t used_ GUARDED_BY(mu_) = 0;
};

ArenaCarver& TheArenaCarver() {
  static auto* carver = new ArenaCarver;  // never destroyed: buffers may outlive static destructors
  return *carver;
}

}  // namespace

std::unique_ptr<uint8_t[], void (*)(void*)> AllocPacked(size_t bytes) {
  if constexpr (kAddressSanitizer) {
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    RADIXLM_CHECK(p != nullptr) << "out of memory packing " << bytes << " bytes of weights";
    std::memset(p, 0, bytes);
    return {p, std::free};
  }
  if (bytes <= kArenaMaxPiece) {
    uint8_t* p = TheArenaCarver().Take(bytes);
    RADIXLM_CHECK(p != nullptr) << "out of memory packing " << bytes << " bytes of weights";
    return {p, FreeArenaPiece};
  }
  const size_t mapped = (64 + bytes + kArenaHugePage - 1) / kArenaHugePage * kArenaHugePage;
  uint8_t* base = MapHugeAligned(mapped, kArenaHugePage);
  RADIXLM_CHECK(base != nullptr) << "out of memory packing " << bytes << " bytes of weights";
  std::memcpy(base, &mapped, sizeof(mapped));
  std::memset(base + 64, 0, bytes);  // zero already (fresh pages): backs them now, at load
  return {base + 64, FreeOwnMapping};
}

}  // namespace radixlm::kernels
