// engine/prefix_kv.h: a prefix's KV rows read out of one KV storage and written into another
// with a different slot layout arrive row for row, sliding-window layers through each pool's
// SWA map and only for the positions that still had windowed KV.
#include "engine/prefix_kv.h"

#include <gtest/gtest.h>

#include <numeric>

namespace radixlm {
namespace {

// 3 layers of 1 KV head of dim 4; layers 0 and 1 slide over a window of 2, layer 2 is global.
const model::ModelConfig kTinyConfig{.n_layers = 3,
                                     .n_heads = 1,
                                     .n_kv_heads = 1,
                                     .head_dim = 4,
                                     .sliding_window = 2,
                                     .sliding_window_pattern = 3};

struct Storage {
  KvPool pool;
  std::unique_ptr<model::KvCache> kv;
};

Storage MakeStorage(kernels::KvDtype dtype = kernels::KvDtype::kF16) {
  KvPool pool = std::move(KvPool::Create({.size = 32, .page_size = 1, .swa_size = 32})).value();
  auto kv = model::KvCache::Create(kTinyConfig, {.n_slots = pool.storage_slots(),
                                                 .n_swa_slots = pool.swa_storage_slots(),
                                                 .dtype = dtype});
  EXPECT_TRUE(kv.ok()) << kv.status().ToString();
  return {std::move(pool), std::move(*kv)};
}

uint16_t* Row(Storage& s, int64_t layer, int plane, int32_t slot) {
  const kernels::KvLayerView view = s.kv->Layer(layer);
  const int32_t row = s.kv->IsSwaLayer(layer) ? s.pool.swa_slot_map()[slot] : slot;
  return static_cast<uint16_t*>(plane == 0 ? view.k : view.v) + row * s.kv->row_elems();
}

uint16_t Value(int64_t layer, int plane, int64_t position, int64_t elem) {
  return static_cast<uint16_t>(1000 * layer + 500 * plane + 10 * position + elem + 1);
}

TEST(PrefixKvTest, RowsSurviveAMoveBetweenDifferentSlotLayouts) {
  Storage a = MakeStorage();
  ASSERT_EQ(a.kv->n_layers(), 3);
  ASSERT_TRUE(a.kv->IsSwaLayer(0) && a.kv->IsSwaLayer(1) && !a.kv->IsSwaLayer(2));
  const std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<int32_t> slots = *a.pool.Allocate(8);
  for (int64_t layer = 0; layer < 3; ++layer) {
    for (int plane = 0; plane < 2; ++plane) {
      for (int64_t p = 0; p < 8; ++p) {
        for (int64_t e = 0; e < 4; ++e)
          Row(a, layer, plane, slots[p])[e] = Value(layer, plane, p, e);
      }
    }
  }
  // Out of the window: the first 5 positions lost their windowed KV.
  a.pool.FreeSwa(std::span<const int32_t>(slots).first(5));

  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, tokens, slots);
  EXPECT_EQ(prefix.tokens, tokens);
  EXPECT_EQ(prefix.rows_from, (std::vector<uint32_t>{5, 5, 0}));
  EXPECT_EQ(prefix.kv.size(), size_t{(3 + 3 + 8) * 2 * 4 * 2});
  EXPECT_EQ(PrefixKvSwaValidFrom(*a.kv, prefix), 5);

  Storage b = MakeStorage();
  ASSERT_TRUE(b.pool.Allocate(3).has_value());  // shifts b's slots against a's
  std::vector<int32_t> into = *b.pool.Allocate(8);
  ASSERT_NE(into, slots);
  ASSERT_TRUE(WritePrefixKv(*b.kv, b.pool, prefix, into).ok());
  for (int64_t layer = 0; layer < 3; ++layer) {
    const int64_t from = layer == 2 ? 0 : 5;
    for (int plane = 0; plane < 2; ++plane) {
      for (int64_t p = from; p < 8; ++p) {
        for (int64_t e = 0; e < 4; ++e) {
          EXPECT_EQ(Row(b, layer, plane, into[p])[e], Value(layer, plane, p, e))
              << "layer " << layer << " plane " << plane << " position " << p;
        }
      }
    }
  }
}

TEST(PrefixKvTest, AnUnalignedTailIsLeftOut) {
  Storage a = MakeStorage();
  std::vector<int32_t> slots = *a.pool.Allocate(4);
  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, std::vector<int32_t>{1, 2, 3, 4}, slots);
  Storage b = MakeStorage();
  std::vector<int32_t> into = *b.pool.Allocate(3);  // fewer slots than positions: fine
  EXPECT_TRUE(WritePrefixKv(*b.kv, b.pool, prefix, into).ok());
  std::vector<int32_t> more = *b.pool.Allocate(5);  // more: refused
  EXPECT_FALSE(WritePrefixKv(*b.kv, b.pool, prefix, more).ok());
}

TEST(PrefixKvTest, AForeignLayoutIsRefusedWithBothShapes) {
  Storage a = MakeStorage();
  std::vector<int32_t> slots = *a.pool.Allocate(2);
  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, std::vector<int32_t>{1, 2}, slots);
  prefix.row_elems = 8;
  Status status = WritePrefixKv(*a.kv, a.pool, prefix, slots);
  ASSERT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("same model"), std::string::npos) << status.message();
  prefix.row_elems = 4;
  prefix.kv.pop_back();
  status = WritePrefixKv(*a.kv, a.pool, prefix, slots);
  ASSERT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bytes"), std::string::npos) << status.message();
}

