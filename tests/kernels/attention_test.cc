#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::RandomFloats;

struct Cache {
  KvLayerView view;
  std::vector<uint16_t> k, v;
};

Cache MakeCache(KvDtype dtype, int n_slots, int64_t row_elems) {
  Cache c;
  c.k.assign(n_slots * row_elems, 0xFFFF);  // NaN garbage in unused slots must never be read
  c.v.assign(n_slots * row_elems, 0xFFFF);
  c.view = KvLayerView{dtype, c.k.data(), c.v.data(), row_elems};
  return c;
}

float LoadHalf(KvDtype dtype, uint16_t h) {
  return dtype == KvDtype::kF16 ? F16ToF32(h) : Bf16ToF32(h);
}

float RoundHalf(KvDtype dtype, float x) {
  return dtype == KvDtype::kF16 ? F16ToF32(F32ToF16(x)) : Bf16ToF32(F32ToBf16(x));
}

// Naive reference in double over the values actually stored in the cache, with llama.cpp's
// roundings (attention.h): q (scaled first if scale_query) and the probabilities are rounded
// to the cache's half type.
std::vector<double> NaiveAttention(const AttentionParams& p, const std::vector<float>& q,
                                   const std::vector<int64_t>& q_pos, const Cache& c,
                                   const std::vector<int32_t>& slots) {
  const int hd = p.head_dim, group = p.n_heads / p.n_kv_heads;
  const int n_q = static_cast<int>(q_pos.size());
  std::vector<double> out(static_cast<size_t>(n_q) * p.n_heads * hd, 0.0);
  for (int i = 0; i < n_q; ++i) {
    for (int h = 0; h < p.n_heads; ++h) {
      const int g = h / group;
      std::vector<double> qh(hd);
      for (int d = 0; d < hd; ++d) {
        const float x = q[(i * p.n_heads + h) * hd + d];
        qh[d] = RoundHalf(c.view.dtype, p.scale_query ? x * p.scale : x);
      }
      std::vector<double> scores;
      std::vector<int> keys;
      for (int j = 0; j < static_cast<int>(slots.size()); ++j) {
        if (j > q_pos[i]) continue;
        if (p.sliding_window > 0 && q_pos[i] - j >= p.sliding_window) continue;
        double s = 0;
        for (int d = 0; d < hd; ++d) {
          s += qh[d] * LoadHalf(c.view.dtype, c.k[slots[j] * c.view.row_elems + g * hd + d]);
        }
        if (!p.scale_query) s *= p.scale;
        if (p.logit_softcap > 0) s = p.logit_softcap * std::tanh(s / p.logit_softcap);
        scores.push_back(s);
        keys.push_back(j);
      }
      double mx = -INFINITY;
      for (double s : scores) mx = std::max(mx, s);
      double z = 0;
      for (double& s : scores) z += (s = std::exp(s - mx));
      for (size_t k = 0; k < keys.size(); ++k) {
        const double prob = RoundHalf(c.view.dtype, static_cast<float>(scores[k] / z));
        for (int d = 0; d < hd; ++d) {
          out[(i * p.n_heads + h) * hd + d] +=
              prob * LoadHalf(c.view.dtype, c.v[slots[keys[k]] * c.view.row_elems + g * hd + d]);
        }
      }
    }
  }
  return out;
}

struct Case {
  int n_heads, n_kv_heads, head_dim, window;
  float softcap;
  int prefix, n_new;  // cached prefix length and new tokens (queries)
  KvDtype dtype;
  bool scale_query = false;
};

