#include "gguf/ggml_types.h"

namespace radixlm::gguf {

std::optional<GgmlTypeTraits> GetTypeTraits(uint32_t type_id) {
  // Block geometry as defined by ggml (ggml-common.h): elements per block, bytes per block.
  switch (static_cast<GgmlType>(type_id)) {
    case GgmlType::kF32: return GgmlTypeTraits{"F32", 1, 4};
    case GgmlType::kF16: return GgmlTypeTraits{"F16", 1, 2};
    case GgmlType::kBF16: return GgmlTypeTraits{"BF16", 1, 2};
    case GgmlType::kQ4_0: return GgmlTypeTraits{"Q4_0", 32, 18};
    case GgmlType::kQ4_1: return GgmlTypeTraits{"Q4_1", 32, 20};
    case GgmlType::kQ5_0: return GgmlTypeTraits{"Q5_0", 32, 22};
    case GgmlType::kQ5_1: return GgmlTypeTraits{"Q5_1", 32, 24};
    case GgmlType::kQ8_0: return GgmlTypeTraits{"Q8_0", 32, 34};
    case GgmlType::kQ8_1: return GgmlTypeTraits{"Q8_1", 32, 36};
    case GgmlType::kQ2_K: return GgmlTypeTraits{"Q2_K", 256, 84};
    case GgmlType::kQ3_K: return GgmlTypeTraits{"Q3_K", 256, 110};
    case GgmlType::kQ4_K: return GgmlTypeTraits{"Q4_K", 256, 144};
    case GgmlType::kQ5_K: return GgmlTypeTraits{"Q5_K", 256, 176};
    case GgmlType::kQ6_K: return GgmlTypeTraits{"Q6_K", 256, 210};
    case GgmlType::kQ8_K: return GgmlTypeTraits{"Q8_K", 256, 292};
    case GgmlType::kI8: return GgmlTypeTraits{"I8", 1, 1};
    case GgmlType::kI16: return GgmlTypeTraits{"I16", 1, 2};
    case GgmlType::kI32: return GgmlTypeTraits{"I32", 1, 4};
    case GgmlType::kI64: return GgmlTypeTraits{"I64", 1, 8};
    case GgmlType::kF64: return GgmlTypeTraits{"F64", 1, 8};
  }
  return std::nullopt;
}

std::string_view GgmlTypeName(GgmlType t) {
  auto traits = GetTypeTraits(t);
  return traits ? traits->name : std::string_view("?");
}

int64_t RowSizeBytes(GgmlType t, int64_t n_elements) {
  auto traits = GetTypeTraits(t);
  if (!traits || n_elements < 0 || n_elements % traits->block_size != 0) return -1;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n_elements / traits->block_size, traits->type_size, &bytes)) return -1;
  return bytes;
}

}  // namespace radixlm::gguf
