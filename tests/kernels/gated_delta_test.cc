// GatedDeltaStep (kernels/gated_delta.h): every ISA level gives the floats of the plain per-row
// loop, bit for bit, on a key-major state, over many steps and at several state sizes.
#include "kernels/gated_delta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dot.h"

namespace radixlm::kernels {
namespace {

// The delta rule as written in the model's comment, on a value-major matrix (row j = M[j]):
// each row decayed, its delta from the row's dot with k, updated, its dot with q.
void PerRowReference(std::vector<float>& mv, const float* q, const float* k, const float* v,
                     float decay, float beta, int64_t s, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t j = 0; j < s; ++j) {
    float* row = mv.data() + j * s;
    for (int64_t i = 0; i < s; ++i) row[i] *= decay;
    float dk = 0.0f;
    for (int64_t i = 0; i < s; ++i) dk += row[i] * k[i];
    const float delta = (v[j] - dk) * beta;
    for (int64_t i = 0; i < s; ++i) row[i] += delta * k[i];
    float dq = 0.0f;
    for (int64_t i = 0; i < s; ++i) dq += row[i] * q[i];
    out[j] = dq * scale;
  }
}

using StepFn = void (*)(float*, const float*, const float*, const float*, float, float, int64_t,
                        float*);

struct Token {
  std::vector<float> q, k, v;
  float decay, beta;
};

std::vector<Token> Tokens(int64_t s, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<Token> tokens(n);
  for (Token& t : tokens) {
    for (auto* x : {&t.q, &t.k, &t.v}) {
      x->resize(s);
      for (float& e : *x) e = normal(rng);
    }
    for (auto* x : {&t.q, &t.k}) {  // L2-normed, as the model feeds them
      double sum = 0.0;
      for (float e : *x) sum += static_cast<double>(e) * e;
      for (float& e : *x) e = static_cast<float>(e / std::sqrt(sum));
    }
    t.decay = 0.5f + 0.5f * unit(rng);
    t.beta = unit(rng);
  }
  return tokens;
}

// Runs `n` steps with `fn` on a key-major state and the reference on a value-major one; every
// output and the final state (transposed) must be the same floats.
void ExpectSameAsReference(StepFn fn, int64_t s, int n) {
  const std::vector<Token> tokens = Tokens(s, n, 1234u + static_cast<uint32_t>(s));
  std::vector<float> mk(s * s, 0.0f), mv(s * s, 0.0f), out(s), ref(s);
  for (int t = 0; t < n; ++t) {
    const Token& x = tokens[t];
    fn(mk.data(), x.q.data(), x.k.data(), x.v.data(), x.decay, x.beta, s, out.data());
    PerRowReference(mv, x.q.data(), x.k.data(), x.v.data(), x.decay, x.beta, s, ref.data());
    ASSERT_EQ(std::memcmp(out.data(), ref.data(), s * sizeof(float)), 0)
        << "S " << s << " token " << t;
  }
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j < s; ++j) {
      ASSERT_EQ(mk[i * s + j], mv[j * s + i]) << "S " << s << " M[" << j << "][" << i << "]";
    }
  }
  float sum = 0.0f;  // the state moved (a step that wrote nothing would pass the above)
  for (float e : mk) sum += std::fabs(e);
  EXPECT_GT(sum, 0.0f);
}

TEST(GatedDeltaStep, ScalarIsThePerRowLoopBitForBit) {
  for (int64_t s : {1, 5, 16, 64, 100, 128})
    ExpectSameAsReference(cpu::scalar::GatedDeltaStep, s, 24);
}

TEST(GatedDeltaStep, DispatchedIsThePerRowLoopBitForBit) {
  for (int64_t s : {16, 24, 128, 256}) ExpectSameAsReference(GatedDeltaStep, s, 24);
}

#if defined(RADIXLM_KERNELS_X86)
TEST(GatedDeltaStep, Avx2IsThePerRowLoopBitForBit) {
  if (!IsaAvailable(Isa::kAvx2)) GTEST_SKIP() << "no AVX2";
  for (int64_t s : {8, 16, 40, 128, 256}) ExpectSameAsReference(cpu::avx2::GatedDeltaStep, s, 24);
}
#endif

#if defined(RADIXLM_KERNELS_AVX512)
TEST(GatedDeltaStep, Avx512IsThePerRowLoopBitForBit) {
  if (!IsaAvailable(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  for (int64_t s : {16, 48, 128, 144, 256}) {
    ExpectSameAsReference(cpu::avx512::GatedDeltaStep, s, 24);
  }
}
#endif

}  // namespace
}  // namespace radixlm::kernels
