// KvPool: the allocator of KV-cache token slots (SGLang's TokenToKVPoolAllocator and its paged
// variant). It hands out *indices* only; the KV tensors themselves are owned by the model
// module, which sizes them with storage_slots().
//
// Layout. Slots are grouped in pages of page_size contiguous slots: page p owns slots
// [p * page_size, (p + 1) * page_size). A page is the unit of allocation and of freeing, so with
// page_size == 1 this is a plain token-slot allocator.
//
// Padding page. Page 0 (slots [0, page_size)) is reserved and never handed out, as in SGLang:
// slot 0 is the padding slot that batched kernels may write garbage into (e.g. for padded
// tokens of a CUDA graph batch) and that unused rows of the request→token table point at.
// The usable capacity is therefore size() = num_pages * page_size slots, the storage has
// storage_slots() = (num_pages + 1) * page_size slots, and every allocated slot is ≥ page_size.
//
// Ownership in paged mode. All slots of a page belong to one owner (a request, or one node of
// the radix tree). Allocate / AllocateExtend may leave the tail of the last page unused; it is
// still owned by the caller and AllocateExtend continues filling it. Free releases every page
// that contains one of the given slots, so freeing the used part of a partial page frees it.
//
// Sliding-window layers (SGLang's SWATokenToKVPoolAllocator). With swa_size > 0 the pool has a
// second, smaller set of pages for the KV of sliding-window layers. Slot indices handed out are
// always full-layer slots; each allocated full page is paired with one SWA page, and
// swa_slot_map()[full_slot] names the SWA slot that holds the same token for windowed layers
// (kPaddingSlot when that page's SWA KV has been released). Allocation takes one page of each;
// Free releases both; FreeSwa releases only the SWA page of tokens no window can still see, so a
// prefix keeps its full-layer KV with a fraction of the memory. available() counts full pages,
// swa_available() SWA pages: a scheduler budgets both.
//
// A full pool is a scheduling event, not an error: allocation returns std::nullopt and changes
// nothing. Not thread-safe: only the scheduler thread touches the pool.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "util/status.h"

namespace radixlm {

struct KvPoolConfig {
  int64_t size = 0;       // usable token slots; rounded down to a multiple of page_size
  int32_t page_size = 1;  // slots per page, ≥ 1
  // Slots for sliding-window layers (rounded down to pages); 0: one layout for every layer.
  int64_t swa_size = 0;
};

class KvPool {
 public:
  static constexpr int32_t kPaddingSlot = 0;

  // InvalidArgument when page_size < 1, size < page_size, swa_size is negative or below one
  // page, or the storage would not fit int32.
  static StatusOr<KvPool> Create(const KvPoolConfig& config);

  // n_tokens fresh slots taken from ceil(n_tokens / page_size) whole free pages, in page order
  // (slot i of the result is page_k * page_size + i % page_size). nullopt when there are not
  // enough free pages (of either kind); the pool is then unchanged. n_tokens == 0 gives an
  // empty vector.
  std::optional<std::vector<int32_t>> Allocate(int64_t n_tokens);

  // n_tokens more slots for a request whose last allocated slot is last_slot (-1 when it has
  // none yet): first the unused rest of last_slot's page (slots last_slot+1, ...), then whole
  // new pages. The caller must own last_slot's page and must not have used the slots after
  // last_slot. nullopt (pool unchanged) when the new pages are not available. With an SWA
  // pool, last_slot's page must still hold its SWA page.
  std::optional<std::vector<int32_t>> AllocateExtend(int32_t last_slot, int64_t n_tokens);

  // Free pages AllocateExtend(last_slot, n_tokens) would need (for budgeting a whole batch
  // before allocating any of it).
  int64_t PagesNeededForExtend(int32_t last_slot, int64_t n_tokens) const;

  // Returns to the pool every page holding one of `slots`. Slots of one page must appear
  // consecutively (as they do in a request row or a tree node). Freeing the padding page, a slot
  // out of range or an already-free page is a caller bug that would hand one page to two owners:
  // it aborts (RADIXLM_CHECK), in every build.
  void Free(std::span<const int32_t> slots);

  // Releases the SWA page of every page holding one of `slots` (same ordering rule as Free);
  // pages whose SWA page is already released are skipped. The full pages stay allocated.
  // No-op without an SWA pool.
  void FreeSwa(std::span<const int32_t> slots);

  // Moves the SWA page of `from`'s page to `to`'s page (which must have none); `from`'s page is
  // left without. Both pages must be allocated. Used when the radix tree takes a request's
  // window KV for a node whose own was released (same tokens at the same positions).
  void MoveSwa(int32_t from, int32_t to);

  // Whether `slot`'s page holds an SWA page (always true for an allocated slot without an SWA
  // pool).
  bool HasSwa(int32_t slot) const;

  // Everything free again (SGLang's clear(), used by flush_cache).
  void Reset();

  int64_t available() const { return static_cast<int64_t>(free_pages_.size()) * page_size_; }
  int64_t available_pages() const { return static_cast<int64_t>(free_pages_.size()); }
  int64_t size() const { return num_pages_ * page_size_; }
  int64_t num_pages() const { return num_pages_; }
  int32_t page_size() const { return page_size_; }
  // Slots the KV storage must have (usable slots plus the padding page).
  int64_t storage_slots() const { return (num_pages_ + 1) * page_size_; }
  bool IsSlotFree(int32_t slot) const;

  bool has_swa() const { return swa_num_pages_ > 0; }
  int64_t swa_available() const {
    return static_cast<int64_t>(swa_free_pages_.size()) * page_size_;
  }
  int64_t swa_available_pages() const { return static_cast<int64_t>(swa_free_pages_.size()); }
  int64_t swa_size() const { return swa_num_pages_ * page_size_; }
  // Rows the SWA layers' storage must have (0 without an SWA pool).
  int64_t swa_storage_slots() const { return has_swa() ? (swa_num_pages_ + 1) * page_size_ : 0; }
  // [storage_slots()]: full slot → SWA slot (kPaddingSlot: none). Empty without an SWA pool.
  std::span<const int32_t> swa_slot_map() const { return swa_slot_map_; }

  // Free list and free bitmap agree, no page is listed twice.
  Status CheckInvariants() const;

 private:
  KvPool(int64_t num_pages, int32_t page_size, int64_t swa_num_pages);

  int32_t TakePage();                 // requires a free page (and a free SWA page with an SWA pool)
  void ReleaseSwaPage(int32_t page);  // page's SWA page back to the free list, if it has one
  void AppendPageSlots(int32_t page, int64_t count, std::vector<int32_t>* out) const;

  int64_t num_pages_;
  int32_t page_size_;
  std::vector<int32_t> free_pages_;    // stack; back() is handed out next
  std::vector<uint8_t> page_is_free_;  // [num_pages + 1]; page 0 (padding) is never free

  int64_t swa_num_pages_ = 0;
  std::vector<int32_t> swa_free_pages_;  // stack of free SWA pages (1..swa_num_pages)
  std::vector<int32_t> swa_page_of_;     // [num_pages + 1]: full page → SWA page (0: none)
  std::vector<int32_t> swa_slot_map_;    // [storage_slots()]: full slot → SWA slot (0: none)
};

}  // namespace radixlm
