// The packed GEMM's layout and scalar definition for the codebook types (packed_weights.h,
// ScaleForm::kCodebook): IQ3_XXS, IQ2_XXS, IQ3_S, IQ2_XS, IQ2_S, IQ1_S and IQ1_M.
//
// A packed codebook type keeps its GGUF bytes, rearranged for 16 rows per group. Its GGUF block
// of 256 columns is cut into fields (CodebookLayout): per 32-column block j, `block` fields of
// `width` bytes at GGUF offset src + j * stride (grid indices, sign and scale words); per
// super-block, `super` fields (the half d, and scales). In the group, block b (32 columns) holds
// its fields one after the other, each as 16 rows x width bytes (row r's bytes at 16 * field
// offset + width * r), so one vector load takes a field of all 16 rows; after every 8 blocks
// come the super-block's fields the same way. A group is 16 x the GGUF's bytes (padded to 64):
// the file's bytes per weight.
// Numerics (the kernels give these bits): a weight is d * out_scale * scale * q with integer q
// and scale (CodebookBlock: IQ1's q = 8 * grid +- 1, its +-1/8 shift folded in). Per token and
// row, per super-block the exact integer sum
//   isum = sum over its 16 sub-blocks h of 16 columns of scale[h] * sum of q * xq
// over the Q8_K activation quants xq, then acc = fma(float(isum), d * dx, acc) super-block
// after super-block, and y = out_scale * acc, whatever the number of tokens, rows or threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gguf/ggml_types.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {

// A field of a GGUF super-block: block j's (or, for a super-block field, the one: stride 0)
// `width` bytes at offset src + stride * j.
struct CodebookField {
  int src = 0, stride = 0, width = 0;
};

struct CodebookLayout {
  gguf::GgmlType type;
  float out_scale;
  int n_block = 0;
  CodebookField block[10];
  int n_super = 0;
  CodebookField super[4];

  // Offset of block field f in a packed block (and of super field f in the super-block's bytes).
  constexpr size_t BlockFieldOffset(int f) const { return FieldOffset(block, f); }
  constexpr size_t SuperFieldOffset(int f) const { return FieldOffset(super, f); }
  constexpr size_t BlockBytes() const { return FieldOffset(block, n_block); }
  constexpr size_t SuperBytes() const { return FieldOffset(super, n_super); }

 private:
  static constexpr size_t FieldOffset(const CodebookField* fields, int f) {
    size_t off = 0;
    for (int i = 0; i < f; ++i) off += 16 * static_cast<size_t>(fields[i].width);
    return off;
  }
};

// IQ3_XXS: the 8 grid indices of block j (one per 4 columns), then its sign / scale word
// (4 x 7 sign bits, the 4-bit ls at bits 28..31); the half d.
inline constexpr CodebookLayout kIq3xxsLayout{gguf::GgmlType::kIQ3_XXS,
                                              0.25f,
                                              9,
                                              {{2, 8, 1},
                                               {3, 8, 1},
                                               {4, 8, 1},
                                               {5, 8, 1},
                                               {6, 8, 1},
                                               {7, 8, 1},
                                               {8, 8, 1},
                                               {9, 8, 1},
                                               {66, 4, 4}},
                                              1,
                                              {{0, 0, 2}}};

// IQ2_XXS: the 4 grid indices of block j (one per 8 columns), then its sign / scale word
// (4 x 7 sign bits, ls at bits 28..31); the half d.
inline constexpr CodebookLayout kIq2xxsLayout{
    gguf::GgmlType::kIQ2_XXS,
    0.125f,
    5,
    {{2, 8, 1}, {3, 8, 1}, {4, 8, 1}, {5, 8, 1}, {6, 8, 4}},
    1,
    {{0, 0, 2}}};

// IQ3_S: the 8 low bytes of block j's 9-bit grid indices, its byte of 9th bits (bit c: index
// c), its 4 sign bytes (one bit per column); the half d, the 4 bytes of 4-bit scales (block j's
// at bits 4 j..4 j + 3 of the word).
inline constexpr CodebookLayout kIq3sLayout{gguf::GgmlType::kIQ3_S,
                                            1.0f,
                                            10,
                                            {{2, 8, 1},
                                             {3, 8, 1},
                                             {4, 8, 1},
                                             {5, 8, 1},
                                             {6, 8, 1},
                                             {7, 8, 1},
                                             {8, 8, 1},
                                             {9, 8, 1},
                                             {66, 1, 1},
                                             {74, 4, 4}},
                                            2,
                                            {{0, 0, 2}, {106, 0, 4}}};