TEST(PrefixKvTest, AFullAttentionLayerStartingLateIsRefused) {
  Storage a = MakeStorage();
  std::vector<int32_t> slots = *a.pool.Allocate(3);
  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, std::vector<int32_t>{1, 2, 3}, slots);
  ASSERT_FALSE(a.kv->IsSwaLayer(2));
  // Layer 2 (global) claims to start at position 1; its bytes shrink to match.
  prefix.rows_from[2] = 1;
  prefix.kv.resize(prefix.kv.size() - 2 * a.kv->row_elems() * sizeof(uint16_t));
  Storage b = MakeStorage();
  std::vector<int32_t> into = *b.pool.Allocate(3);
  const Status status = WritePrefixKv(*b.kv, b.pool, prefix, into);
  ASSERT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("full-attention layer 2"), std::string::npos)
      << status.message();
}

TEST(PrefixKvTest, Fp8RowsMoveByteForByteAndMixedDtypesAreRefused) {
  Storage a = MakeStorage(kernels::KvDtype::kFp8E5M2);
  EXPECT_EQ(a.kv->token_bytes(), 3 * 2 * 4 * 1);
  std::vector<int32_t> slots = *a.pool.Allocate(3);
  for (int64_t layer = 0; layer < 3; ++layer) {
    const kernels::KvLayerView view = a.kv->Layer(layer);
    for (int64_t p = 0; p < 3; ++p) {
      const int32_t row = a.kv->IsSwaLayer(layer) ? a.pool.swa_slot_map()[slots[p]] : slots[p];
      for (int64_t e = 0; e < 4; ++e) {
        static_cast<uint8_t*>(view.v)[row * 4 + e] = static_cast<uint8_t>(40 * layer + 4 * p + e);
      }
    }
  }
  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, std::vector<int32_t>{1, 2, 3}, slots);
  EXPECT_EQ(prefix.kv.size(), size_t{3 * 3 * 2 * 4 * 1});
  Storage b = MakeStorage(kernels::KvDtype::kFp8E5M2);
  ASSERT_TRUE(b.pool.Allocate(2).has_value());
  std::vector<int32_t> into = *b.pool.Allocate(3);
  ASSERT_TRUE(WritePrefixKv(*b.kv, b.pool, prefix, into).ok());
  for (int64_t layer = 0; layer < 3; ++layer) {
    const kernels::KvLayerView view = b.kv->Layer(layer);
    for (int64_t p = 0; p < 3; ++p) {
      const int32_t row = b.kv->IsSwaLayer(layer) ? b.pool.swa_slot_map()[into[p]] : into[p];
      for (int64_t e = 0; e < 4; ++e) {
        EXPECT_EQ(static_cast<uint8_t*>(view.v)[row * 4 + e], 40 * layer + 4 * p + e);
      }
    }
  }
  Storage f16 = MakeStorage();
  std::vector<int32_t> f16_slots = *f16.pool.Allocate(3);
  const Status status = WritePrefixKv(*f16.kv, f16.pool, prefix, f16_slots);
  ASSERT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--kv-cache-dtype"), std::string::npos) << status.message();
}

// A latent cache (multi-head latent attention: one plane per layer, no V) moves its rows and
// nothing else.
TEST(PrefixKvTest, LatentRowsMoveWithoutAVPlane) {
  const model::ModelConfig latent{.n_layers = 2,
                                  .n_heads = 2,
                                  .n_kv_heads = 1,
                                  .head_dim = 6,
                                  .rope_dims = 2,
                                  .mla_kv_rank = 4};
  auto make = [&] {
    KvPool pool = std::move(KvPool::Create({.size = 16, .page_size = 1})).value();
    auto kv = model::KvCache::Create(latent, {.n_slots = pool.storage_slots()});
    EXPECT_TRUE(kv.ok()) << kv.status().ToString();
    return Storage{std::move(pool), std::move(*kv)};
  };
  Storage a = make();
  ASSERT_EQ(a.kv->planes(), 1);
  ASSERT_EQ(a.kv->Layer(0).v, nullptr);
  std::vector<int32_t> slots = *a.pool.Allocate(5);
  for (int64_t layer = 0; layer < 2; ++layer) {
    auto* k = static_cast<uint16_t*>(a.kv->Layer(layer).k);
    for (int64_t p = 0; p < 5; ++p) {
      for (int64_t e = 0; e < 6; ++e) k[slots[p] * 6 + e] = Value(layer, 0, p, e);
    }
  }
  PrefixKv prefix = ReadPrefixKv(*a.kv, a.pool, std::vector<int32_t>{1, 2, 3, 4, 5}, slots);
  EXPECT_EQ(prefix.kv.size(), size_t{2 * 5 * 6 * 2});  // layers * positions * row, F16
  Storage b = make();
  ASSERT_TRUE(b.pool.Allocate(4).has_value());
  std::vector<int32_t> into = *b.pool.Allocate(5);
  ASSERT_TRUE(WritePrefixKv(*b.kv, b.pool, prefix, into).ok());
  for (int64_t layer = 0; layer < 2; ++layer) {
    const auto* k = static_cast<const uint16_t*>(b.kv->Layer(layer).k);
    for (int64_t p = 0; p < 5; ++p) {
      for (int64_t e = 0; e < 6; ++e) {
        EXPECT_EQ(k[into[p] * 6 + e], Value(layer, 0, p, e)) << layer << " " << p << " " << e;
      }
    }
  }
}

}  // namespace
}  // namespace radixlm
