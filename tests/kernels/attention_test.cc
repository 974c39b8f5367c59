#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/attention_impl.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::RandomFloats;

struct Cache {
  KvLayerView view;
  std::vector<uint8_t> k, v;  // values of view.dtype
};

Cache MakeCache(KvDtype dtype, int n_slots, int64_t row_elems) {
  Cache c;
  const size_t bytes = static_cast<size_t>(n_slots * row_elems * KvDtypeBytes(dtype));
  c.k.assign(bytes, 0xFF);  // NaN garbage (every dtype) in unused slots must never be read
  c.v.assign(bytes, 0xFF);
  c.view = KvLayerView{dtype, c.k.data(), c.v.data(), row_elems};
  return c;
}

// Value i of a plane as the kernel must read it.
float LoadValue(KvDtype dtype, const std::vector<uint8_t>& plane, int64_t i) {
  if (dtype == KvDtype::kFp8E5M2) return E5M2ToF32(plane[i]);
  uint16_t h;
  std::memcpy(&h, plane.data() + 2 * i, 2);
  return dtype == KvDtype::kF16 ? F16ToF32(h) : Bf16ToF32(h);
}

// A query value as the kernel rounds it: to BF16 for a BF16 cache, else not at all.
float RoundQuery(KvDtype dtype, float x) {
  return dtype == KvDtype::kBF16 ? Bf16ToF32(F32ToBf16(x)) : x;
}

