// Quantized weights repacked once at load for the int8 GEMM that prefill, batched decode and
// decode all run (u8 weights x s8 activations: vpmaddubsw on AVX2, vpdpbusd on AVX-VNNI and
// AVX-512 VNNI, and 16-token tdpbsud tiles where the CPU has AMX-INT8).
//
// Every 32-element block type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4), every K-quant
// (Q2_K .. Q6_K) and IQ4_XS is rewritten exactly as unsigned integers u with float scales
// per block of `sub` elements (32, or 16 for Q2_K, Q3_K, Q6_K):
//   w = d * (u - offset)   "symmetric" types: Q4_0 (offset 8), Q5_0 (16), Q8_0 (128), Q6_K (32),
//                          Q3_K (4), the lookup types IQ4_NL, IQ4_XS, MXFP4 (128, below)
//   w = d * u + m          the others (Q4_1, Q5_1; Q2_K / Q4_K / Q5_K with d = d*sc,
//                          m = -dmin*mn; Q2_K's m per 16 elements, the others' per 32)
// (all products of a half and a 6- or 8-bit integer: exact in float).
// Layout: rows in groups of 16 (the last group padded with zero rows); per group, first the
// quants of every block of 32 columns in VNNI order — chunk c (columns 4c..4c+3) of the 16 rows
// is 64 bytes, row r's 4 bytes at c * 64 + 4 * r — then the scales of every block, then (the
// K-quants) the super-block scales of every 256 columns.
// Decode reads every weight once per token, so the bytes per weight are its speed: every type
// packs to exactly its GGUF bytes per weight (padding rows aside). Scales are kept in the
// GGUF's own precision (ScaleForm):
//   kHalf (32-element block types): per block d[16] (and m[16]) as the GGUF's halves;
//   kK4 (Q4_K, Q5_K): per block 24 bytes, the 6-bit sc and mn of the 16 rows: byte r
//     (r < 16) = sc & 15 | (mn & 15) << 4, and nibble r of the 8 bytes after them
//     (byte 16 + r / 2, bits 4 (r % 2)..) = sc >> 4 | (mn >> 4) << 2; per super-block the
//     rows' half d[16] then dmin[16] (64 bytes);
//   kQ6K: per block the int8 sc of its two 16-column sub-blocks, sc[s][16] (32 bytes); per
//     super-block the rows' half d[16] (32 bytes).
//   kQ3K: per block 24 bytes as kK4's with the 6-bit ls of its two 16-column sub-blocks in
//     place of sc and mn; per super-block the rows' half d[16]; the scale is d * (ls - 32).
//   kQ2K: per block the GGUF's scale bytes of its two sub-blocks (sc | mn << 4), byte s * 16 + r
//     (32 bytes); per super-block the rows' half d[16] then dmin[16] (64 bytes).
//   kI6 (IQ4_XS): per block 12 bytes, the 6-bit ls of the 16 rows: nibble r % 2 of byte r / 2
//     = ls & 15, bits 2 (r % 4)..+1 of byte 8 + r / 4 = ls >> 4; per super-block the rows'
//     half d[16] (32 bytes); the scale is d * (ls - 32);
//   kE8M0 (MXFP4): per block the rows' E8M0 exponent bytes e[16]; the scale is 2^(e - 128)
//     (its levels are doubled: cpu/lowbit_impl.h, E8M0HalfToFloat).
// The kernels widen them into the same floats d * sc and -(dmin * mn) (exact products).
// Lookup types (IQ4_NL, IQ4_XS, MXFP4) store the 4-bit index of each weight's level; the
// levels (signed, |v| <= 127) map to u = v + 128 through `levels`, offset 128, so past the
// table lookup (vpshufb) they run as Q8_0 does.
// Q2_K and Q3_K keep the low 2 bits of u four chunks per byte (chunk c at bits 2 (c / 2)..+1 of
// the 64 bytes at 64 (c % 2): 128 bytes), Q3_K its third bit in one 64-byte plane after them
// (bit c of plane byte 4 * r + j: chunk c's column j of row r).
// Types whose u fit 4 bits keep two chunks per byte (chunk c low nibble, chunk c + 4 high);
// types with wider u keep their low 4 bits so and add planes of the higher bits after the
// 256 nibble bytes: 5-bit types (Q5_*) one 64-byte plane (bit c of plane byte 4 * r + j: chunk
// c's column j of row r), Q6_K two (bits 2 (c % 4)..+1 of byte 64 (c / 4) + 4 * r + j: bits
// 4 and 5 of chunk c's column j of row r).
//
// Activations are quantized to int8 (round to nearest even) the way the dot kernels quantize
// them for the same weight type (dot.h), so the model's numerics stay those of its GGUF
// format: 32-element blocks with a half-precision scale (Q8_0) for the 32-element block
// types, 256-element blocks with a float scale (Q8_K) for the K-quants; see PackedActivations.
//
// The codebook types with a packed layout (kernels/packed_codebook.h names them and, with
// IsCodebookPackable, the levels that pack each) keep their grid indices, sign bits and scales as
// the GGUF stores them, rearranged per group of 16 rows, with numerics of their own
// (ScaleForm::kCodebook).
//
// Float weights (F32, F16, BF16) are repacked too, unquantized, for a register-tiled float GEMM:
// per group, per block of 32 columns, column k's 16 row values are contiguous (k-major), in the
// source's own type (float_bytes 4 or 2; F16 and BF16 widen to float exactly). Their activations
// stay float (act_block 0), and each output is fma(w, x, acc) over the columns in ascending
// order.
// BF16 weights, where the CPU runs the BF16 GEMM (ActiveBf16GemmPath() != kNone), are packed in
// k pairs instead (bf16_pairs): per group, per block of 32 columns, pair p (columns 2p, 2p + 1)
// of the 16 rows is 64 bytes, row r's two bf16 at 64 p + 4 r (column 2p first) — vdpbf16ps's
// weight operand and AMX's B tile, 2 bytes per weight as in the file. Their activations are
// rounded to bf16 once per matrix (round to nearest even, as llama.cpp rounds a BF16 matmul's
// activations: act_block kActBf16), and each output adds the pairs' products in ascending order:
// acc = (acc + w[2p+1] x[2p+1]) + w[2p] x[2p] (products exact, additions rounded to nearest
// even, denormals flushed to zero) on the AVX512-BF16 path; AMX-BF16 tiles round within a tile
// product otherwise (within a float rounding per addition of that sum) and run every token
// count at the amx level, so a row's result never depends on its batch at either level.
//
// Numerics: each output element is accumulated block after block in the same float
// operations whatever the number of tokens, rows or threads (batch invariance), and the same
// on every ISA that implements it (the scalar reference here defines it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {

// How a packed block's scales are stored (the layout above).
// kCodebook: a codebook type in its own layout (packed_codebook.h), none of the above.
enum class ScaleForm { kHalf, kK4, kQ6K, kQ3K, kQ2K, kI6, kE8M0, kCodebook, kNone };

struct PackedWeights {
  gguf::GgmlType source_type = gguf::GgmlType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;      // multiple of 32
  int64_t groups = 0;    // ceil(rows / 16)
  int sub = 32;          // elements per scale: 32, or 16 (Q6_K)
  int offset = 0;        // symmetric types: w = d * (u - offset); 0 with a min
  bool has_min = false;  // w = d * u + m
  bool nibbles = false;  // low 4 bits of u two chunks per byte (2 bits four per byte: low_bits)
  int low_bits = 4;      // with nibbles: 4, or 2 (Q2_K, Q3_K)
  int high_bits = 0;     // with nibbles: bits of u above low_bits, in planes (0, 1, 2)
  int act_block = 32;    // activation scale block: 32 (Q8_0-like), 256 (Q8_K-like), 0 (float)
  // Lookup types: u of each stored 4-bit index (16 entries, static storage); else null.
  const uint8_t* levels = nullptr;
  int float_bytes = 0;      // float weights: bytes per stored value (4 or 2); 0 for quants
  bool bf16_pairs = false;  // BF16 weights in k pairs for the BF16 GEMM (layout above)
  ScaleForm scale_form = ScaleForm::kNone;  // kNone: float weights
  size_t quant_bytes = 0;   // per (group, block): 512, 256 with nibbles (128 with 2 low
                            // bits), + 64 per plane;
                            // float weights: 32 * 16 * float_bytes
  size_t scale_bytes = 0;   // per (group, block): its scales of the 16 rows (0 for floats)
  size_t super_bytes = 0;   // per (group, 256 columns): K-quants' half d (and dmin), else 0
  size_t stream_bytes = 0;  // bytes of a group per block of 32 columns (group_bytes / nb)
  size_t group_bytes = 0;   // a multiple of 64
  std::unique_ptr<uint8_t[], void (*)(void*)> data{nullptr, nullptr};  // 64-byte aligned

