#include "model/mla_attention.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <span>

#include "kernels/backend.h"

namespace radixlm::model {

namespace {

// Rotates the pairs (x[2i], x[2i+1]) of x[0, dims) (ApplyRopeTables' arithmetic).
void RotatePairs(float* x, int64_t dims, const float* cos, const float* sin) {
  for (int64_t i = 0; i < dims / 2; ++i) {
    const float x0 = x[2 * i];
    const float x1 = x[2 * i + 1];
    x[2 * i] = std::fma(x0, cos[i], -(x1 * sin[i]));
    x[2 * i + 1] = std::fma(x0, sin[i], x1 * cos[i]);
  }
}

// Where a per-head operand lives: head h of token t is `width` values at
// data + t * stride + h * head_stride.
struct HeadRows {
  float* data;
  int64_t stride;
  int64_t head_stride;
  int64_t width;
};

// For token blocks of the step: out[t, h] = heads[h] · in[t, h], through one grouped GEMM per
// block (the inputs gathered by head in its prologue).
void PerHeadMatMul(const LayerContext& ctx, MlaScratch& m, int64_t n,
                   const std::vector<kernels::WeightMatrix>& heads, const HeadRows& in,
                   const HeadRows& out) {
  const int64_t in_width = in.width, out_width = out.width;
  const int64_t n_heads = static_cast<int64_t>(heads.size());
  const int64_t block = m.block;
  for (int64_t t0 = 0; t0 < n; t0 += block) {
    const int64_t rows = std::min(block, n - t0);
    m.items.clear();
    for (int64_t h = 0; h < n_heads; ++h) {
      kernels::GroupedMatMulItem item;
      item.w[0] = &heads[h];
      item.y[0] = m.heads_out.data() + h * block * out_width;
      item.first = h * block;
      item.rows = rows;
      m.items.push_back(item);
    }
    auto gather = [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t h = r / block, t = r % block;
        float* dst = m.heads_in.data() + r * in_width;
        if (t >= rows) {
          std::memset(dst, 0, in_width * sizeof(float));  // padding: finite, dropped
        } else {
          std::memcpy(dst, in.data + (t0 + t) * in.stride + h * in.head_stride,
                      in_width * sizeof(float));
        }
      }
    };
    const kernels::RowPrologue gather_fn = std::ref(gather);
    ctx.backend->grouped_matmul(m.items, m.heads_in.data(), n_heads * block, ctx.pool, &gather_fn);
    ParallelRows(ctx.pool, rows, n_heads * out_width, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        for (int64_t h = 0; h < n_heads; ++h) {
          std::memcpy(out.data + (t0 + t) * out.stride + h * out.head_stride,
                      m.heads_out.data() + (h * block + t) * out_width, out_width * sizeof(float));
        }
      }
    });
  }
}

// Llama 4's attention temperature for the query at `position` (ModelConfig::
// attn_temperature_scale), as llama.cpp's llm_graph_input_attn_temp evaluates it (float
// position and quotient, the rest in double).
float QueryTemperature(const ModelConfig& c, int64_t position) {
  const float pos = static_cast<float>(position);
  return static_cast<float>(std::log(std::floor((pos + c.attn_temperature_offset) /
                                                static_cast<float>(c.attn_temperature_floor)) +
                                     1.0) *
                                c.attn_temperature_scale +
                            1.0);
}

}  // namespace

void RunMlaAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& s,
                          const PendingResidual& pending, bool defer_residual) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  MlaScratch& m = s.mla;
  const int64_t n = plan.n_tokens;
  const int64_t h = c.hidden_size;
  const int64_t n_heads = c.n_heads;
  const int64_t r = c.mla_kv_rank;
  const int64_t p = c.rope_dims;
  const int64_t key = c.mla_key_dim;
  const int64_t nope = key - p;
  const int64_t row = r + p;         // a cache row, and an absorbed query head
  const int64_t qs = n_heads * row;  // scratch.q's rows (the sequences point with this width)

  // [x += pending residual]; xn = attn_norm(x), in the region that quantizes xn.
  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    k.rms_norm(s.x.data() + b * h, w.attn_norm, e - b, h, c.rms_norm_eps, s.xn.data() + b * h);
  };
  const kernels::RowPrologue input_fn = std::ref(input);
  const bool low_rank_q = c.mla_q_rank > 0;
  const kernels::MatMulOutput first[2] = {low_rank_q ? kernels::MatMulOutput{&w.wq_a, m.q_a.data()}
                                                     : kernels::MatMulOutput{&w.wq, m.q_raw.data()},
                                          {&w.wkv_a, m.kv_a.data()}};
  k.matmul(std::span<const kernels::MatMulOutput>(first, 2), s.xn.data(), n, ctx.pool, &input_fn);
  if (low_rank_q) {
    // q = attn_q_b(RMSNorm(q_a)), the norm where q_a is quantized.
    const int64_t qr = c.mla_q_rank;
    auto norm = [&](int64_t b, int64_t e) {
      float* q = m.q_a.data() + b * qr;
      k.rms_norm(q, w.q_a_norm, e - b, qr, c.rms_norm_eps, q);
    };
    const kernels::RowPrologue norm_fn = std::ref(norm);
    const kernels::MatMulOutput qb{&w.wq_b, m.q_raw.data()};
    k.matmul(std::span<const kernels::MatMulOutput>(&qb, 1), m.q_a.data(), n, ctx.pool, &norm_fn);
  }

  // The cache rows (normed latent, roped key part) and the queries' roped parts.
  const int64_t half = ctx.rope->half();
  ParallelRows(ctx.pool, n, qs + row, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const float* cos = ctx.rope_cos + t * half;
      const float* sin = ctx.rope_sin + t * half;
      const float* kv = m.kv_a.data() + t * row;
      float* kr = s.k.data() + t * row;
      k.rms_norm(kv, w.kv_a_norm, 1, r, c.rms_norm_eps, kr);
      std::memcpy(kr + r, kv + r, p * sizeof(float));
      RotatePairs(kr + r, p, cos, sin);
      for (int64_t head = 0; head < n_heads; ++head) {
        float* dst = s.q.data() + t * qs + head * row + r;
        std::memcpy(dst, m.q_raw.data() + t * n_heads * key + head * key + nope, p * sizeof(float));
        RotatePairs(dst, p, cos, sin);
      }
    }
  });
  // Each head's nope part into the latent space: Q head = [attn_k_b[h] · q_nope | q_pe].
  PerHeadMatMul(ctx, m, n, w.wk_b, {m.q_raw.data(), n_heads * key, key, nope},
                {s.q.data(), qs, row, r});
  if (c.attn_temperature_scale != 0.0f) {  // (every value of Q, as llama.cpp scales Qcur)
    ParallelRows(ctx.pool, n, qs, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        float* q = s.q.data() + t * qs;
        k.scale(q, QueryTemperature(c, plan.positions[t]), q, qs);
      }
    });
  }

  // This step's rows go into the cache before attention reads them back with the prefix.
  k.store_kv(ctx.kv, ctx.new_slots, n, s.k.data(), nullptr);
  kernels::AttentionParams params = ctx.attention;
  params.v_head_dim = static_cast<int>(r);
  m.attn_seqs.assign(ctx.attn_seqs.begin(), ctx.attn_seqs.end());
  for (kernels::AttentionSequence& a : m.attn_seqs) {
    const int64_t first_token = (a.q - s.q.data()) / qs;
    a.out = s.attn.data() + first_token * n_heads * r;  // [n_q, H * R]
  }
  k.attention(params, ctx.kv, m.attn_seqs, ctx.pool);

  // o[h] = attn_v_b[h] · latent output; proj = o · attn_outputᵀ; x += proj, here or in the
  // FFN's input prologue.
  const int64_t v = c.mla_value_dim;
  PerHeadMatMul(ctx, m, n, w.wv_b, {s.attn.data(), n_heads * r, r, r},
                {m.o.data(), n_heads * v, v, v});
  const kernels::MatMulOutput out{&w.wo, s.proj.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&out, 1), m.o.data(), n, ctx.pool, nullptr);
  if (!defer_residual) {
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      ApplyPendingResidual(k, c, PendingResidual{true, nullptr}, s, b, e);
    });
  }
}

}  // namespace radixlm::model