// Naive reference in double over the values actually stored in the cache, with the kernel's
// one rounding of an input (attention.h): q (scaled first if scale_query) is rounded to BF16
// for a BF16 cache.
std::vector<double> NaiveAttention(const AttentionParams& p, const std::vector<float>& q,
                                   const std::vector<int64_t>& q_pos, const Cache& c,
                                   const std::vector<int32_t>& slots) {
  const int hd = p.head_dim, group = p.n_heads / p.n_kv_heads;
  // V: its own plane, or the first vd values of each K head (a latent cache).
  const int vd = p.v_head_dim > 0 ? p.v_head_dim : hd;
  const bool latent = c.view.v == nullptr;
  const std::vector<uint8_t>& v_plane = latent ? c.k : c.v;
  const int n_q = static_cast<int>(q_pos.size());
  std::vector<double> out(static_cast<size_t>(n_q) * p.n_heads * vd, 0.0);
  for (int i = 0; i < n_q; ++i) {
    for (int h = 0; h < p.n_heads; ++h) {
      const int g = h / group;
      std::vector<double> qh(hd);
      for (int d = 0; d < hd; ++d) {
        const float x = q[(i * p.n_heads + h) * hd + d];
        qh[d] = RoundQuery(c.view.dtype, p.scale_query ? x * p.scale : x);
      }
      std::vector<double> scores;
      std::vector<int> keys;
      for (int j = 0; j < static_cast<int>(slots.size()); ++j) {
        if (j > q_pos[i]) continue;
        if (p.sliding_window > 0 && q_pos[i] - j >= p.sliding_window) continue;
        double s = 0;
        for (int d = 0; d < hd; ++d) {
          s += qh[d] * LoadValue(c.view.dtype, c.k, slots[j] * c.view.row_elems + g * hd + d);
        }
        if (!p.scale_query) s *= p.scale;
        if (p.logit_softcap > 0) s = p.logit_softcap * std::tanh(s / p.logit_softcap);
        scores.push_back(s);
        keys.push_back(j);
      }
      double mx = -INFINITY;
      for (double s : scores) mx = std::max(mx, s);
      double z = 0;
      if (p.sinks != nullptr) {  // a logit in the denominator only
        mx = std::max(mx, static_cast<double>(p.sinks[h]));
        z += std::exp(p.sinks[h] - mx);
      }
      for (double& s : scores) z += (s = std::exp(s - mx));
      for (size_t k = 0; k < keys.size(); ++k) {
        const double prob = scores[k] / z;
        for (int d = 0; d < vd; ++d) {
          out[(i * p.n_heads + h) * vd + d] +=
              prob * LoadValue(c.view.dtype, v_plane,
                               slots[keys[k]] * c.view.row_elems + g * (latent ? hd : vd) + d);
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
  bool sinks = false;  // a random sink logit per head (gpt-oss)
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
  // Sinks around the scores' size and well above them (where they take most of the weight).
  const auto sinks = RandomFloats(rng, cs.n_heads, -2.0f, 6.0f);
  if (cs.sinks) p.sinks = sinks.data();
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
  // The reference computes in double; the kernel in float (attention.h): sums differ by a few
  // ulps and its exp by <= 2 ulps.
  const double tol = 2e-5;
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], ref[i], tol) << "i=" << i << " heads=" << cs.n_heads
                                     << " window=" << cs.window << " prefix=" << cs.prefix;
  }
}

TEST(Attention, MatchesNaiveReference) {
  const Case cases[] = {
      {4, 1, 64, 0, 0.0f, 0, 9, KvDtype::kF16},              // prefill from scratch, GQA 4:1
      {4, 2, 32, 0, 0.0f, 20, 5, KvDtype::kBF16},            // cached prefix + chunk, GQA 2:1
      {2, 2, 16, 7, 0.0f, 30, 12, KvDtype::kF16},            // sliding window, MHA
      {4, 1, 256, 0, 50.0f, 70, 1, KvDtype::kF16},           // decode with softcap, Gemma head size
      {4, 1, 256, 512, 0.0f, 1500, 1, KvDtype::kF16},        // long decode: split keys + window
      {8, 2, 24, 0, 0.0f, 700, 1, KvDtype::kBF16},           // long decode, odd head_dim
      {4, 4, 16, 3, 0.0f, 0, 40, KvDtype::kF16},             // window smaller than a key block
      {4, 1, 256, 512, 0.0f, 600, 20, KvDtype::kF16, true},  // Gemma: Q scaled before F16
      {4, 1, 256, 0, 0.0f, 900, 1, KvDtype::kF16, true},     // ... and in split decode
      {4, 1, 256, 512, 50.0f, 600, 20, KvDtype::kFp8E5M2, true},  // one byte per value
      {8, 2, 24, 0, 0.0f, 700, 1, KvDtype::kFp8E5M2},             // ... long decode, odd dim
      // gpt-oss: sinks, sliding window of 128 and full layers, prefill and split decode.
      {8, 2, 64, 128, 0.0f, 0, 40, KvDtype::kF16, false, true},
      {8, 2, 64, 128, 0.0f, 300, 9, KvDtype::kF16, false, true},
      {8, 2, 64, 0, 0.0f, 1500, 1, KvDtype::kF16, false, true},
      {4, 1, 32, 0, 0.0f, 0, 1, KvDtype::kBF16, false, true},  // one key: sink vs one score
      // Without grouped heads (vision encoders' head sizes): tiles of 128 queries, whole key
      // blocks scored for several queries at once.
      {2, 2, 72, 0, 0.0f, 0, 300, KvDtype::kF16},
      {2, 2, 80, 0, 0.0f, 100, 150, KvDtype::kF16},
  };
  std::mt19937 rng(21);
  ThreadPool pool(3);
  for (const Case& cs : cases) {
    RunCase(cs, nullptr, rng);
    RunCase(cs, &pool, rng);
  }
}

// Q is not rounded with an F16 cache (llama.cpp's batched kernel and the exact math keep it in
// float), and is rounded to BF16 with a BF16 cache. Scores 1024 + 1024 * 2^-12 and 1024: a query
// value 1 + 2^-12 rounded to F16 or BF16 would become 1 and weigh the two values equally.
TEST(Attention, QueryStaysFloatWithAnF16Cache) {
  constexpr int kDim = 16;
  AttentionParams p;
  p.n_heads = 1;
  p.n_kv_heads = 1;
  p.head_dim = kDim;
  p.scale = 1.0f;
  std::vector<float> k(2 * kDim, 0.0f), v(2 * kDim, 0.0f), q(kDim, 0.0f);
  k[0] = 1024.0f;         // key 0 reads q[0]
  k[kDim + 1] = 1024.0f;  // key 1 reads q[1]
  v[0] = 1.0f;            // out[0] = key 0's weight
  q[0] = 1.0f + std::ldexp(1.0f, -12);
  q[1] = 1.0f;
  const int32_t slots[2] = {0, 1};
  const int64_t q_pos = 1;
  for (const KvDtype dtype : {KvDtype::kF16, KvDtype::kFp8E5M2, KvDtype::kBF16}) {
    Cache c = MakeCache(dtype, 2, kDim);
    StoreKvRows(c.view, slots, 2, k.data(), v.data());
    std::vector<float> out(kDim, NAN);
    AttentionForSequence(p, q.data(), &q_pos, 1, c.view, slots, 2, out.data(), nullptr);
    const double want = dtype == KvDtype::kBF16 ? 0.5 : 1.0 / (1.0 + std::exp(-0.25));
    EXPECT_NEAR(out[0], want, 1e-5) << KvDtypeName(dtype);
  }
}

// Multi-head latent attention's cache: one K head per token whose first v_head_dim values are
// V (no V plane), many query heads, in prefill after a prefix and in split decode.
TEST(Attention, LatentCacheMatchesNaiveReference) {
  struct LatentCase {
    int n_heads, head_dim, v_head_dim, prefix, n_new;
    KvDtype dtype;
  };
  const LatentCase cases[] = {
      {8, 72, 64, 0, 21, KvDtype::kF16},     // prefill from scratch
      {16, 72, 64, 40, 7, KvDtype::kBF16},   // a chunk after a cached prefix
      {8, 576, 512, 900, 1, KvDtype::kF16},  // DeepSeek's widths, long decode (split keys)
      {4, 40, 32, 300, 3, KvDtype::kFp8E5M2},
  };
  std::mt19937 rng(29);
  ThreadPool pool(3);
  for (const LatentCase& cs : cases) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      AttentionParams p;
      p.n_heads = cs.n_heads;
      p.n_kv_heads = 1;
      p.head_dim = cs.head_dim;
      p.v_head_dim = cs.v_head_dim;
      p.scale = 1.0f / std::sqrt(static_cast<float>(cs.head_dim));
      const int n_kv = cs.prefix + cs.n_new;
      Cache c = MakeCache(cs.dtype, n_kv + 5, cs.head_dim);
      c.view.v = nullptr;
      c.v.assign(c.v.size(), 0);  // must not be read (nor written)
      std::vector<int32_t> slots(n_kv);
      for (int j = 0; j < n_kv; ++j) slots[j] = (j * 7 + 3) % (n_kv + 5);
      const auto k = RandomFloats(rng, static_cast<size_t>(n_kv) * cs.head_dim, -2.0f, 2.0f);
      StoreKvRows(c.view, slots.data(), n_kv, k.data(), nullptr);
      ASSERT_TRUE(std::all_of(c.v.begin(), c.v.end(), [](uint8_t b) { return b == 0; }));
      const auto q =
          RandomFloats(rng, static_cast<size_t>(cs.n_new) * cs.n_heads * cs.head_dim, -2.0f, 2.0f);
      std::vector<int64_t> q_pos(cs.n_new);
      for (int i = 0; i < cs.n_new; ++i) q_pos[i] = cs.prefix + i;
      std::vector<float> out(static_cast<size_t>(cs.n_new) * cs.n_heads * cs.v_head_dim, NAN);
      AttentionForSequence(p, q.data(), q_pos.data(), cs.n_new, c.view, slots.data(), n_kv,
                           out.data(), tp);
      const auto ref = NaiveAttention(p, q, q_pos, c, slots);
      ASSERT_EQ(ref.size(), out.size());
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_NEAR(out[i], ref[i], 4e-5)
            << "i=" << i << " heads=" << cs.n_heads << " head_dim=" << cs.head_dim;
      }
    }
  }
}