  const uint8_t* Block(int64_t group, int64_t block) const {
    return data.get() + group * group_bytes + block * quant_bytes;
  }
  const uint8_t* Scales(int64_t group, int64_t block) const {
    return data.get() + group * group_bytes + (cols / 32) * quant_bytes + block * scale_bytes;
  }
  // The super-block scales (kK4, kQ6K, kQ3K, kQ2K, kI6) of the 256 columns holding `block`.
  const uint8_t* Supers(int64_t group, int64_t block) const {
    return data.get() + group * group_bytes + (cols / 32) * (quant_bytes + scale_bytes) +
           (block / 8) * super_bytes;
  }
  // The float scale d of sub-block s (0, or 1 for the second 16 columns where sub is 16) and
  // the min m (0 without one; Q2_K's of sub-block s) of row `lane` in block `block` of group
  // `group`, as the kernels widen them.
  float ScaleD(int64_t group, int64_t block, int s, int lane) const;
  float ScaleM(int64_t group, int64_t block, int lane, int s = 0) const;
};

// u of column k (0..31) of row `lane` (0..15) in a packed block (the layout above).
inline int PackedQuant(const PackedWeights& w, const uint8_t* blk, int lane, int k) {
  const int c = k / 4, pos = 4 * lane + k % 4;
  if (!w.nibbles) return blk[c * 64 + pos];
  if (w.low_bits == 2) {
    int u = (blk[(c % 2) * 64 + pos] >> (2 * (c / 2))) & 3;
    if (w.high_bits == 1) u |= ((blk[128 + pos] >> c) & 1) << 2;
    return u;
  }
  int u = (blk[(c % 4) * 64 + pos] >> (c / 4 * 4)) & 15;
  if (w.levels != nullptr) return w.levels[u];
  if (w.high_bits == 1) u |= ((blk[256 + pos] >> c) & 1) << 4;
  if (w.high_bits == 2) u |= ((blk[256 + 64 * (c / 4) + pos] >> (2 * (c % 4))) & 3) << 4;
  return u;
}

// Weight value of column k (0..31) of row `lane` in a packed block of float weights.
float PackedFloat(const PackedWeights& w, const uint8_t* blk, int lane, int k);

// The SIMD code the packed GEMM runs on this CPU at the dispatched ISA level (ActiveIsa, so
// after the RADIXLM_ISA cap): AVX2 (vpmaddubsw) at avx2; AVX-VNNI at avx_vnni; at avx512,
// AVX-512 VNNI where the CPU has it (else AVX-VNNI, else AVX2); AMX-INT8 16-token tiles with
// AVX-512 VNNI for the rest at amx. kNone (scalar level, or not x86): nothing
// is packed and MatMul uses the dot kernels.
enum class PackedGemmPath { kNone, kAvx2, kAvxVnni, kAvx512Vnni, kAmx };
PackedGemmPath ActivePackedGemmPath();
const char* PackedGemmPathName(PackedGemmPath path);
bool PackedGemmAvailable();  // ActivePackedGemmPath() != kNone

// The BF16 GEMM for BF16 weights at the dispatched ISA level: AVX512-BF16 from the avx512
// level where the CPU has it; AMX-BF16 tiles (for every token count) at the amx level where it
// has AMX-BF16. kNone: BF16 weights take the float GEMM (k-major layout, float activations).
enum class Bf16GemmPath { kNone, kAvx512Bf16, kAmxBf16 };
Bf16GemmPath ActiveBf16GemmPath();
const char* Bf16GemmPathName(Bf16GemmPath path);

// True for the weight types PackWeights accepts (the quant types above, F32, F16, BF16; and
// the codebook types where packed_codebook.h's IsCodebookPackable says so).
bool IsPackableType(gguf::GgmlType type);

// Repacks w (whose rows are GGUF blocks) into the layout above; pool may be null. Requires
// IsPackableType(w.type).
std::unique_ptr<PackedWeights> PackWeights(const WeightMatrix& w, ThreadPool* pool);
// The two layouts of float weights whatever the dispatch picks (tests compare the paths):
// k-major for the float GEMM (F32, F16, BF16), k pairs for the BF16 GEMM (BF16 only).
std::unique_ptr<PackedWeights> PackFloatWeights(const WeightMatrix& w, ThreadPool* pool);
std::unique_ptr<PackedWeights> PackBf16PairWeights(const WeightMatrix& w, ThreadPool* pool);

// How far ahead of a decode step's weight stream the AVX-512 kernels ask for lines: into L1
// and into L2 (kernels/cpu/gemm_packed.h, where they were measured).
inline constexpr size_t kPrefetchNear = 8192;
inline constexpr size_t kPrefetchFar = 32768;

