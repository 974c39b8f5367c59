// AVX2 decoders of the codebook types (IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M),
// shared by their single-row dots (dot_avx2_iquant.cc) and their multi-row dots
// (dot4_avx2_iquant.cc, dot4_avx512_iquant.cc), so all multiply the same decoded values (batch
// invariance). Include only from translation units compiled with at least -mavx2 -mfma -mf16c;
// everything here but Iq1mScaledGrid is in an unnamed namespace, so the AVX-512 translation
// unit's copies never stand in for the AVX2 ones at link time.
//
// A decoder is built from one weight super-block (256 elements) and its type's Tables (made
// once per row) and hands out its 8 groups of 32 elements as an IqGroup, computed from the
// grid-coded bytes in registers (the weights stay in their GGUF bytes). The product of a group with
// 32 Q8_K activations y is
//   madd(maddubs(mag, sign(y, sign)), scale):
// unsigned magnitudes times the activations with the weights' signs applied (vpsignb), the int16
// pair sums times the group's sub-block scales, as 8 int32 (exact). A decoder also gives
//   Scale(): the block's float scale (the activation block's d multiplies it),
//   kOutScale: the factor of the final sum (the grids' fixed-point scale),
//   kHasDelta: whether the block adds a delta term (IQ1_S: DeltaSums, from the bsums).
#pragma once

#include <array>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"

namespace radixlm::kernels::cpu::avx2 {

// IQ1_M's grid with its delta folded in: entry (sign << 11) | k holds 8 * (grid[k] + delta) =
// 8 * grid[k] + 1 (sign 0) or - 1 (sign 1) per byte, a nonzero int8. Indexed by qs | nibble << 8
// (the nibble's bits 0..2 extend the grid index, bit 3 is the delta's sign), one gather gives a
// group's 8 values with their delta. (4096 entries; built on first use; dot_avx2_iquant.cc.)
const uint64_t* Iq1mScaledGrid();

namespace {

// The tables a decoder reads besides the fixed codebooks (none but IQ1_M's).
struct NoTables {};

struct IqGroup {
  __m256i mag;    // 32 unsigned magnitudes
  __m256i sign;   // 32 bytes whose signs are the weights' (+-1, or the signed weight itself)
  __m256i scale;  // 16 int16 sub-block scales (one per int16 pair sum)
};

// The group's 8 int32 sums of scale * weight * activation over the 32 activations at y.
inline __m256i GroupProducts(const IqGroup& g, const int8_t* y) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(g.mag, _mm256_sign_epi8(Load256(y), g.sign)),
                           g.scale);
}

// kSignBytes[s]: the 8 sign bytes (+1 or -1) of 7 stored sign bits s (parity completes 8).
inline constexpr std::array<uint64_t, 128> kSignBytes = [] {
  std::array<uint64_t, 128> t{};
  for (int s = 0; s < 128; ++s) {
    for (int j = 0; j < 8; ++j) {
      const uint64_t byte = (kIqSigns[s] >> j) & 1 ? 0xFF : 0x01;
      t[s] |= byte << (8 * j);
    }
  }
  return t;
}();

// Table lookups go through vpgatherdq / vpgatherdd: four (eight) scalar loads and inserts
// would queue on the one shuffle port that the sign and scale shuffles need too.

// 32 sign bytes (+1 or -1) of the 4 stored 7-bit sign groups of a 32-bit word (bits 7l..7l+6).
inline __m256i SignsFrom7BitGroups(uint32_t aux) {
  const __m128i idx = _mm_and_si128(
      _mm_srlv_epi32(_mm_set1_epi32(static_cast<int>(aux)), _mm_set_epi32(21, 14, 7, 0)),
      _mm_set1_epi32(127));
  return _mm256_i32gather_epi64(reinterpret_cast<const long long*>(kSignBytes.data()), idx, 8);
}

// 32 sign bytes (+1 or -1) from 32 sign bits (bit j of the little-endian word: element j).
inline __m256i SignsFromBits(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_or_si256(set, _mm256_set1_epi8(1));
}

// The 8 grid entries (4 bytes each) at the 8 int32 indices of idx.
inline __m256i Grid8x32(const uint32_t* grid, __m256i idx) {
  return _mm256_i32gather_epi32(reinterpret_cast<const int*>(grid), idx, 4);
}

// The 4 grid entries (8 bytes each) at the 4 int32 indices of idx.
inline __m256i Grid4x64(const uint64_t* grid, __m128i idx) {
  return _mm256_i32gather_epi64(reinterpret_cast<const long long*>(grid), idx, 8);
}

// 4 bytes at p, zero-extended to 4 int32.
inline __m128i BytesToI32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(v));
}

