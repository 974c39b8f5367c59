#include "cache/kv_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cache/req_to_token.h"

namespace radixlm {
namespace {

using Slots = std::vector<int32_t>;

KvPool MakePool(int64_t size, int32_t page_size) {
  auto pool = KvPool::Create({.size = size, .page_size = page_size});
  EXPECT_TRUE(pool.ok()) << pool.status().ToString();
  return std::move(pool).value();
}

TEST(KvPoolTest, RejectsBadConfig) {
  EXPECT_EQ(KvPool::Create({.size = 16, .page_size = 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(KvPool::Create({.size = 3, .page_size = 4}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(KvPool::Create({.size = int64_t{1} << 40, .page_size = 1}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(KvPoolTest, TokenModeReservesPaddingSlotZero) {
  KvPool pool = MakePool(8, 1);
  EXPECT_EQ(pool.size(), 8);
  EXPECT_EQ(pool.storage_slots(), 9);
  EXPECT_EQ(pool.available(), 8);
  auto slots = pool.Allocate(3);
  ASSERT_TRUE(slots.has_value());
  EXPECT_EQ(*slots, (Slots{1, 2, 3}));
  EXPECT_EQ(pool.available(), 5);
  EXPECT_FALSE(pool.IsSlotFree(KvPool::kPaddingSlot));
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, ExhaustionReturnsNulloptAndChangesNothing) {
  KvPool pool = MakePool(8, 1);
  auto a = pool.Allocate(6);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(pool.Allocate(3).has_value());
  EXPECT_EQ(pool.available(), 2);
  auto b = pool.Allocate(2);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(pool.available(), 0);
  EXPECT_FALSE(pool.Allocate(1).has_value());
  auto empty = pool.Allocate(0);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  pool.Free(*a);
  pool.Free(*b);
  EXPECT_EQ(pool.available(), 8);
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, FreedSlotsAreReusedAndNeverDuplicated) {
  KvPool pool = MakePool(4, 1);
  auto a = pool.Allocate(4);
  ASSERT_TRUE(a.has_value());
  pool.Free(Slots{(*a)[1], (*a)[3]});
  EXPECT_TRUE(pool.IsSlotFree((*a)[1]));
  EXPECT_FALSE(pool.IsSlotFree((*a)[0]));
  auto b = pool.Allocate(2);
  ASSERT_TRUE(b.has_value());
  std::vector<int32_t> got = *b;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (Slots{(*a)[1], (*a)[3]}));
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

// A double free would hand one page to two owners: it aborts in every build.
TEST(KvPoolDeathTest, InvalidFreeAborts) {
  KvPool pool = MakePool(4, 1);
  auto a = pool.Allocate(2);
  ASSERT_TRUE(a.has_value());
  pool.Free(*a);
  EXPECT_DEATH(pool.Free(*a), "KvPool::Free: padding, out-of-range or already-free slot");
  auto b = pool.Allocate(1);
  ASSERT_TRUE(b.has_value());
  EXPECT_DEATH(pool.Free(Slots{(*b)[0], (*b)[0]}), "already-free slot");  // twice in one call
  EXPECT_DEATH(pool.Free(Slots{0}), "already-free slot 0");               // the padding page
  EXPECT_DEATH(pool.Free(Slots{5}), "already-free slot 5");               // out of range
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, PagedAllocationTakesWholeContiguousPages) {
  KvPool pool = MakePool(16, 4);  // pages 1..4; page 0 is padding
  EXPECT_EQ(pool.num_pages(), 4);
  EXPECT_EQ(pool.storage_slots(), 20);
  auto a = pool.Allocate(6);  // 2 pages, 6 slots used
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, (Slots{4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(pool.available(), 8);
  EXPECT_FALSE(pool.Allocate(9).has_value());  // 3 pages needed, 2 free
  auto b = pool.Allocate(8);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b, (Slots{12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(pool.available(), 0);
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, AllocateExtendFillsLastPageFirst) {
  KvPool pool = MakePool(16, 4);
  auto a = pool.Allocate(3);  // page 1: slots 4,5,6 used, 7 spare
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(pool.PagesNeededForExtend(6, 1), 0);
  EXPECT_EQ(pool.PagesNeededForExtend(6, 2), 1);
  auto b = pool.AllocateExtend(6, 1);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b, (Slots{7}));
  EXPECT_EQ(pool.available(), 12);     // no new page
  auto c = pool.AllocateExtend(7, 5);  // page full: new pages 2 and 3
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (Slots{8, 9, 10, 11, 12}));
  EXPECT_EQ(pool.available(), 4);
  auto d = pool.AllocateExtend(12, 3);  // continue page 3 in place
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, (Slots{13, 14, 15}));
  EXPECT_EQ(pool.available(), 4);
  EXPECT_FALSE(pool.AllocateExtend(15, 5).has_value());  // needs 2 pages, 1 free
  EXPECT_EQ(pool.available(), 4);
  auto fresh = pool.AllocateExtend(-1, 2);  // a request with no slots yet
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(*fresh, (Slots{16, 17}));
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, TokenModeExtendIsPlainAllocation) {
  KvPool pool = MakePool(4, 1);
  auto a = pool.AllocateExtend(-1, 2);
  ASSERT_TRUE(a.has_value());
  auto b = pool.AllocateExtend(a->back(), 2);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(pool.available(), 0);
  EXPECT_FALSE(pool.AllocateExtend(b->back(), 1).has_value());
}

TEST(KvPoolTest, PagedFreeReleasesWholePages) {
  KvPool pool = MakePool(16, 4);
  auto a = pool.Allocate(10);  // pages 1, 2, 3 (page 3 partly used)
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(pool.available(), 4);
  // Freeing the used tail of the partial page frees the page.
  pool.Free(std::span<const int32_t>(*a).subspan(8));
  EXPECT_EQ(pool.available(), 8);
  EXPECT_TRUE(pool.IsSlotFree(15));
  // Freeing the first two pages' slots frees exactly those pages.
  pool.Free(std::span<const int32_t>(*a).first(8));
  EXPECT_EQ(pool.available(), 16);
  EXPECT_TRUE(pool.CheckInvariants().ok());
}

TEST(KvPoolTest, ResetFreesEverything) {
  KvPool pool = MakePool(8, 2);
  ASSERT_TRUE(pool.Allocate(7).has_value());
  pool.Reset();
  EXPECT_EQ(pool.available(), 8);
  auto a = pool.Allocate(2);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, (Slots{2, 3}));
}

TEST(ReqToTokenTableTest, AllocateWriteFree) {
  auto table_or = ReqToTokenTable::Create({.max_requests = 3, .max_context_len = 8});
  ASSERT_TRUE(table_or.ok());
  ReqToTokenTable table = std::move(table_or).value();
  EXPECT_EQ(table.available(), 3);
  auto r0 = table.Allocate();
  ASSERT_TRUE(r0.has_value());
  EXPECT_EQ(*r0, 0);
  EXPECT_EQ(table.Row(*r0).size(), 8u);
  EXPECT_EQ(table.Row(*r0)[5], KvPool::kPaddingSlot);
  table.Write(*r0, 2, Slots{7, 8, 9});
  EXPECT_EQ(table.Row(*r0)[1], KvPool::kPaddingSlot);
  EXPECT_EQ(table.Row(*r0)[2], 7);
  EXPECT_EQ(table.Row(*r0)[4], 9);
  EXPECT_EQ(table.data()[*r0 * 8 + 3], 8);

  EXPECT_FALSE(table.Allocate(3).has_value());  // all-or-nothing
  EXPECT_EQ(table.available(), 2);
  auto rest = table.Allocate(2);
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(*rest, (Slots{1, 2}));
  EXPECT_FALSE(table.Allocate().has_value());
  table.Free(1);
  EXPECT_TRUE(table.IsRowFree(1));
  EXPECT_EQ(table.Allocate(), std::optional<int32_t>(1));
  table.Reset();
  EXPECT_EQ(table.available(), 3);
  EXPECT_EQ(table.Row(0)[2], KvPool::kPaddingSlot);
}

TEST(ReqToTokenTableTest, RejectsBadConfig) {
  EXPECT_FALSE(ReqToTokenTable::Create({.max_requests = 0, .max_context_len = 8}).ok());
  EXPECT_FALSE(ReqToTokenTable::Create({.max_requests = 4, .max_context_len = 0}).ok());
}

}  // namespace
}  // namespace radixlm
