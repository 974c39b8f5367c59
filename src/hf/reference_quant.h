// ggml's reference weight quantizers, the ones llama.cpp's tools use without an importance
// matrix, reproduced bit for bit: gguf-py's / ggml's Q8_0 (what convert_hf_to_gguf.py's
// --outtype q8_0 writes) and ggml's quantize_row_q4_K_ref / quantize_row_q6_K_ref (what
// llama-quantize writes for Q4_K / Q6_K tensors when no imatrix is given).
//
// Bit identity rests on doing ggml's float operations in ggml's order, one rounding each: this
// file is compiled with -ffp-contract=off (no fused multiply-adds), as ggml's reference code is
// (built for baseline x86-64, which has no FMA). kernels::QuantizeRow's K-quants search their
// scales their own way and are not these.
//
// Each function quantizes one row of n floats; n must be a multiple of the block size (32 for
// Q8_0, 256 for Q4_K / Q6_K), and dst holds RowBytes(type, n). Stateless and thread-safe.
#pragma once

#include <cstdint>

namespace radixlm::hf {

// d = amax / 127 (stored as half), q = round-half-away(x * (1 / d)).
void QuantizeRowQ8_0Reference(const float* src, uint8_t* dst, int64_t n);
// quantize_row_q4_K_ref: per 32 values a scale and a min chosen by make_qkx2_quants (weights
// mean(|x|^2)^(1/2) + |x|, 21 candidate scales), both quantized to 6 bits.
void QuantizeRowQ4KReference(const float* src, uint8_t* dst, int64_t n);
// quantize_row_q6_K_ref: per 16 values a scale chosen by make_qx_quants (rmse_type 1, 19
// candidates), quantized to 8 bits against the block's largest.
void QuantizeRowQ6KReference(const float* src, uint8_t* dst, int64_t n);

}  // namespace radixlm::hf
