// The packed GEMM's layout and scalar definition for the codebook types (packed_weights.h,
// ScaleForm::kIq3Xxs). So far IQ3_XXS; the other codebook types (IQ3_S, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ1_S, IQ1_M) are not packed and run on the dot kernels (dot.h).
//
// IQ3_XXS keeps its GGUF bytes, rearranged for 16 rows per group. Per group, block b (32
// columns) holds 192 bytes:
//   bytes 16 c + r (c < 8, r < 16): row r's grid index of chunk c (columns 4c..4c+3), one
//     entry of kIq3xxsGrid (four magnitudes);
//   bytes 128 + 4 r: row r's 32-bit word of the block as the GGUF stores it: 4 x 7 sign bits
//     (bits 7l..7l+6 for columns 8l..8l+7; the 8th sign is their parity) and the 4-bit ls
//     (bits 28..31);
// after every block, per super-block of 256 columns, the rows' half d[16] (32 bytes): 16 x 98
// bytes per 16 rows x 256 columns, the GGUF's bytes per weight.
// A weight is d * (2 ls + 1) / 4 * grid * sign. Numerics (the kernels give these bits): per
// token and row, per super-block the exact integer sum
//   isum = sum over its 8 blocks of (2 ls + 1) * sum over 32 columns of (grid * sign) * xq
// over the Q8_K activation quants xq, then acc = fma(float(isum), d * dx, acc) super-block
// after super-block, and y = 0.25 * acc, whatever the number of tokens, rows or threads.
#pragma once

#include <cstdint>
#include <memory>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {

// True for the codebook types this build packs on this CPU: IQ3_XXS where the packed GEMM runs
// on AVX-512 VNNI (the avx512 and amx levels); elsewhere they keep the dot kernels.
bool IsCodebookPackable(gguf::GgmlType type);

// The layout above (w.type IQ3_XXS; cols a multiple of 256).
std::unique_ptr<PackedWeights> PackCodebookWeights(const WeightMatrix& w, ThreadPool* pool);

// The signed weight grid * sign (without scales) of column k (0..31) of row `lane` in block
// `block` of group `group`, and that block's integer scale 2 ls + 1 for the row.
int CodebookWeight(const PackedWeights& w, int64_t group, int64_t block, int lane, int k);
int CodebookBlockScale(const PackedWeights& w, int64_t group, int64_t block, int lane);
// The float factor of the final sum (0.25 for IQ3_XXS).
float CodebookOutScale(const PackedWeights& w);

// The scalar definition above for row groups [g0, g1).
void CodebookReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                             int64_t g0, int64_t g1, float* y, int64_t y_stride);

}  // namespace radixlm::kernels