// IQ2_XS: block j's 4 16-bit words (a 9-bit grid index and 7 sign bits per 8 columns), its
// scale byte (4 bits per 16 columns); the half d.
inline constexpr CodebookLayout kIq2xsLayout{
    gguf::GgmlType::kIQ2_XS,
    0.125f,
    5,
    {{2, 8, 2}, {4, 8, 2}, {6, 8, 2}, {8, 8, 2}, {66, 1, 1}},
    1,
    {{0, 0, 2}}};

// IQ2_S: the 4 low bytes of block j's 10-bit grid indices (one per 8 columns), its 4 sign bytes,
// its byte of high index bits (2 per index), its scale byte (4 bits per 16 columns); the half d.
inline constexpr CodebookLayout kIq2sLayout{
    gguf::GgmlType::kIQ2_S,
    0.125f,
    7,
    {{2, 4, 1}, {3, 4, 1}, {4, 4, 1}, {5, 4, 1}, {34, 4, 4}, {66, 1, 1}, {74, 1, 1}},
    1,
    {{0, 0, 2}}};

// IQ1_S: the 4 low bytes of block j's 11-bit grid indices (one per 8 columns), its 16-bit word
// (4 x 3 high index bits, the 3-bit scale at bits 12..14, the shift's sign at bit 15); the
// half d. Its weight d * (2 s + 1) * (grid +- 1/8) is d / 8 * (2 s + 1) * (8 grid +- 1).
inline constexpr CodebookLayout kIq1sLayout{
    gguf::GgmlType::kIQ1_S,
    0.125f,
    5,
    {{2, 4, 1}, {3, 4, 1}, {4, 4, 1}, {5, 4, 1}, {34, 2, 2}},
    1,
    {{0, 0, 2}}};

// IQ1_M: the 4 low bytes of block j's 11-bit grid indices, its 16-bit word of 4 nibbles (per 8
// columns 3 high index bits and the shift's sign); the 4 16-bit scale words (block j's 3-bit
// scales at bits 6 (j % 2).. of word j / 2, the half d in their top nibbles).
inline constexpr CodebookLayout kIq1mLayout{
    gguf::GgmlType::kIQ1_M,
    0.125f,
    5,
    {{0, 4, 1}, {1, 4, 1}, {2, 4, 1}, {3, 4, 1}, {32, 2, 2}},
    4,
    {{48, 0, 2}, {50, 0, 2}, {52, 0, 2}, {54, 0, 2}}};

// The layout of a packed codebook type, or null for the others.
const CodebookLayout* FindCodebookLayout(gguf::GgmlType type);

// True for the codebook types this build packs on this CPU at the dispatched level (elsewhere
// they keep the dot kernels): every type with a layout where the packed GEMM runs on AVX-512
// VNNI (the avx512 and amx levels); on AVX-VNNI (the avx_vnni level) all but IQ2_XS and IQ1_M;
// on AVX2 (the avx2 level) IQ3_XXS and IQ1_S: where the packed kernel was measured faster than
// the dot kernels (bench/RESULTS.md).
bool IsCodebookPackable(gguf::GgmlType type);

// The layout above (w.type with a layout; cols a multiple of 256).
std::unique_ptr<PackedWeights> PackCodebookWeights(const WeightMatrix& w, ThreadPool* pool);

// Row `lane` of group `group`'s GGUF block of super-block `super` (256 columns), read back from
// the packed bytes: BlockBytes(w.source_type) bytes.
void UnpackCodebookBlock(const PackedWeights& w, int64_t group, int64_t super, int lane,
                         uint8_t* block);

// One GGUF block of a packed codebook type in the integers of the numerics above.
struct CodebookBlock {
  float d = 0.0f;    // the half d (IQ1_M: from its scale words' top nibbles)
  int8_t q[256];     // the signed integer weights
  int8_t scale[16];  // per 16 columns
};
void DecodeCodebookBlock(gguf::GgmlType type, const uint8_t* block, CodebookBlock* out);

// The scalar definition above for row groups [g0, g1).
void CodebookReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                             int64_t g0, int64_t g1, float* y, int64_t y_stride);

}  // namespace radixlm::kernels