// A zeroed, 64-byte aligned buffer as packed weights live in, on memory advised for transparent
// huge pages: decode streams every weight once per token, and with 4 KiB pages that stream
// takes a TLB miss every 4 KiB. Small buffers are carved one after another from shared chunks
// (kernels/packed_alloc.cc has the sizes), so matrices that are not whole 2 MiB pages sit on
// huge pages too, without a partly used one each. Thread-safe; the deleter frees the buffer.
std::unique_ptr<uint8_t[], void (*)(void*)> AllocPacked(size_t bytes);

// Per-token quantized activations: token t's int8 quants at qs + t * stride (stride a multiple
// of 64), and for block b (32 columns) its float scale dx[t * nb + b] (shared by the 8 blocks
// of a 256-element scale block); for sub-block s of 16, the quant sum
// sum16[(t * nb + b) * 2 + s]; and dx * (sum of the block) as dxs[t * nb + b].
// The same values are also regrouped in tiles of kActTile tokens, block-major, so a kernel
// finds everything a tile needs at fixed offsets from one pointer per block: for token t (tile
// k = t / kActTile, i = t % kActTile) and block b, with kb = k * nb + b, its 32 quants at
// tq + (kb * kActTile + i) * 32, and tdx / tdxs / txsum (the block's quant sum) /
// tsum16 (sub-block s) at [kb * kActTile + i] / [(kb * 2 + s) * kActTile + i]. Tokens past
// n_tokens in the last tile hold finite values of no meaning (zeros, or an earlier call's):
// a kernel may read them, never store outputs computed from them.
// For float weights (act_block 0): token t's floats at xf + t * xf_stride, and nb only.
// For BF16 weights in k pairs (act_block kActBf16): token t's bf16 values at xb + t * xb_stride
// (xb 64-byte aligned, xb_stride a multiple of 32), rows allocated to whole tiles of kActTile
// tokens (the padding tokens as in the int8 tiles: finite values of no meaning), and nb.
inline constexpr int kActTile = 16;
inline constexpr int kActBf16 = 2;
struct PackedActivations {
  const float* xf = nullptr;
  int64_t xf_stride = 0;
  const uint16_t* xb = nullptr;  // [tiled tokens, xb_stride] bf16
  int64_t xb_stride = 0;
  const int8_t* qs = nullptr;
  size_t stride = 0;
  int64_t nb = 0;
  const float* dx = nullptr;
  const int32_t* sum16 = nullptr;
  const float* dxs = nullptr;
  const int8_t* tq = nullptr;  // 64-byte aligned
  const float* tdx = nullptr;
  const float* tdxs = nullptr;
  const int32_t* txsum = nullptr;
  const int32_t* tsum16 = nullptr;
};

// Quantizes x: [n_tokens, cols] with scale blocks of act_block (32 or 256; cols a multiple)
// into the calling thread's scratch for that act_block (valid until its next call with it).
// act_block 0 (float weights): x itself, nothing copied. kActBf16: x rounded to bf16 into the
// calling thread's scratch.
// prologue (optional): run over each range of rows before they are quantized, in the same
// parallel region (MatMulMulti's prologue); with act_block 0, over all rows first.
// live (optional, int8 formats only): the only row ranges {first, rows} to prologue and
// quantize (GroupedMatMul's items); the other rows keep the scratch's earlier finite quants.
struct RowRange {
  int64_t first = 0;
  int64_t rows = 0;
};
PackedActivations QuantizePackedActivations(const float* x, int64_t n_tokens, int64_t cols,
                                            int act_block, ThreadPool* pool,
                                            const RowPrologue* prologue = nullptr,
                                            std::span<const RowRange> live = {});

// The activations of tokens first_token, first_token + 1, ... of `a` as activations of their
// own (token 0 = a's first_token): views, nothing copied. first_token must be a multiple of
// kActTile (the tiled copy is sliced by whole tiles); tokens past a's end in the last tile
// are those a holds there.
PackedActivations SlicePackedActivations(const PackedActivations& a, int64_t first_token);

// y[t, r] for tokens [0, n_tokens) and row groups [g0, g1) of w; y row stride y_stride floats.
void PackedGemmGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                      int64_t g0, int64_t g1, float* y, int64_t y_stride);

// The scalar definition of the same result (tests compare the SIMD path with it bit for bit).
void PackedGemmReference(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                         float* y, int64_t y_stride);

}  // namespace radixlm::kernels
