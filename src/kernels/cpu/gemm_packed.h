// ISA implementations behind kernels/packed_weights.h. The avx2 namespace is compiled with
// -mavx2 -mfma -mf16c where RADIXLM_KERNELS_X86 is defined (call only if CpuHasAvx2()); avxvnni
// adds -mavxvnni where RADIXLM_KERNELS_AVX_VNNI is defined (call only if CpuHasAvxVnni()); the
// avx512vnni namespace is compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni
// and exists only where RADIXLM_KERNELS_AVX512_VNNI is defined; call it only if
// CpuHasAvx512Vnni().
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/packed_weights.h"

namespace radixlm::kernels::cpu {

// Decode at a few tokens streams every weight from memory once per step; the hardware
// prefetchers alone leave a thread's stream of small matrices latency-bound. A kernel calls
// PrefetchAhead(group, b * stream_bytes, stream_bytes) for each block b of a group it starts
// (group: the group's first byte, 64-byte aligned; stream_bytes: the block's share of the
// group, quants and scales), in the first token tile's pass over a group only (later tiles find
// the group in cache). The layout is one sequential stream per group, groups in order; each
// line of the block's share is asked for once, kPrefetchNear bytes further on into L1 and
// kPrefetchFar bytes further on into L2. On an Intel Xeon (Emerald Rapids, AVX-512, 2 threads;
// kernels_bench BM_DecodeStream's matrices, the variants alternating in one process) Q4_K
// streamed 17.3-19.2 GB/s with the earlier scheme (one L1 request 8 KiB ahead per 64 bytes of
// stream_bytes from the block's quants: some lines twice), 22.5 asking for the quants' lines
// once each, 26.4-29.0 with the second, L2 request 32 KiB ahead (24 and 48 KiB far, 4 and 16
// KiB near: the same); Q6_K 18.7-19.2 -> 24.5-27.9. One thread: Q4_K 7.9-9.5 -> 10.7-14.2, Q6_K
// 9.6-10.1 -> 13.2-14.9 (bench/RESULTS.md, nineteenth session). The codebook kernel took the
// same scheme unmeasured.
inline void PrefetchAhead(const uint8_t* group, size_t lo, size_t bytes) {
  for (size_t o = (lo + 63) & ~size_t{63}; o < lo + bytes; o += 64) {
    __builtin_prefetch(group + kPrefetchNear + o, 0, 3);
    __builtin_prefetch(group + kPrefetchFar + o, 0, 2);
  }
}
// The 256-bit kernels (AVX2, AVX-VNNI; the levels of CPUs without AVX-512) ask for the lines
// into L2 (prefetcht1) 64 KiB ahead instead: on a Zen 3 (AVX2 only, 2 threads), the 1B
// shape's layer matrices at one token took 25-27 ms against 34.5 ms with L1 requests 8 KiB
// ahead (16 and 32 KiB: 28-33 ms; 96 and 128 KiB: as 64; kernels_bench
// BM_ModelDecodePacked).
inline constexpr size_t kPrefetchDistanceL2 = 65536;
inline void PrefetchAheadL2(const uint8_t* blk, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(blk + kPrefetchDistanceL2 + o, 0, 2);
}

// One row of n (a multiple of act_block) floats -> int8 quants qs[n], per scale block of
// act_block elements: q = round-to-nearest-even(x * id) with id = 127 / max|x| (0 for a zero
// block); the block's scale is F16-rounded max|x| / 127 for act_block 32 (as Q8_0 stores it)
// and 1 / id for 256 (as Q8_K). dx[n / 32] = the scale of each 32-block, sum16[2 * (n / 32)] =
// quant sums per 16, dxs[n / 32] = dx * (sum of the 32-block's quants).
void QuantizeActivationRowScalar(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                                 int32_t* sum16, float* dxs);

namespace avx2 {
void QuantizeActivationRow(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                           int32_t* sum16, float* dxs);
// vpmaddubsw: 8 rows x up to 4 tokens per tile.
void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride);
// Float weights (float_bytes 4 or 2): y = w x in float, 16 rows x up to 6 tokens per tile.
void FloatGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
               int64_t g1, float* y, int64_t y_stride);
// The codebook types (kernels/packed_codebook.h): 8 rows x up to 4 tokens per tile.
void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride);
}  // namespace avx2

namespace avx512 {  // with RADIXLM_KERNELS_AVX512 (AVX-512 F/BW/VL/DQ flags); CpuHasAvx512()
// Float weights: 16 rows per zmm x up to 8 tokens per tile.
void FloatGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
               int64_t g1, float* y, int64_t y_stride);
}  // namespace avx512

namespace avxvnni {
// vpdpbusd on ymm: 8 rows x up to 4 tokens per tile.
void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride);
// The codebook types (kernels/packed_codebook.h): 8 rows x up to 4 tokens per tile.
void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride);
}  // namespace avxvnni

namespace avx512vnni {
void QuantizeActivationRow(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                           int32_t* sum16, float* dxs);
// use_amx: 16-token tiles through amx::PackedGemm16 (requires amx::Supports(w)).
void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride, bool use_amx);
// The codebook types (kernels/packed_codebook.h): 16 rows x up to 8 tokens per tile; with
// use_amx (only where CodebookAmxBuilt() and the CPU has AMX-INT8), 16 rows x 16 tokens per
// AMX-INT8 tile product where 16 tokens remain, the same bits.
void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride, bool use_amx = false);
// Whether this build compiled CodebookGemm's AMX tiles.
bool CodebookAmxBuilt();
}  // namespace avx512vnni

// Compiled with -mamx-tile -mamx-int8 where RADIXLM_KERNELS_AMX is defined; call only if
// CpuHasAmxInt8().
namespace amx {
// One scale per 32-block (not Q6_K, Q2_K, Q3_K), u stored as is or looked up through w.levels
// (the lookup types), not the codebook types.
bool Supports(const PackedWeights& w);
// Configure this thread's tiles before PackedGemm16 calls, and release them after (a thread
// holding tile state pays for it at every context switch and may run at a lower clock).
void Begin();
void End();
// y[t0 .. t0 + 16, rows of group g] (store_mask: the group's valid rows).
void PackedGemm16(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0,
                  float* y, int64_t y_stride, uint16_t store_mask);
}  // namespace amx

// BF16 weights packed in k pairs (bf16_pairs) against bf16 activations (act_block kActBf16):
// y[tokens [0, n_tokens), rows of groups [g0, g1)].
// Compiled with the AVX-512 flags and -mavx512bf16 where RADIXLM_KERNELS_AVX512_BF16 is
// defined; call only if CpuHasAvx512Bf16(). Bit for bit PackedGemmReference.
namespace avx512bf16 {
void Bf16Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
              int64_t g1, float* y, int64_t y_stride);
}  // namespace avx512bf16

// Compiled with -mamx-tile -mamx-bf16 where RADIXLM_KERNELS_AMX_BF16 is defined; call only if
// CpuHasAmxBf16(). Configures and releases this thread's tiles itself. Within a float rounding
// of PackedGemmReference per addition (tdpbf16ps rounds otherwise than vdpbf16ps), and the
// same bits for a token whatever the other tokens and their number.
namespace amxbf16 {
void Bf16Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
              int64_t g1, float* y, int64_t y_stride);
}  // namespace amxbf16

}  // namespace radixlm::kernels::cpu
