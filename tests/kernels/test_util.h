// Helpers shared by the kernel tests: deterministic random data and reference math.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace radixlm::kernels::testing {

inline std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<uint8_t> RandomBytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Offsets (within a block) of the half-precision scale fields of a block type.
inline std::vector<size_t> HalfScaleOffsets(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0:
      return {offsetof(BlockQ4_0, d)};
    case GgmlType::kQ4_1:
      return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case GgmlType::kQ5_0:
      return {offsetof(BlockQ5_0, d)};
    case GgmlType::kQ5_1:
      return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case GgmlType::kQ8_0:
      return {offsetof(BlockQ8_0, d)};
    case GgmlType::kQ4_K:
      return {offsetof(BlockQ4K, d), offsetof(BlockQ4K, dmin)};
    case GgmlType::kQ5_K:
      return {offsetof(BlockQ5K, d), offsetof(BlockQ5K, dmin)};
    case GgmlType::kQ6_K:
      return {offsetof(BlockQ6K, d)};
    default:
      return {};
  }
}

enum class ScaleKind { kNormal, kTiny, kHuge, kZero, kMixed };

// A row of random blocks: every quant byte random (all bit patterns), scales set by `kind`:
// normal ~ [1e-3, 1e-1], tiny = half subnormals, huge ~ 1e3..6e4, zero, or a mix per block.
inline std::vector<uint8_t> RandomWeightRow(std::mt19937& rng, GgmlType t, int64_t n,
                                            ScaleKind kind) {
  const size_t bytes = RowBytes(t, n);
  std::vector<uint8_t> row = RandomBytes(rng, bytes);
  if (t == GgmlType::kF32) {
    auto f = RandomFloats(rng, n);
    std::memcpy(row.data(), f.data(), bytes);
    return row;
  }
  if (t == GgmlType::kF16 || t == GgmlType::kBF16) {
    auto f = RandomFloats(rng, n);
    QuantizeRow(t, f.data(), row.data(), n);
    return row;
  }
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  const size_t bb = BlockBytes(t);
  for (size_t b = 0; b < bytes / bb; ++b) {
    ScaleKind k = kind;
    if (k == ScaleKind::kMixed) k = static_cast<ScaleKind>(rng() % 4);
    for (size_t off : HalfScaleOffsets(t)) {
      float v = 0.0f;
      switch (k) {
        case ScaleKind::kNormal:
          v = std::pow(10.0f, -3.0f + 2.0f * u01(rng));
          break;
        case ScaleKind::kTiny:
          v = std::ldexp(static_cast<float>(1 + rng() % 1023), -24);
          break;
        case ScaleKind::kHuge:
          v = std::pow(10.0f, 3.0f + 1.8f * u01(rng));
          break;
        default:
          v = 0.0f;
      }
      if (rng() % 2 && (t == GgmlType::kQ4_1 || t == GgmlType::kQ5_1)) v = -v;  // m may be < 0
      const uint16_t h = F32ToF16(v);
      std::memcpy(row.data() + b * bb + off, &h, sizeof(h));
    }
  }
  return row;
}

// Activation row for a weight type: floats quantized to ActivationType(t).
inline std::vector<uint8_t> MakeActivation(GgmlType weight_type, const std::vector<float>& x) {
  const GgmlType act = ActivationType(weight_type);
  std::vector<uint8_t> out(RowBytes(act, static_cast<int64_t>(x.size())));
  QuantizeRow(act, x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

inline std::vector<float> Dequantize(GgmlType t, const void* data, int64_t n) {
  std::vector<float> out(n);
  DequantizeRow(t, data, out.data(), n);
  return out;
}

// Exact-ish reference: sum in double; also returns sum |w_i x_i| for tolerances.
inline double RefDot(const std::vector<float>& a, const std::vector<float>& b, double* abs_sum) {
  double s = 0.0, as = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    s += static_cast<double>(a[i]) * b[i];
    as += std::fabs(static_cast<double>(a[i]) * b[i]);
  }
  if (abs_sum != nullptr) *abs_sum = as;
  return s;
}

// A copy of a block row with the quant bits zeroed (scales kept): dequantizing it gives each
// element's offset term (e.g. -dmin * m for Q4_K), used to size float tolerances where the
// kernels subtract two large sums.
inline std::vector<uint8_t> ZeroQuants(GgmlType t, const std::vector<uint8_t>& row) {
  std::vector<uint8_t> out = row;
  struct Field {
    size_t off, len;
  };
  std::vector<Field> fields;
  switch (t) {
    case GgmlType::kQ4_1:
      fields = {{offsetof(BlockQ4_1, qs), 16}};
      break;
    case GgmlType::kQ5_1:
      fields = {{offsetof(BlockQ5_1, qh), 4 + 16}};
      break;
    case GgmlType::kQ4_K:
      fields = {{offsetof(BlockQ4K, qs), 128}};
      break;
    case GgmlType::kQ5_K:
      fields = {{offsetof(BlockQ5K, qh), 32 + 128}};
      break;
    default:
      return std::vector<uint8_t>();  // no offset term
  }
  const size_t bb = BlockBytes(t);
  for (size_t b = 0; b < row.size() / bb; ++b) {
    for (const Field& f : fields) std::memset(out.data() + b * bb + f.off, 0, f.len);
  }
  return out;
}

// Tolerance scale for a dot: sum_i |x_i| (|w_i| + |offset_i|).
inline double DotMagnitude(GgmlType t, const std::vector<uint8_t>& w, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const std::vector<float> wd = Dequantize(t, w.data(), n);
  const std::vector<uint8_t> z = ZeroQuants(t, w);
  const std::vector<float> zd =
      z.empty() ? std::vector<float>(n, 0.0f) : Dequantize(t, z.data(), n);
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(x[i]) * (std::fabs(wd[i]) + std::fabs(zd[i]));
  return s;
}

inline const GgmlType kWeightTypes[] = {
    GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0,
    GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
    GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K,
};

}  // namespace radixlm::kernels::testing
