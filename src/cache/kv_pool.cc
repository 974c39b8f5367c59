#include "cache/kv_pool.h"

#include <algorithm>
#include <limits>
#include <string>

#include "util/check.h"

namespace radixlm {

StatusOr<KvPool> KvPool::Create(const KvPoolConfig& config) {
  if (config.page_size < 1) {
    return InvalidArgument("KvPool: page_size must be >= 1, got " +
                           std::to_string(config.page_size));
  }
  const int64_t num_pages = config.size / config.page_size;
  if (num_pages < 1) {
    return InvalidArgument("KvPool: size " + std::to_string(config.size) +
                           " holds no page of size " + std::to_string(config.page_size));
  }
  if ((num_pages + 1) * config.page_size > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("KvPool: size " + std::to_string(config.size) +
                           " exceeds int32 slot indices");
  }
  const int64_t swa_num_pages = config.swa_size / config.page_size;
  if (config.swa_size < 0 || (config.swa_size > 0 && swa_num_pages < 1)) {
    return InvalidArgument("KvPool: swa_size " + std::to_string(config.swa_size) +
                           " holds no page of size " + std::to_string(config.page_size));
  }
  if ((swa_num_pages + 1) * config.page_size > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("KvPool: swa_size " + std::to_string(config.swa_size) +
                           " exceeds int32 slot indices");
  }
  return KvPool(num_pages, config.page_size, swa_num_pages);
}

KvPool::KvPool(int64_t num_pages, int32_t page_size, int64_t swa_num_pages)
    : num_pages_(num_pages), page_size_(page_size), swa_num_pages_(swa_num_pages) {
  Reset();
}

void KvPool::Reset() {
  // Descending, so that pages 1, 2, 3, ... are handed out first (deterministic, low indices).
  free_pages_.resize(num_pages_);
  for (int64_t i = 0; i < num_pages_; ++i) free_pages_[i] = static_cast<int32_t>(num_pages_ - i);
  page_is_free_.assign(num_pages_ + 1, 1);
  page_is_free_[0] = 0;
  if (!has_swa()) return;
  swa_free_pages_.resize(swa_num_pages_);
  for (int64_t i = 0; i < swa_num_pages_; ++i) {
    swa_free_pages_[i] = static_cast<int32_t>(swa_num_pages_ - i);
  }
  swa_page_of_.assign(num_pages_ + 1, 0);
  swa_slot_map_.assign(storage_slots(), kPaddingSlot);
}

int32_t KvPool::TakePage() {
  RADIXLM_CHECK(!free_pages_.empty()) << "KvPool: no free page to take";
  const int32_t page = free_pages_.back();
  free_pages_.pop_back();
  page_is_free_[page] = 0;
  if (has_swa()) {
    RADIXLM_CHECK(!swa_free_pages_.empty()) << "KvPool: no free SWA page to take";
    const int32_t swa_page = swa_free_pages_.back();
    swa_free_pages_.pop_back();
    swa_page_of_[page] = swa_page;
    for (int32_t i = 0; i < page_size_; ++i) {
      swa_slot_map_[page * page_size_ + i] = swa_page * page_size_ + i;
    }
  }
  return page;
}

void KvPool::ReleaseSwaPage(int32_t page) {
  const int32_t swa_page = swa_page_of_[page];
  if (swa_page == 0) return;
  swa_free_pages_.push_back(swa_page);
  swa_page_of_[page] = 0;
  for (int32_t i = 0; i < page_size_; ++i) swa_slot_map_[page * page_size_ + i] = kPaddingSlot;
}

void KvPool::AppendPageSlots(int32_t page, int64_t count, std::vector<int32_t>* out) const {
  const int32_t first = page * page_size_;
  for (int64_t i = 0; i < count; ++i) out->push_back(first + static_cast<int32_t>(i));
}

std::optional<std::vector<int32_t>> KvPool::Allocate(int64_t n_tokens) {
  RADIXLM_CHECK_GE(n_tokens, 0);
  const int64_t pages = (n_tokens + page_size_ - 1) / page_size_;
  if (pages > available_pages() || (has_swa() && pages > swa_available_pages())) {
    return std::nullopt;
  }
  std::vector<int32_t> slots;
  slots.reserve(n_tokens);
  int64_t remaining = n_tokens;
  for (int64_t p = 0; p < pages; ++p) {
    const int64_t take = std::min<int64_t>(remaining, page_size_);
    AppendPageSlots(TakePage(), take, &slots);
    remaining -= take;
  }
  return slots;
}

int64_t KvPool::PagesNeededForExtend(int32_t last_slot, int64_t n_tokens) const {
  int64_t in_page = 0;  // unused slots left in last_slot's page
  if (last_slot >= 0) in_page = page_size_ - 1 - last_slot % page_size_;
  const int64_t fresh = std::max<int64_t>(0, n_tokens - in_page);
  return (fresh + page_size_ - 1) / page_size_;
}

std::optional<std::vector<int32_t>> KvPool::AllocateExtend(int32_t last_slot, int64_t n_tokens) {
  RADIXLM_CHECK_GE(n_tokens, 0);
  if (last_slot >= 0) {
    RADIXLM_CHECK(last_slot >= page_size_ && last_slot < storage_slots())
        << "KvPool::AllocateExtend: slot " << last_slot << " out of range";
    RADIXLM_CHECK(!page_is_free_[last_slot / page_size_])
        << "KvPool::AllocateExtend: slot " << last_slot << " is on a free page";
    RADIXLM_CHECK(HasSwa(last_slot))
        << "KvPool::AllocateExtend: slot " << last_slot << " has released its SWA page";
  }
  const int64_t pages = PagesNeededForExtend(last_slot, n_tokens);
  if (pages > available_pages() || (has_swa() && pages > swa_available_pages())) {
    return std::nullopt;
  }
  std::vector<int32_t> slots;
  slots.reserve(n_tokens);
  int32_t next = last_slot + 1;
  // Continue the partially used last page first.
  while (last_slot >= 0 && static_cast<int64_t>(slots.size()) < n_tokens &&
         next % page_size_ != 0) {
    slots.push_back(next++);
  }
  while (static_cast<int64_t>(slots.size()) < n_tokens) {
    const int64_t take = std::min<int64_t>(n_tokens - slots.size(), page_size_);
    AppendPageSlots(TakePage(), take, &slots);
  }
  return slots;
}

void KvPool::Free(std::span<const int32_t> slots) {
  int32_t previous_page = -1;
  for (const int32_t slot : slots) {
    const int32_t page = slot / page_size_;
    if (page_size_ > 1 && page == previous_page) continue;  // rest of a page freed just now
    previous_page = page;
    RADIXLM_CHECK(slot >= page_size_ && slot < storage_slots() && !page_is_free_[page])
        << "KvPool::Free: padding, out-of-range or already-free slot " << slot;
    page_is_free_[page] = 1;
    free_pages_.push_back(page);
    if (has_swa()) ReleaseSwaPage(page);
  }
}

void KvPool::FreeSwa(std::span<const int32_t> slots) {
  if (!has_swa()) return;
  int32_t previous_page = -1;
  for (const int32_t slot : slots) {
    const int32_t page = slot / page_size_;
    if (page == previous_page) continue;
    previous_page = page;
    RADIXLM_CHECK(slot >= page_size_ && slot < storage_slots() && !page_is_free_[page])
        << "KvPool::FreeSwa: padding, out-of-range or free slot " << slot;
    ReleaseSwaPage(page);
  }
}

void KvPool::MoveSwa(int32_t from, int32_t to) {
  if (!has_swa()) return;
  const int32_t from_page = from / page_size_;
  const int32_t to_page = to / page_size_;
  RADIXLM_CHECK(from >= page_size_ && from < storage_slots() && !page_is_free_[from_page] &&
                to >= page_size_ && to < storage_slots() && !page_is_free_[to_page])
      << "KvPool::MoveSwa: slots " << from << " -> " << to << " not both allocated";
  RADIXLM_CHECK(swa_page_of_[from_page] != 0 && swa_page_of_[to_page] == 0)
      << "KvPool::MoveSwa: needs an SWA page at " << from << " and none at " << to;
  const int32_t swa_page = swa_page_of_[from_page];
  swa_page_of_[from_page] = 0;
  swa_page_of_[to_page] = swa_page;
  for (int32_t i = 0; i < page_size_; ++i) {
    swa_slot_map_[from_page * page_size_ + i] = kPaddingSlot;
    swa_slot_map_[to_page * page_size_ + i] = swa_page * page_size_ + i;
  }
}

bool KvPool::HasSwa(int32_t slot) const {
  if (slot < page_size_ || slot >= storage_slots()) return false;
  if (!has_swa()) return page_is_free_[slot / page_size_] == 0;
  return swa_page_of_[slot / page_size_] != 0;
}

bool KvPool::IsSlotFree(int32_t slot) const {
  if (slot < page_size_ || slot >= storage_slots()) return false;
  return page_is_free_[slot / page_size_] != 0;
}

Status KvPool::CheckInvariants() const {
  if (page_is_free_[0]) return Internal("KvPool: padding page marked free");
  std::vector<uint8_t> listed(num_pages_ + 1, 0);
  for (const int32_t page : free_pages_) {
    if (page < 1 || page > num_pages_) {
      return Internal("KvPool: free list holds bad page " + std::to_string(page));
    }
    if (listed[page]) return Internal("KvPool: page " + std::to_string(page) + " listed twice");
    listed[page] = 1;
    if (!page_is_free_[page]) {
      return Internal("KvPool: listed page " + std::to_string(page) + " not marked free");
    }
  }
  int64_t marked = 0;
  for (const uint8_t f : page_is_free_) marked += f;
  if (marked != available_pages()) {
    return Internal("KvPool: " + std::to_string(marked) + " pages marked free but " +
                    std::to_string(available_pages()) + " listed");
  }
  if (!has_swa()) return Status::Ok();
  // Every SWA page is either free (listed once) or held by exactly one allocated full page.
  std::vector<uint8_t> swa_seen(swa_num_pages_ + 1, 0);
  for (const int32_t sp : swa_free_pages_) {
    if (sp < 1 || sp > swa_num_pages_ || swa_seen[sp]) {
      return Internal("KvPool: SWA free list holds bad or repeated page " + std::to_string(sp));
    }
    swa_seen[sp] = 1;
  }
  for (int64_t page = 1; page <= num_pages_; ++page) {
    const int32_t sp = swa_page_of_[page];
    if (sp == 0) continue;
    if (page_is_free_[page]) {
      return Internal("KvPool: free page " + std::to_string(page) + " holds an SWA page");
    }
    if (sp > swa_num_pages_ || swa_seen[sp]) {
      return Internal("KvPool: SWA page " + std::to_string(sp) + " owned twice or also free");
    }
    swa_seen[sp] = 1;
  }
  for (int64_t sp = 1; sp <= swa_num_pages_; ++sp) {
    if (!swa_seen[sp]) return Internal("KvPool: SWA page " + std::to_string(sp) + " leaked");
  }
  return Status::Ok();
}

}  // namespace radixlm