// The 16 scales 2 * s + 1 of an IQ2_XS / IQ2_S block (a nibble each, group ib: low nibble of
// scales[ib] for its elements 0..15, high for 16..31) as int16: low lane the low nibbles, high
// lane the high ones, so BroadcastI16Mask(ib) gives group ib's two scales.
inline __m256i Iq2BlockScales(const uint8_t* scales) {
  uint64_t packed;
  std::memcpy(&packed, scales, sizeof(packed));
  const __m128i nibbles =
      _mm_and_si128(_mm_set_epi64x(static_cast<int64_t>(packed >> 4), static_cast<int64_t>(packed)),
                    _mm_set1_epi8(0xF));
  return _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(nibbles, nibbles), _mm_set1_epi8(1)));
}

class Iq3xxsDecoder {
 public:
  using Block = BlockIQ3XXS;
  using Tables = NoTables;
  static constexpr float kOutScale = 0.25f;
  static constexpr bool kHasDelta = false;

  Iq3xxsDecoder(const BlockIQ3XXS& b, NoTables) : b_(b) {}
  float Scale() const { return HalfToFloat(b_.d); }
  IqGroup Group(int ib) const {
    uint32_t aux;
    std::memcpy(&aux, b_.qs + kQK_K / 4 + 4 * ib, sizeof(aux));
    const __m256i idx =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b_.qs + 8 * ib)));
    const int ls = 2 * static_cast<int>(aux >> 28) + 1;
    // The sign gather issues first (as the single-row kernel always had it scheduled).
    const __m256i sign = SignsFrom7BitGroups(aux);
    return {Grid8x32(kIq3xxsGrid, idx), sign, _mm256_set1_epi16(static_cast<int16_t>(ls))};
  }

 private:
  const BlockIQ3XXS& b_;
};

class Iq3sDecoder {
 public:
  using Block = BlockIQ3S;
  using Tables = NoTables;
  static constexpr float kOutScale = 1.0f;
  static constexpr bool kHasDelta = false;

  Iq3sDecoder(const BlockIQ3S& b, NoTables) : b_(b) {}
  float Scale() const { return HalfToFloat(b_.d); }
  IqGroup Group(int ib) const {
    // Grid index k of a group: qs[k] | (bit k of qh) << 8, computed 8 at a time.
    const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b_.qs + 8 * ib));
    const __m256i high = _mm256_and_si256(
        _mm256_sllv_epi32(_mm256_set1_epi32(b_.qh[ib]), _mm256_set_epi32(1, 2, 3, 4, 5, 6, 7, 8)),
        _mm256_set1_epi32(256));
    const __m256i idx = _mm256_or_si256(_mm256_cvtepu8_epi32(low), high);
    const int ls = 2 * ((b_.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1;
    const __m256i sign = SignsFromBits(b_.signs + 4 * ib);
    return {Grid8x32(kIq3sGrid, idx), sign, _mm256_set1_epi16(static_cast<int16_t>(ls))};
  }

 private:
  const BlockIQ3S& b_;
};

class Iq2xxsDecoder {
 public:
  using Block = BlockIQ2XXS;
  using Tables = NoTables;
  static constexpr float kOutScale = 0.125f;
  static constexpr bool kHasDelta = false;

  Iq2xxsDecoder(const BlockIQ2XXS& b, NoTables) : b_(b) {}
  float Scale() const { return HalfToFloat(b_.d); }
  IqGroup Group(int ib) const {
    // Two u32 per group: four 8-bit grid indices; 4 x 7 sign bits and the 4-bit scale.
    const uint8_t* index = reinterpret_cast<const uint8_t*>(b_.qs + 4 * ib);
    uint32_t aux;
    std::memcpy(&aux, index + 4, sizeof(aux));
    const int ls = 2 * static_cast<int>(aux >> 28) + 1;
    return {Grid4x64(kIq2xxsGrid, BytesToI32(index)), SignsFrom7BitGroups(aux),
            _mm256_set1_epi16(static_cast<int16_t>(ls))};
  }

 private:
  const BlockIQ2XXS& b_;
};

class Iq2xsDecoder {
 public:
  using Block = BlockIQ2XS;
  using Tables = NoTables;
  static constexpr float kOutScale = 0.125f;
  static constexpr bool kHasDelta = false;