// The split of decode work (ranges of whole softmax chunks, folded in order afterwards) must not
// change any bit, whatever the pool size.
// Split decode (a long context, few queries) of a layer with larger heads after one with smaller
// heads, on the same threads: the split states' buffers must grow with the head size too (gemma4
// alternates heads of 256 and 512; the second layer wrote past the first's buffer).
TEST(Attention, SplitDecodeAfterSmallerHeadsMatchesReference) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  for (const Case& cs : {Case{8, 1, 32, 0, 0.0f, 1500, 1, KvDtype::kF16},
                         Case{8, 1, 256, 0, 0.0f, 1200, 1, KvDtype::kF16},
                         Case{8, 1, 64, 0, 0.0f, 1500, 2, KvDtype::kF16},
                         Case{8, 1, 512, 0, 0.0f, 1400, 1, KvDtype::kF16}}) {
    RunCase(cs, &pool, rng);
    RunCase(cs, nullptr, rng);
  }
}

TEST(Attention, SplitWorkGivesIdenticalResults) {
  for (const KvDtype dtype : {KvDtype::kF16, KvDtype::kFp8E5M2}) {
    std::mt19937 rng(23);
    AttentionParams p{4, 1, 256, 0.0625f, 512, 0.0f, true};
    const int n_kv = 1337;
    const int64_t row = 256;
    Cache c = MakeCache(dtype, n_kv, row);
    const auto k = RandomFloats(rng, n_kv * row), v = RandomFloats(rng, n_kv * row);
    std::vector<int32_t> slots(n_kv);
    std::iota(slots.begin(), slots.end(), 0);
    StoreKvRows(c.view, slots.data(), n_kv, k.data(), v.data());
    const auto q = RandomFloats(rng, 4 * 256, -8.0f, 8.0f);
    for (const int64_t pos : {int64_t{n_kv - 1}, int64_t{700}, int64_t{300}}) {
      std::vector<float> serial(q.size()), pooled2(q.size()), pooled4(q.size());
      ThreadPool pool2(2), pool4(4);
      AttentionForSequence(p, q.data(), &pos, 1, c.view, slots.data(), n_kv, serial.data(),
                           nullptr);
      AttentionForSequence(p, q.data(), &pos, 1, c.view, slots.data(), n_kv, pooled2.data(),
                           &pool2);
      AttentionForSequence(p, q.data(), &pos, 1, c.view, slots.data(), n_kv, pooled4.data(),
                           &pool4);
      for (size_t i = 0; i < q.size(); ++i) {
        ASSERT_EQ(serial[i], pooled2[i]) << "pos=" << pos << " i=" << i;
        ASSERT_EQ(serial[i], pooled4[i]) << "pos=" << pos << " i=" << i;
      }
    }
  }
}

