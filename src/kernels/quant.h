// Row-level quantization API: sizes, dequantization, activation quantizers, and reference
// weight quantizers for the ggml block types (layouts in quant_blocks.h).
//
// A "row" is n consecutive elements of one type; for block types n must be a multiple of the
// block size (IsRowSizeValid). Functions here are stateless and thread-safe.
//
// Supported types:
//   storage/dequant:  F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q8_K,
//                     and the low-bit weight types Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, IQ3_XXS,
//                     IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M (dequantized bit for bit as ggml;
//                     no quantizer: their models come quantized by llama.cpp), MXFP4
//   weight quantizers (reference, used by tests and tiny test models):
//                     F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4
//                     (MXFP4: the scheme of ggml's quantize_row_mxfp4_ref)
//   activation quantizers (what VecDot pairs with, see dot.h): Q8_0, Q8_K
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"
#include "kernels/quant_blocks.h"

namespace radixlm::kernels {

using gguf::GgmlType;

// Block geometry known to the kernels (own table; does not need the gguf library).
// Returns false for types the kernels do not support.
bool IsSupportedType(GgmlType t);
int64_t BlockSize(GgmlType t);  // elements per block; 1 for F32/F16/BF16; 0 if unsupported
size_t BlockBytes(GgmlType t);  // bytes per block; 0 if unsupported
// n >= 0 and a multiple of BlockSize(t).
bool IsRowSizeValid(GgmlType t, int64_t n);
// Bytes of a row of n elements. Requires IsRowSizeValid(t, n).
size_t RowBytes(GgmlType t, int64_t n);

// dst[0..n) = dequantized src row. Requires IsSupportedType(t) and IsRowSizeValid(t, n).
void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n);

// Quantizes a float row into type t (any weight-quantizer type above, or Q8_K). dst must hold
// RowBytes(t, n). Requires IsRowSizeValid(t, n). Simple round-to-nearest quantizers (no
// importance matrix); K-quant scales are chosen by a small search, so the round-trip error is
// close to ggml's reference quantizers. Deterministic. Not tuned for speed.
void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n);

// Fast activation quantizers (ggml's schemes; the SIMD and scalar paths give identical bytes):
//   Q8_0: d = amax / 127 (stored as half), q = round_half_even(x * (127 / amax)); all-zero -> d = 0
//   Q8_K: d = 1 / (127 / amax) (float), q = round_half_even(x * (127 / amax)), bsums filled.
// These are bit for bit what ggml's x86 CPU backend feeds its dot products (AVX2
// quantize_row_q8_0; quantize_row_q8_K up to the sign convention: ggml scales by -127 / max
// with max the signed element of largest magnitude, which negates both d and q), so matmul
// results match llama.cpp's exactly wherever the dots sum in the same order.
// n must be a multiple of 32 (Q8_0) / 256 (Q8_K). These are also what QuantizeRow uses for
// Q8_0 / Q8_K.
void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n);
void QuantizeRowQ8K(const float* src, BlockQ8K* dst, int64_t n);

}  // namespace radixlm::kernels