  Iq2xsDecoder(const BlockIQ2XS& b, NoTables) : b_(b), scales_(Iq2BlockScales(b.scales)) {}
  float Scale() const { return HalfToFloat(b_.d); }
  IqGroup Group(int ib) const {
    // Per 8 elements a u16: a 9-bit grid index and 7 sign bits.
    const __m128i words =
        _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b_.qs + 4 * ib)));
    return {Grid4x64(kIq2xsGrid, _mm_and_si128(words, _mm_set1_epi32(511))),
            _mm256_i32gather_epi64(reinterpret_cast<const long long*>(kSignBytes.data()),
                                   _mm_srli_epi32(words, 9), 8),
            _mm256_shuffle_epi8(scales_, BroadcastI16Mask(ib))};
  }

 private:
  const BlockIQ2XS& b_;
  __m256i scales_;
};

class Iq2sDecoder {
 public:
  using Block = BlockIQ2S;
  using Tables = NoTables;
  static constexpr float kOutScale = 0.125f;
  static constexpr bool kHasDelta = false;

  Iq2sDecoder(const BlockIQ2S& b, NoTables) : b_(b), scales_(Iq2BlockScales(b.scales)) {}
  float Scale() const { return HalfToFloat(b_.d); }
  IqGroup Group(int ib) const {
    // Index l: qs[l] | (bits 2l, 2l + 1 of qh) << 8.
    const __m128i high =
        _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(b_.qh[ib] << 8), _mm_set_epi32(6, 4, 2, 0)),
                      _mm_set1_epi32(0x300));
    return {Grid4x64(kIq2sGrid, _mm_or_si128(BytesToI32(b_.qs + 4 * ib), high)),
            SignsFromBits(b_.qs + kQK_K / 8 + 4 * ib),
            _mm256_shuffle_epi8(scales_, BroadcastI16Mask(ib))};
  }

 private:
  const BlockIQ2S& b_;
  __m256i scales_;
};

// IQ1 grids hold signed bytes in {-1, 0, 1}: the sign of the weight moves onto the activation
// and its magnitude (0 or 1) multiplies it.
class Iq1sDecoder {
 public:
  using Block = BlockIQ1S;
  using Tables = NoTables;
  static constexpr float kOutScale = 1.0f;
  static constexpr bool kHasDelta = true;

  // Per group ib (qh[ib]): scale ls = 2 * bits 12..14 + 1 and the delta's sign (bit 15), all 8
  // at once.
  Iq1sDecoder(const BlockIQ1S& b, NoTables) : b_(b) {
    const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh));
    const __m128i ls =
        _mm_add_epi16(_mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7)), 1),
                      _mm_set1_epi16(1));
    const __m128i negative = _mm_srai_epi16(qh, 15);
    const __m128i signed_ls = _mm_sub_epi16(_mm_xor_si128(ls, negative), negative);
    delta_scales_ = _mm256_set_m128i(_mm_unpackhi_epi16(signed_ls, signed_ls),
                                     _mm_unpacklo_epi16(signed_ls, signed_ls));
    scales_ = _mm256_broadcastsi128_si256(ls);
  }
  float Scale() const { return HalfToFloat(b_.d); }
  // The delta term sum_ib +-ls * (sum of the group's 32 activations), from the 16 bsums.
  __m256i DeltaSums(const int16_t* bsums) const {
    return _mm256_madd_epi16(delta_scales_, Load256(bsums));
  }
  IqGroup Group(int ib) const {
    // Index l: qs[l] | (bits 3l..3l+2 of qh) << 8.
    const __m128i high =
        _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(b_.qh[ib] << 8), _mm_set_epi32(9, 6, 3, 0)),
                      _mm_set1_epi32(0x700));
    const __m256i q = Grid4x64(kIq1sGrid, _mm_or_si128(BytesToI32(b_.qs + 4 * ib), high));
    return {_mm256_sign_epi8(q, q), q, _mm256_shuffle_epi8(scales_, BroadcastI16Mask(ib))};
  }

 private:
  const BlockIQ1S& b_;
  __m256i delta_scales_;
  __m256i scales_;
};

class Iq1mDecoder {
 public:
  using Block = BlockIQ1M;
  struct Tables {  // looked up once per row
    const uint64_t* grid = Iq1mScaledGrid();
  };
  static_assert(kIq1Delta == 0.125f, "the grid values are scaled by 1 / kIq1Delta = 8");
  static constexpr float kOutScale = kIq1Delta;  // the sums are of 8 * (grid + delta)
  static constexpr bool kHasDelta = false;

