#include "gguf/ggml_types.h"

namespace radixlm::gguf {

namespace {

struct TypeRow {
  GgmlType type;
  GgmlTypeTraits traits;
};

// Block geometry as defined by ggml (ggml-common.h): elements per block, bytes per block.
constexpr TypeRow kTypeTable[] = {
    {GgmlType::kF32, {"F32", 1, 4}},
    {GgmlType::kF16, {"F16", 1, 2}},
    {GgmlType::kQ4_0, {"Q4_0", 32, 18}},
    {GgmlType::kQ4_1, {"Q4_1", 32, 20}},
    {GgmlType::kQ5_0, {"Q5_0", 32, 22}},
    {GgmlType::kQ5_1, {"Q5_1", 32, 24}},
    {GgmlType::kQ8_0, {"Q8_0", 32, 34}},
    {GgmlType::kQ8_1, {"Q8_1", 32, 36}},
    {GgmlType::kQ2_K, {"Q2_K", 256, 84}},
    {GgmlType::kQ3_K, {"Q3_K", 256, 110}},
    {GgmlType::kQ4_K, {"Q4_K", 256, 144}},
    {GgmlType::kQ5_K, {"Q5_K", 256, 176}},
    {GgmlType::kQ6_K, {"Q6_K", 256, 210}},
    {GgmlType::kQ8_K, {"Q8_K", 256, 292}},
    {GgmlType::kIQ2_XXS, {"IQ2_XXS", 256, 66}},
    {GgmlType::kIQ2_XS, {"IQ2_XS", 256, 74}},
    {GgmlType::kIQ3_XXS, {"IQ3_XXS", 256, 98}},
    {GgmlType::kIQ1_S, {"IQ1_S", 256, 50}},
    {GgmlType::kIQ4_NL, {"IQ4_NL", 32, 18}},
    {GgmlType::kIQ3_S, {"IQ3_S", 256, 110}},
    {GgmlType::kIQ2_S, {"IQ2_S", 256, 82}},
    {GgmlType::kIQ4_XS, {"IQ4_XS", 256, 136}},
    {GgmlType::kI8, {"I8", 1, 1}},
    {GgmlType::kI16, {"I16", 1, 2}},
    {GgmlType::kI32, {"I32", 1, 4}},
    {GgmlType::kI64, {"I64", 1, 8}},
    {GgmlType::kF64, {"F64", 1, 8}},
    {GgmlType::kIQ1_M, {"IQ1_M", 256, 56}},
    {GgmlType::kBF16, {"BF16", 1, 2}},
    {GgmlType::kMXFP4, {"MXFP4", 32, 17}},
};

}  // namespace

std::optional<GgmlTypeTraits> GetTypeTraits(uint32_t type_id) {
  for (const TypeRow& row : kTypeTable) {
    if (static_cast<uint32_t>(row.type) == type_id) return row.traits;
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