// A query's output does not depend on the queries computed with it: a 600-token prefill gives
// every row the bits that the same query alone (decode-style, n_q = 1) gets.
TEST(Attention, RowsDoNotDependOnTheirTile) {
  std::mt19937 rng(29);
  for (const int window : {0, 200}) {
    AttentionParams p{4, 1, 64, 0.125f, window, 0.0f, true};
    const int n_kv = 600;
    const int64_t row = 64;
    Cache c = MakeCache(KvDtype::kF16, n_kv, row);
    const auto k = RandomFloats(rng, n_kv * row), v = RandomFloats(rng, n_kv * row);
    std::vector<int32_t> slots(n_kv);
    std::iota(slots.begin(), slots.end(), 0);
    StoreKvRows(c.view, slots.data(), n_kv, k.data(), v.data());
    const int64_t width = 4 * 64;
    const auto q = RandomFloats(rng, n_kv * width, -4.0f, 4.0f);
    std::vector<int64_t> pos(n_kv);
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<float> all(q.size());
    ThreadPool pool(2);
    AttentionForSequence(p, q.data(), pos.data(), n_kv, c.view, slots.data(), n_kv, all.data(),
                         &pool);
    for (const int i : {0, 7, 255, 256, 300, 511, 599}) {
      std::vector<float> one(width);
      AttentionForSequence(p, q.data() + i * width, &pos[i], 1, c.view, slots.data(), n_kv,
                           one.data(), &pool);
      for (int64_t d = 0; d < width; ++d) {
        ASSERT_EQ(one[d], all[i * width + d]) << "window=" << window << " row=" << i;
      }
    }
  }
}

