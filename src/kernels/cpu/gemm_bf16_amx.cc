// AMX-BF16 GEMM over BF16 weights packed in k pairs (kernels/packed_weights.h, bf16_pairs): a
// packed block (16 column pairs x 16 rows x 2 bf16) is AMX's B tile as it is, and 16 tokens'
// bf16 activations of the same 32 columns are the A tile, read in place from the activation
// rows. Each C tile (16 tokens x 16 rows, float) accumulates over the blocks in ascending order.
//
// tdpbf16ps does not round as vdpbf16ps does (its additions within a tile product are not the
// pairwise sequence of the AVX512-BF16 kernel), so at the amx level every token count runs
// here — the last, partial token tile reads the activation rows' padding and drops their
// outputs — and a row's result is the same bits whether it is decoded alone or in a batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::amxbf16 {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// tmm0-3: C [16 tokens][16 rows] float for (token tile i, group j) at 2 i + j; tmm4-5: A
// [16 tokens][32 bf16]; tmm6-7: B [16 pairs][16 rows x 2 bf16]. In static storage: GCC 12
// drops stores into a local config before ldtilecfg reads it.
alignas(64) constexpr TileConfig kTileConfig = {
    .palette = 1,
    .start_row = 0,
    .reserved = {},
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

// C tile (token tile i, group j) of y: tokens [t0 + 16 i, ...) that exist, the group's rows.
void StoreTile(const PackedWeights& w, const float (*c)[16], int64_t g, int64_t t0,
               int64_t n_tokens, float* y, int64_t y_stride) {
  const int64_t valid_rows = std::min<int64_t>(16, w.rows - 16 * g);
  const auto mask = static_cast<__mmask16>((1u << valid_rows) - 1);
  const int64_t valid_tokens = std::min<int64_t>(16, n_tokens - t0);
  for (int64_t t = 0; t < valid_tokens; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + 16 * g, mask, _mm512_loadu_ps(c[t]));
  }
}

// Token tiles [t0, t0 + 16 NT) x groups [g, g + NG) (NT, NG in {1, 2}).
template <int NT, int NG>
void Tiles(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0,
           int64_t n_tokens, float* y, int64_t y_stride) {
  _tile_zero(0);
  if constexpr (NG > 1) _tile_zero(1);
  if constexpr (NT > 1) _tile_zero(2);
  if constexpr (NT > 1 && NG > 1) _tile_zero(3);
  const uint16_t* x0 = a.xb + t0 * a.xb_stride;
  const uint16_t* x1 = x0 + 16 * a.xb_stride;
  const int64_t stride = a.xb_stride * 2;
  for (int64_t b = 0; b < a.nb; ++b) {
    _tile_loadd(4, x0 + 32 * b, stride);
    _tile_loadd(6, w.Block(g, b), 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (NG > 1) {
      _tile_loadd(7, w.Block(g + 1, b), 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (NT > 1) {
      _tile_loadd(5, x1 + 32 * b, stride);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (NG > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  alignas(64) float c[16][16];
  _tile_stored(0, c, 64);
  StoreTile(w, c, g, t0, n_tokens, y, y_stride);
  if constexpr (NG > 1) {
    _tile_stored(1, c, 64);
    StoreTile(w, c, g + 1, t0, n_tokens, y, y_stride);
  }
  if constexpr (NT > 1) {
    _tile_stored(2, c, 64);
    StoreTile(w, c, g, t0 + 16, n_tokens, y, y_stride);
  }
  if constexpr (NT > 1 && NG > 1) {
    _tile_stored(3, c, 64);
    StoreTile(w, c, g + 1, t0 + 16, n_tokens, y, y_stride);
  }
}

template <int NT>
void TokenTiles(const PackedWeights& w, const PackedActivations& a, int64_t g0, int64_t g1,
                int64_t t0, int64_t n_tokens, float* y, int64_t y_stride) {
  int64_t g = g0;
  for (; g + 2 <= g1; g += 2) Tiles<NT, 2>(w, a, g, t0, n_tokens, y, y_stride);
  if (g < g1) Tiles<NT, 1>(w, a, g, t0, n_tokens, y, y_stride);
}

}  // namespace

void Bf16Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
              int64_t g1, float* y, int64_t y_stride) {
  _tile_loadconfig(&kTileConfig);
  int64_t t = 0;
  for (; t + 16 < n_tokens; t += 32) TokenTiles<2>(w, a, g0, g1, t, n_tokens, y, y_stride);
  if (t < n_tokens) TokenTiles<1>(w, a, g0, g1, t, n_tokens, y, y_stride);
  _tile_release();
}

}  // namespace radixlm::kernels::cpu::amxbf16
