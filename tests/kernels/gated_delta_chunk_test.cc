// GatedDeltaChunk (kernels/gated_delta.h): the chunked form gives the outputs and final state
// of token-by-token GatedDeltaStep calls up to float rounding (both against the recurrence in
// double), at several lengths and state sizes, on strided multi-head rows; every ISA level
// computes the same floats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dot.h"
#include "kernels/gated_delta.h"

namespace radixlm::kernels {
namespace {

constexpr int64_t kC = kGatedDeltaChunk;

// n tokens of `heads` heads of size s, laid out as the model's rows: per token a row of
// q (all heads), k (all heads), v (all heads); gates per token and head.
struct Inputs {
  int64_t n, s, heads;
  std::vector<float> rows;       // [n, 3 * heads * s]
  std::vector<float> log_decay;  // [n, heads]
  std::vector<float> beta;       // [n, heads]
  int64_t stride() const { return 3 * heads * s; }
  GatedDeltaTokens Head(int64_t t0, int64_t head, float* out) const {
    const float* row = rows.data() + t0 * stride();
    return {row + head * s, row + heads * s + head * s,           row + 2 * heads * s + head * s,
            stride(),       log_decay.data() + t0 * heads + head, beta.data() + t0 * heads + head,
            heads,          out + t0 * heads * s + head * s,      heads * s};
  }
};

// Random rows as the model feeds them: q and k L2-normed, v normal, beta = sigmoid, log decay
// = -softplus(x) * exp(a) * strength (decays in (0, 1), some close to 1).
Inputs RandomInputs(int64_t n, int64_t s, int64_t heads, uint32_t seed, float strength = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Inputs in{n, s, heads, {}, {}, {}};
  in.rows.resize(n * in.stride());
  for (float& x : in.rows) x = normal(rng);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < 2 * heads; ++h) {  // the q and k heads
      float* x = in.rows.data() + t * in.stride() + h * s;
      double sum = 0.0;
      for (int64_t i = 0; i < s; ++i) sum += static_cast<double>(x[i]) * x[i];
      for (int64_t i = 0; i < s; ++i) x[i] = static_cast<float>(x[i] / std::sqrt(sum));
    }
  }
  for (int64_t i = 0; i < n * heads; ++i) {
    const float a = std::exp(0.5f * normal(rng) - 1.0f);
    const float x = normal(rng);
    in.log_decay.push_back(-std::log1p(std::exp(x)) * a * strength);
    in.beta.push_back(1.0f / (1.0f + std::exp(-normal(rng))));
  }
  return in;
}

// The recurrence in double (value-major), every head: outputs [n, heads * s], final states.
void DoubleReference(const Inputs& in, std::vector<double>* out, std::vector<double>* state) {
  const int64_t s = in.s;
  out->assign(in.n * in.heads * s, 0.0);
  state->assign(in.heads * s * s, 0.0);
  for (int64_t h = 0; h < in.heads; ++h) {
    double* m = state->data() + h * s * s;  // m[j * s + i] = M[j][i]
    for (int64_t t = 0; t < in.n; ++t) {
      const float* row = in.rows.data() + t * in.stride();
      const float* q = row + h * s;
      const float* k = row + in.heads * s + h * s;
      const float* v = row + 2 * in.heads * s + h * s;
      const double decay = std::exp(static_cast<double>(in.log_decay[t * in.heads + h]));
      const double beta = in.beta[t * in.heads + h];
      for (int64_t j = 0; j < s; ++j) {
        double* mj = m + j * s;
        double dk = 0.0;
        for (int64_t i = 0; i < s; ++i) dk += (mj[i] *= decay) * k[i];
        const double delta = (v[j] - dk) * beta;
        double dq = 0.0;
        for (int64_t i = 0; i < s; ++i) dq += (mj[i] += delta * k[i]) * q[i];
        (*out)[t * in.heads * s + h * s + j] = dq / std::sqrt(static_cast<double>(s));
      }
    }
  }
}

// Every head token by token (GatedDeltaStep) or in chunks of kC from token 0 (GatedDeltaChunk
// as `chunk` computes it); outputs [n, heads * s] and key-major states [heads, s, s].
using ChunkFn = void (*)(float*, const GatedDeltaTokens&, int64_t, int64_t, float*);
void RunHeads(const Inputs& in, ChunkFn chunk, std::vector<float>* out, std::vector<float>* state) {
  const int64_t s = in.s;
  out->assign(in.n * in.heads * s, 0.0f);
  state->assign(in.heads * s * s, 0.0f);
  std::vector<float> scratch(GatedDeltaChunkScratch(s));
  for (int64_t h = 0; h < in.heads; ++h) {
    float* m = state->data() + h * s * s;
    for (int64_t t = 0; t < in.n;) {
      const int64_t len = chunk == nullptr ? 1 : std::min(kC, in.n - t);
      const GatedDeltaTokens x = in.Head(t, h, out->data());
      if (chunk == nullptr) {
        GatedDeltaStep(m, x.q, x.k, x.v, std::exp(*x.log_decay), *x.beta, s, x.out);
      } else {
        chunk(m, x, len, s, scratch.data());
      }
      t += len;
    }
  }
}