TEST(AttentionKernels, GgmlExpIsAccurate) {
  EXPECT_EQ(cpu::scalar::GgmlExp(0.0f), 1.0f);
  EXPECT_EQ(cpu::scalar::GgmlExp(-INFINITY), 0.0f);
  EXPECT_EQ(cpu::scalar::GgmlExp(-200.0f), 0.0f);
  for (float x = -100.0f; x <= 0.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    // ggml documents at most 1.95 ulp; subnormal results have less relative precision.
    const double tol = std::max(2.0 * want * 0x1p-23, 0x1p-149);
    ASSERT_NEAR(cpu::scalar::GgmlExp(x), want, tol) << x;
  }
}

#if defined(RADIXLM_KERNELS_X86)
// fn (a SIMD AccumulateTile) gives the scalar kernel's accumulators bit for bit.
void ExpectAccumulateMatchesScalar(cpu::AccumulateTileFn fn, std::initializer_list<int> widths,
                                   std::mt19937& rng) {
  for (const int width : widths) {
    for (const int n_rows : {1, 3, 4, 6, 9}) {
      for (const int n : {1, 6, 8, 17, 64}) {
        const int64_t p_stride = n + 3, acc_stride = width + 5;
        const auto pr = RandomFloats(rng, n_rows * p_stride, 0.0f, 1.0f);
        const auto v = RandomFloats(rng, static_cast<int64_t>(n) * width, -2.0f, 2.0f);
        auto acc_a = RandomFloats(rng, n_rows * acc_stride);
        auto acc_b = acc_a;
        fn(pr.data(), p_stride, n_rows, v.data(), n, width, acc_a.data(), acc_stride);
        cpu::scalar::AccumulateTile(pr.data(), p_stride, n_rows, v.data(), n, width, acc_b.data(),
                                    acc_stride);
        for (size_t i = 0; i < acc_a.size(); ++i) {
          ASSERT_EQ(acc_a[i], acc_b[i]) << "width=" << width << " rows=" << n_rows << " n=" << n;
        }
      }
    }
  }
}

// fn (a SIMD ScoreTile) gives each query the scalar kernel's scores bit for bit.
void ExpectScoreTileMatchesScalar(cpu::ScoreTileFn fn, std::initializer_list<int> head_dims,
                                  std::mt19937& rng) {
  for (const int hd : head_dims) {
    for (const int n_q : {1, 3, 4, 6, 9}) {
      for (const int n : {1, 3, 4, 7, 13, 64}) {
        const auto q = RandomFloats(rng, static_cast<int64_t>(n_q) * hd, -3.0f, 3.0f);
        const auto k = RandomFloats(rng, static_cast<int64_t>(n) * hd, -3.0f, 3.0f);
        std::vector<float> a(static_cast<size_t>(n_q) * (n + 5)), b(n);
        fn(q.data(), n_q, k.data(), n, hd, a.data(), n + 5);
        for (int i = 0; i < n_q; ++i) {
          cpu::scalar::ScoreBlock(q.data() + i * hd, k.data(), n, hd, b.data());
          for (int j = 0; j < n; ++j) {
            ASSERT_EQ(a[i * (n + 5) + j], b[j]) << "hd=" << hd << " n_q=" << n_q << " n=" << n;
          }
        }
      }
    }
  }
}

