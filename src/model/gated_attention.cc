#include "model/gated_attention.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "kernels/backend.h"

namespace radixlm::model {

namespace {

// Rotates the first rope_dims values of each of n_heads heads of row `row` of x NeoX-style.
void RotatePartialNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
                       const float* cos, const float* sin) {
  const int64_t half = rope_dims / 2;
  for (int64_t head = 0; head < n_heads; ++head) {
    float* v = x + head * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float x0 = v[i];
      const float x1 = v[i + half];
      v[i] = std::fma(x0, cos[i], -(x1 * sin[i]));
      v[i + half] = std::fma(x0, sin[i], x1 * cos[i]);
    }
  }
}

}  // namespace

void RunGatedAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& s,
                            const PendingResidual& pending, bool defer_residual) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  const int64_t n = plan.n_tokens;
  const int64_t h = c.hidden_size;
  const int64_t hd = ctx.attention.head_dim;
  const int64_t n_heads = c.n_heads;
  const int64_t n_kv_heads = ctx.attention.n_kv_heads;
  const int64_t qs = n_heads * hd;
  const int64_t kvs = n_kv_heads * hd;
  const int64_t rope_dims = c.LayerAttention(ctx.layer).rope_dims;
  float* q_gate = s.hybrid.q_gate.data();  // [n, 2 * qs]

  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    k.rms_norm(s.x.data() + b * h, w.attn_norm, e - b, h, c.rms_norm_eps, s.xn.data() + b * h);
  };
  const kernels::RowPrologue input_fn = std::ref(input);
  const kernels::MatMulOutput qkv[3] = {{&w.wq, q_gate}, {&w.wk, s.k.data()}, {&w.wv, s.v.data()}};
  k.matmul(std::span<const kernels::MatMulOutput>(qkv, 3), s.xn.data(), n, ctx.pool, &input_fn);

  // Q out of [q | gate] per head; Q/K RMSNorm; RoPE on the first rope_dims of each head.
  const int64_t half = hd / 2;
  ParallelRows(ctx.pool, n, 2 * qs + 2 * kvs, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* q = s.q.data() + r * qs;
      for (int64_t head = 0; head < n_heads; ++head) {
        std::memcpy(q + head * hd, q_gate + r * 2 * qs + head * 2 * hd, hd * sizeof(float));
      }
      float* kr = s.k.data() + r * kvs;
      k.rms_norm(q, w.q_norm, n_heads, hd, c.rms_norm_eps, q);
      k.rms_norm(kr, w.k_norm, n_kv_heads, hd, c.rms_norm_eps, kr);
      if (ctx.rope_cos != nullptr) {
        const float* cos = ctx.rope_cos + r * half;
        const float* sin = ctx.rope_sin + r * half;
        RotatePartialNeox(q, n_heads, hd, rope_dims, cos, sin);
        RotatePartialNeox(kr, n_kv_heads, hd, rope_dims, cos, sin);
      }
    }
  });

  k.store_kv(ctx.kv, ctx.new_slots, n, s.k.data(), s.v.data());
  k.attention(ctx.attention, ctx.kv, ctx.attn_seqs, ctx.pool);

  // attn *= sigmoid(gate), in the region that quantizes attn for attn_output.
  auto gate = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* a = s.attn.data() + r * qs;
      for (int64_t head = 0; head < n_heads; ++head) {
        const float* g = q_gate + r * 2 * qs + head * 2 * hd + hd;
        for (int64_t i = 0; i < hd; ++i) a[head * hd + i] *= 1.0f / (1.0f + std::exp(-g[i]));
      }
    }
  };
  const kernels::RowPrologue gate_fn = std::ref(gate);
  const kernels::MatMulOutput out{&w.wo, s.proj.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&out, 1), s.attn.data(), n, ctx.pool, &gate_fn);
  if (!defer_residual) {
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      ApplyPendingResidual(k, c, PendingResidual{true, nullptr}, s, b, e);
    });
  }
}

}  // namespace radixlm::model
