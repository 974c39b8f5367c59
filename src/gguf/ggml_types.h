// ggml tensor element types as stored in GGUF, with their block geometry.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace radixlm::gguf {

// Numeric values are the on-disk ids (ggml.h). Only ids listed here are accepted by the reader;
// any other id (the removed 4, 5, 31-33 and 36-38, the ternary types 34, 35, the FP4 types 40-42,
// or garbage) fails the parse with "unknown ggml type <id>".
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kMXFP4 = 39,  // OCP microscaling FP4: 32 E2M1 values sharing one E8M0 exponent
};

struct GgmlTypeTraits {
  std::string_view name;  // "Q4_K"
  int64_t block_size;     // elements per block (1 for plain types)
  int64_t type_size;      // bytes per block
};

// Traits of a known type id, or nullopt for an unknown/unsupported id.
std::optional<GgmlTypeTraits> GetTypeTraits(uint32_t type_id);
inline std::optional<GgmlTypeTraits> GetTypeTraits(GgmlType t) {
  return GetTypeTraits(static_cast<uint32_t>(t));
}

// Every type the reader accepts, in id order.
inline constexpr GgmlType kAllGgmlTypes[] = {
    GgmlType::kF32,    GgmlType::kF16,     GgmlType::kQ4_0,  GgmlType::kQ4_1,   GgmlType::kQ5_0,
    GgmlType::kQ5_1,   GgmlType::kQ8_0,    GgmlType::kQ8_1,  GgmlType::kQ2_K,   GgmlType::kQ3_K,
    GgmlType::kQ4_K,   GgmlType::kQ5_K,    GgmlType::kQ6_K,  GgmlType::kQ8_K,   GgmlType::kIQ2_XXS,
    GgmlType::kIQ2_XS, GgmlType::kIQ3_XXS, GgmlType::kIQ1_S, GgmlType::kIQ4_NL, GgmlType::kIQ3_S,
    GgmlType::kIQ2_S,  GgmlType::kIQ4_XS,  GgmlType::kI8,    GgmlType::kI16,    GgmlType::kI32,
    GgmlType::kI64,    GgmlType::kF64,     GgmlType::kIQ1_M, GgmlType::kBF16,
    GgmlType::kMXFP4,
};

// "Q4_K"; "?" for an id outside the enum.
std::string_view GgmlTypeName(GgmlType t);

// Bytes of a row of `n_elements` values of type `t`, or -1 if `n_elements` is negative or not a
// multiple of the type's block size, or if the byte count overflows int64.
int64_t RowSizeBytes(GgmlType t, int64_t n_elements);

}  // namespace radixlm::gguf