// The scalar kernels define the numerics; the AVX2 ones must reproduce them bit for bit.
TEST(AttentionKernels, Avx2MatchesScalarBitForBit) {
  if (!IsaAvailable(Isa::kAvx2)) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(24);
  for (const int hd : {8, 24, 256}) {
    for (const int n : {1, 3, 4, 7, 13, 64}) {
      const auto q = RandomFloats(rng, hd, -3.0f, 3.0f);
      const auto k = RandomFloats(rng, static_cast<int64_t>(n) * hd, -3.0f, 3.0f);
      std::vector<float> a(n), b(n);
      cpu::avx2::ScoreBlock(q.data(), k.data(), n, hd, a.data());
      cpu::scalar::ScoreBlock(q.data(), k.data(), n, hd, b.data());
      for (int j = 0; j < n; ++j) ASSERT_EQ(a[j], b[j]) << "hd=" << hd << " n=" << n;
    }
  }
  for (int lane0 = 0; lane0 < cpu::kLanes; ++lane0) {
    for (const int n : {1, 5, 8, 9, 30, 64}) {
      auto s = RandomFloats(rng, n, -40.0f, 5.0f);
      if (n > 3) s[2] = -130.0f;  // ggml_v_expf's |n| > 126 path
      if (n > 4) s[3] = -INFINITY;
      float max = -INFINITY;
      for (float x : s) max = std::max(max, x);
      auto sa = s, sb = s;
      const double ea = cpu::avx2::ExpSum(sa.data(), n, lane0, max);
      const double eb = cpu::scalar::ExpSum(sb.data(), n, lane0, max);
      ASSERT_EQ(ea, eb) << "lane0=" << lane0 << " n=" << n;
      for (int j = 0; j < n; ++j) ASSERT_EQ(sa[j], sb[j]) << "lane0=" << lane0 << " j=" << j;
    }
  }
  // 20: not a multiple of 8 (the scalar fallback)
  ExpectScoreTileMatchesScalar(cpu::avx2::ScoreTile, {8, 20, 24, 256}, rng);
  ExpectAccumulateMatchesScalar(cpu::avx2::AccumulateTile, {5, 8, 24, 256}, rng);
}

// An F16 cache of 80 slots whose rows hold 3 kv heads of hd values, with the slots of a
// sequence in shuffled order; the kernels under test read kv head `head`.
struct ShuffledF16Cache {
  int hd = 0;
  int64_t row_elems = 0, head_off = 0;
  int n_slots = 80;
  std::vector<uint16_t> cache;
  std::vector<int32_t> slots;

  ShuffledF16Cache(std::mt19937& rng, int head_dim, int head)
      : hd(head_dim), row_elems(3 * head_dim), head_off(head * head_dim) {
    cache.resize(n_slots * row_elems);
    const auto vals = RandomFloats(rng, n_slots * row_elems, -3.0f, 3.0f);
    F32ToF16Row(vals.data(), cache.data(), n_slots * row_elems);
    slots.resize(n_slots);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng);
  }
  // The head's values of the first n keys as float rows (the block LoadF16Rows would make).
  std::vector<float> Rows(int n) const {
    std::vector<float> rows(static_cast<size_t>(n) * hd);
    for (int j = 0; j < n; ++j) {
      F16ToF32Row(cache.data() + slots[j] * row_elems + head_off, rows.data() + j * hd, hd);
    }
    return rows;
  }
};

// Decode's in-place kernels read F16 rows of a cache through slots (here in shuffled order,
// one head of several per row): the scalar kernels' values on the converted rows, bit for bit.
TEST(AttentionKernels, Avx2InPlaceF16MatchesScalarBitForBit) {
  if (!IsaAvailable(Isa::kAvx2)) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(26);
  for (const int hd : {8, 24, 256}) {
    const ShuffledF16Cache kv(rng, hd, 1);  // the middle of 3 kv heads
    for (const int n : {1, 2, 3, 7, 64}) {
      const std::vector<float> rows = kv.Rows(n);
      for (const int n_q : {1, 3, 4, 7}) {
        const auto q = RandomFloats(rng, static_cast<int64_t>(n_q) * hd, -3.0f, 3.0f);
        const int64_t stride = n + 5;
        std::vector<float> a(n_q * stride), b(n);
        cpu::avx2::ScoreF16(q.data(), n_q, kv.cache.data(), kv.slots.data(), kv.row_elems,
                            kv.head_off, n, kv.n_slots, hd, a.data(), stride);
        for (int i = 0; i < n_q; ++i) {
          cpu::scalar::ScoreBlock(q.data() + i * hd, rows.data(), n, hd, b.data());
          for (int j = 0; j < n; ++j) {
            ASSERT_EQ(a[i * stride + j], b[j]) << "hd=" << hd << " n_q=" << n_q << " n=" << n;
          }
        }
        const int64_t p_stride = n + 3, acc_stride = hd + 5;
        const auto pr = RandomFloats(rng, n_q * p_stride, 0.0f, 1.0f);
        auto acc_a = RandomFloats(rng, n_q * acc_stride);
        auto acc_b = acc_a;
        cpu::avx2::AccumulateF16(pr.data(), p_stride, n_q, kv.cache.data(), kv.slots.data(),
                                 kv.row_elems, kv.head_off, n, hd, acc_a.data(), acc_stride);
        cpu::scalar::AccumulateTile(pr.data(), p_stride, n_q, rows.data(), n, hd, acc_b.data(),
                                    acc_stride);
        for (size_t i = 0; i < acc_a.size(); ++i) {
          ASSERT_EQ(acc_a[i], acc_b[i]) << "hd=" << hd << " n_q=" << n_q << " n=" << n;
        }
      }
    }
  }
}