  Iq1mDecoder(const BlockIQ1M& b, const Tables& tables) : b_(b), grid_(tables.grid) {
    // The 16 sub-block scales 2 * s + 1: s is bits 3t..3t+2 of scale word k for sub-block
    // 4k + t. Shifting the 4 words by 0, 6 (low lane) and 3, 9 (high lane) puts sub-block
    // 2 * ib (elements 0..15 of group ib) in the low lane and 2 * ib + 1 in the high lane, both
    // at int16 position (ib % 2) * 4 + ib / 2.
    uint64_t words;
    std::memcpy(&words, b.scales, sizeof(words));
    const __m256i s =
        _mm256_and_si256(_mm256_srlv_epi64(_mm256_set1_epi64x(static_cast<int64_t>(words)),
                                           _mm256_set_epi64x(9, 3, 6, 0)),
                         _mm256_set1_epi16(7));
    block_scales_ = _mm256_add_epi16(_mm256_add_epi16(s, s), _mm256_set1_epi16(1));
    // The 32 indices into the scaled grid, qs[l] | (qh nibble l) << 8, computed 8 at a time
    // into memory; each group then loads its 4.
    const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh));
    const __m128i m15 = _mm_set1_epi8(15);
    const __m128i lo = _mm_and_si128(qh, m15);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(qh, 4), m15);
    const __m128i high[2] = {_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi)};
    for (int k = 0; k < 4; ++k) {
      const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + 8 * k));
      const __m128i h8 = k % 2 == 0 ? high[k / 2] : _mm_unpackhi_epi64(high[k / 2], high[k / 2]);
      const __m256i idx =
          _mm256_or_si256(_mm256_cvtepu8_epi32(q8), _mm256_slli_epi32(_mm256_cvtepu8_epi32(h8), 8));
      _mm256_store_si256(reinterpret_cast<__m256i*>(index_ + 8 * k), idx);
    }
  }
  float Scale() const { return HalfToFloat(IQ1MHalfScale(b_)); }
  IqGroup Group(int ib) const {
    const __m256i q8 =
        Grid4x64(grid_, _mm_load_si128(reinterpret_cast<const __m128i*>(index_ + 4 * ib)));
    return {_mm256_sign_epi8(q8, q8), q8,
            _mm256_shuffle_epi8(block_scales_, BroadcastI16Mask((ib % 2) * 4 + ib / 2))};
  }

 private:
  const BlockIQ1M& b_;
  const uint64_t* grid_;
  __m256i block_scales_;
  alignas(32) int32_t index_[32];
};

// One weight row of a codebook type against N Q8_K activation rows (row j at x + j * x_stride):
// out[j] = dot. Each group is decoded once for all N rows. Per row the integer sums are exact
// and the float operations are those of DotIqRow below, in the same order, so out[j] is bit for
// bit DotIqRow's result for row j.
template <class Decoder, int N>
inline void DotIqRows(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  using Block = typename Decoder::Block;
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8K* y[N];
  for (int j = 0; j < N; ++j) {
    y[j] = reinterpret_cast<const BlockQ8K*>(static_cast<const uint8_t*>(x) + j * x_stride);
  }
  const typename Decoder::Tables tables{};
  __m256 acc[N];
  for (int j = 0; j < N; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const Decoder dec(a[i], tables);
    __m256i sumi[N];
    for (int j = 0; j < N; ++j) sumi[j] = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const IqGroup g = dec.Group(ib);
      for (int j = 0; j < N; ++j) {
        sumi[j] = _mm256_add_epi32(sumi[j], GroupProducts(g, y[j][i].qs + 32 * ib));
      }
    }
    const float dw = dec.Scale();
    for (int j = 0; j < N; ++j) {
      const float d = y[j][i].d * dw;
      __m256 total = _mm256_cvtepi32_ps(sumi[j]);
      if constexpr (Decoder::kHasDelta) {
        total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta),
                                _mm256_cvtepi32_ps(dec.DeltaSums(y[j][i].bsums)), total);
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc[j]);
    }
  }
  for (int j = 0; j < N; ++j) out[j] = Decoder::kOutScale * HsumF32(acc[j]);
}

// One weight row against one activation row. Two groups per iteration into two accumulators
// (the grid loads of one group overlap the arithmetic of the other); the integer sums are exact,
// so they equal DotIqRows' single accumulator.
template <class Decoder>
inline float DotIqRow(int64_t n, const void* w, const void* x) {
  using Block = typename Decoder::Block;
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const typename Decoder::Tables tables{};
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const Decoder dec(a[i], tables);
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, GroupProducts(dec.Group(ib), y[i].qs + 32 * ib));
      sumi1 = _mm256_add_epi32(sumi1, GroupProducts(dec.Group(ib + 1), y[i].qs + 32 * ib + 32));
    }
    const float d = y[i].d * dec.Scale();
    __m256 total = _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1));
    if constexpr (Decoder::kHasDelta) {
      total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta),
                              _mm256_cvtepi32_ps(dec.DeltaSums(y[i].bsums)), total);
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc);
  }
  return Decoder::kOutScale * HsumF32(acc);
}

}  // namespace
}  // namespace radixlm::kernels::cpu::avx2