// max |got - ref| / max |ref| over the outputs and over the states (the states transposed to
// the reference's layout).
struct Errors {
  double out = 0.0, state = 0.0;
};
Errors RelativeErrors(const Inputs& in, const std::vector<float>& out, const std::vector<float>& st,
                      const std::vector<double>& ref_out, const std::vector<double>& ref_st) {
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    worst = std::max(worst, std::abs(out[i] - ref_out[i]));
    scale = std::max(scale, std::abs(ref_out[i]));
  }
  Errors e;
  e.out = worst / scale;
  worst = scale = 0.0;
  const int64_t s = in.s;
  for (int64_t h = 0; h < in.heads; ++h) {
    for (int64_t i = 0; i < s; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        const double ref = ref_st[h * s * s + j * s + i];
        worst = std::max(worst, std::abs(st[h * s * s + i * s + j] - ref));
        scale = std::max(scale, std::abs(ref));
      }
    }
  }
  e.state = worst / scale;
  return e;
}

// (strength 8: decays mostly under 0.1, so the products across a chunk fall below FLT_MIN.)
TEST(GatedDeltaChunk, MatchesTheRecurrenceToFloatRounding) {
  for (float strength : {1.0f, 8.0f}) {
    for (int64_t s : {5, 16, 64, 128}) {
      for (int64_t n : {int64_t{1}, kC - 1, kC, kC + 1, 3 * kC + 5}) {
        const Inputs in =
            RandomInputs(n, s, /*heads=*/2, static_cast<uint32_t>(100 * s + n), strength);
        std::vector<double> ref_out, ref_st;
        DoubleReference(in, &ref_out, &ref_st);
        std::vector<float> step_out, step_st, chunk_out, chunk_st;
        RunHeads(in, nullptr, &step_out, &step_st);
        RunHeads(in, GatedDeltaChunk, &chunk_out, &chunk_st);
        const Errors step = RelativeErrors(in, step_out, step_st, ref_out, ref_st);
        const Errors chunk = RelativeErrors(in, chunk_out, chunk_st, ref_out, ref_st);
        // The chunked form's rounding error: a few float ulps of the largest value (up to
        // 5.2e-7 measured here, where the step's is up to 1.3e-6), far below any real difference
        // between the two.
        EXPECT_LT(chunk.out, 1e-5) << "x" << strength << " S " << s << " n " << n;
        EXPECT_LT(chunk.state, 1e-5) << "x" << strength << " S " << s << " n " << n;
        std::printf(
            "x%.0f S %3ld n %3ld: relative error out %.2e (step %.2e), state %.2e (step %.2e)\n",
            strength, static_cast<long>(s), static_cast<long>(n), chunk.out, step.out, chunk.state,
            step.state);
      }
    }
  }
}

// The dispatched chunk (whatever ISA it picks) and each ISA level give the scalar code's floats.
void ExpectSameAsScalar(ChunkFn fn) {
  for (int64_t s : {8, 20, 64, 128}) {
    for (int64_t n : {int64_t{2}, kC - 3, 2 * kC + 7}) {
      const Inputs in = RandomInputs(n, s, 3, static_cast<uint32_t>(7 * s + n));
      std::vector<float> ref_out, ref_st, out, st;
      RunHeads(in, cpu::scalar::GatedDeltaChunk, &ref_out, &ref_st);
      RunHeads(in, fn, &out, &st);
      ASSERT_EQ(std::memcmp(out.data(), ref_out.data(), out.size() * sizeof(float)), 0)
          << "S " << s << " n " << n;
      ASSERT_EQ(std::memcmp(st.data(), ref_st.data(), st.size() * sizeof(float)), 0)
          << "S " << s << " n " << n;
    }
  }
}

TEST(GatedDeltaChunk, DispatchedIsTheScalarCodeBitForBit) { ExpectSameAsScalar(GatedDeltaChunk); }

#if defined(RADIXLM_KERNELS_X86)
TEST(GatedDeltaChunk, Avx2IsTheScalarCodeBitForBit) {
  if (!IsaAvailable(Isa::kAvx2)) GTEST_SKIP() << "no AVX2";
  ExpectSameAsScalar(cpu::avx2::GatedDeltaChunk);
}
#endif

#if defined(RADIXLM_KERNELS_AVX512)
TEST(GatedDeltaChunk, Avx512IsTheScalarCodeBitForBit) {
  if (!IsaAvailable(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  ExpectSameAsScalar(cpu::avx512::GatedDeltaChunk);
}
#endif

}  // namespace
}  // namespace radixlm::kernels