// Prefill's transposed key blocks: LoadF16KeysT then score_t over any key range of the block
// gives the scalar kernel's scores on the converted rows, bit for bit.
void ExpectTransposedKeysMatchScalar(cpu::ScoreKeysTFn score_t) {
  std::mt19937 rng(27);
  for (const int hd : {8, 24, 64, 256}) {
    const ShuffledF16Cache kv(rng, hd, 2);  // the last of 3 kv heads
    for (const int n : {1, 3, 8, 13, 40, 64}) {
      const std::vector<float> rows = kv.Rows(n);
      std::vector<float> kt(static_cast<size_t>(hd) * cpu::kAttendBlockMax, NAN);
      cpu::avx2::LoadF16KeysT(kv.cache.data(), kv.slots.data(), kv.row_elems, kv.head_off, hd, n,
                              kv.n_slots, kt.data());
      for (int j = 0; j < (n + 7) / 8 * 8; ++j) {  // the keys past n in their 8 are zero
        for (int d = 0; d < hd; ++d) {
          ASSERT_EQ(kt[cpu::TransposedAt(j, d, hd)], j < n ? rows[j * hd + d] : 0.0f);
        }
      }
      for (const int n_q : {1, 2, 3, 5, 8}) {
        const auto q = RandomFloats(rng, static_cast<int64_t>(n_q) * hd, -3.0f, 3.0f);
        for (const auto& [j0, j1] : {std::pair{0, n}, std::pair{n / 3, n}, std::pair{0, n - n / 4},
                                     std::pair{n / 5, n - n / 3}}) {
          if (j0 >= j1) continue;
          const int64_t stride = n + 5;
          std::vector<float> a(n_q * stride, -1.0f), b(j1 - j0);
          score_t(q.data(), n_q, kt.data(), j0, j1, hd, a.data(), stride);
          for (int i = 0; i < n_q; ++i) {
            cpu::scalar::ScoreBlock(q.data() + i * hd, rows.data() + j0 * hd, j1 - j0, hd,
                                    b.data());
            for (int j = 0; j < j1 - j0; ++j) {
              ASSERT_EQ(a[i * stride + j], b[j])
                  << "hd=" << hd << " n=" << n << " n_q=" << n_q << " j0=" << j0 << " j1=" << j1;
            }
            for (int j = j1 - j0; j < stride; ++j) {
              ASSERT_EQ(a[i * stride + j], -1.0f) << "written outside [j0, j1)";
            }
          }
        }
      }
    }
  }
}

TEST(AttentionKernels, Avx2TransposedKeysMatchScalarBitForBit) {
  if (!IsaAvailable(Isa::kAvx2)) GTEST_SKIP() << "no AVX2";
  ExpectTransposedKeysMatchScalar(cpu::avx2::ScoreKeysT);
}
#endif

#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
TEST(AttentionKernels, Avx512MatchesScalarBitForBit) {
  if (!IsaAvailable(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  std::mt19937 rng(25);
  ExpectScoreTileMatchesScalar(cpu::avx512::ScoreTile, {8, 24, 256}, rng);
  ExpectAccumulateMatchesScalar(cpu::avx512::AccumulateTile, {5, 8, 24, 64, 72, 80, 136, 144, 256},
                                rng);
}

TEST(AttentionKernels, Avx512TransposedKeysMatchScalarBitForBit) {
  if (!IsaAvailable(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  ExpectTransposedKeysMatchScalar(cpu::avx512::ScoreKeysT);
}
#endif

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