void RunCase(const Case& cs, ThreadPool* pool, std::mt19937& rng) {
  AttentionParams p;
  p.n_heads = cs.n_heads;
  p.n_kv_heads = cs.n_kv_heads;
  p.head_dim = cs.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(cs.head_dim));
  p.sliding_window = cs.window;
  p.logit_softcap = cs.softcap;
  p.scale_query = cs.scale_query;
  const int n_kv = cs.prefix + cs.n_new;
  const int64_t row = static_cast<int64_t>(cs.n_kv_heads) * cs.head_dim;
  Cache c = MakeCache(cs.dtype, n_kv * 2 + 3, row);
  // Scattered slots: sequence position j lives in slot perm[j].
  std::vector<int32_t> slots(n_kv);
  std::vector<int32_t> all(n_kv * 2 + 3);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  std::copy(all.begin(), all.begin() + n_kv, slots.begin());
  const auto k = RandomFloats(rng, n_kv * row, -2.0f, 2.0f);
  const auto v = RandomFloats(rng, n_kv * row, -2.0f, 2.0f);
  StoreKvRows(c.view, slots.data(), n_kv - 1, k.data(), v.data());
  StoreKv(c.view, slots[n_kv - 1], k.data() + (n_kv - 1) * row, v.data() + (n_kv - 1) * row);

  const auto q = RandomFloats(rng, cs.n_new * cs.n_heads * cs.head_dim, -2.0f, 2.0f);
  std::vector<int64_t> q_pos(cs.n_new);
  for (int i = 0; i < cs.n_new; ++i) q_pos[i] = cs.prefix + i;
  std::vector<float> out(q.size(), NAN);
  AttentionForSequence(p, q.data(), q_pos.data(), cs.n_new, c.view, slots.data(), n_kv, out.data(),
                       pool);
  const auto ref = NaiveAttention(p, q, q_pos, c, slots);
  // The kernel's float exp and the reference's double one can put a probability on either side
  // of a half-type rounding boundary: one ulp of p (p * 2^-11 for F16, 2^-8 for BF16) times
  // |v| <= 2, for a few keys.
  const double tol = cs.dtype == KvDtype::kF16 ? 1e-4 : 5e-4;
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], ref[i], tol) << "i=" << i << " heads=" << cs.n_heads
                                      << " window=" << cs.window << " prefix=" << cs.prefix;
  }
}

TEST(Attention, MatchesNaiveReference) {
  const Case cases[] = {
      {4, 1, 64, 0, 0.0f, 0, 9, KvDtype::kF16},        // prefill from scratch, GQA 4:1
      {4, 2, 32, 0, 0.0f, 20, 5, KvDtype::kBF16},      // cached prefix + chunk, GQA 2:1
      {2, 2, 16, 7, 0.0f, 30, 12, KvDtype::kF16},      // sliding window, MHA
      {4, 1, 256, 0, 50.0f, 70, 1, KvDtype::kF16},     // decode with softcap, Gemma head size
      {4, 1, 256, 512, 0.0f, 1500, 1, KvDtype::kF16},  // long decode: split keys + window
      {8, 2, 24, 0, 0.0f, 700, 1, KvDtype::kBF16},     // long decode, odd head_dim
      {4, 4, 16, 3, 0.0f, 0, 40, KvDtype::kF16},       // window smaller than a key block
      {4, 1, 256, 512, 0.0f, 600, 20, KvDtype::kF16, true},  // Gemma: Q scaled before F16
      {4, 1, 256, 0, 0.0f, 900, 1, KvDtype::kF16, true},     // ... and in split decode
  };
  std::mt19937 rng(21);
  ThreadPool pool(3);
  for (const Case& cs : cases) {
    RunCase(cs, nullptr, rng);
    RunCase(cs, &pool, rng);
  }
}

TEST(Attention, BatchEqualsPerSequenceCalls) {
  std::mt19937 rng(22);
  AttentionParams p{4, 1, 32, 0.2f, 0, 0.0f};
  const int64_t row = 32;
  Cache c = MakeCache(KvDtype::kF16, 64, row);
  const auto k = RandomFloats(rng, 64 * row), v = RandomFloats(rng, 64 * row);
  std::vector<int32_t> all(64);
  std::iota(all.begin(), all.end(), 0);
  StoreKvRows(c.view, all.data(), 64, k.data(), v.data());
  // Sequence A: 10 cached + 3 new; sequence B: decode at position 40 (shares no slots).
  std::vector<int32_t> slots_a(all.begin(), all.begin() + 13);
  std::vector<int32_t> slots_b(all.begin() + 20, all.begin() + 61);
  const auto qa = RandomFloats(rng, 3 * 4 * 32), qb = RandomFloats(rng, 4 * 32);
  const std::vector<int64_t> pos_a = {10, 11, 12}, pos_b = {40};
  std::vector<float> oa(qa.size()), ob(qb.size()), ra(qa.size()), rb(qb.size());
  const AttentionSequence seqs[] = {{qa.data(), pos_a.data(), 3, slots_a.data(), 13, oa.data()},
                                    {qb.data(), pos_b.data(), 1, slots_b.data(), 41, ob.data()}};
  ThreadPool pool(2);
  AttentionForBatch(p, c.view, seqs, &pool);
  AttentionForSequence(p, qa.data(), pos_a.data(), 3, c.view, slots_a.data(), 13, ra.data(),
                       nullptr);
  AttentionForSequence(p, qb.data(), pos_b.data(), 1, c.view, slots_b.data(), 41, rb.data(),
                       nullptr);
  for (size_t i = 0; i < oa.size(); ++i) EXPECT_NEAR(oa[i], ra[i], 1e-6);
  for (size_t i = 0; i < ob.size(); ++i) EXPECT_NEAR(ob[i], rb[i], 1e-6);
}

}  // namespace
}  // namespace radixlm::kernels
