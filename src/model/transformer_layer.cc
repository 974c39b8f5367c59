#include "model/transformer_layer.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <span>

#include "kernels/backend.h"
#include "model/moe_ffn.h"

namespace radixlm::model {

namespace {

// Adds a bias row to each of rows [begin, end) of x: [*, n].
void AddBias(const kernels::KernelBackend& k, float* x, const float* bias, int64_t begin,
             int64_t end, int64_t n) {
  for (int64_t r = begin; r < end; ++r) k.add(x + r * n, bias, x + r * n, n);
}

// x[r] += [post_norm](proj[r]) [* residual_scale] for rows [begin, end). proj is changed in
// place.
void AddResidual(const kernels::KernelBackend& k, const ModelConfig& c, const float* post_norm,
                 float* x, float* proj, int64_t begin, int64_t end) {
  const int64_t h = c.hidden_size;
  for (int64_t r = begin; r < end; ++r) {
    float* p = proj + r * h;
    float* xr = x + r * h;
    if (post_norm != nullptr) k.rms_norm(p, post_norm, 1, h, c.rms_norm_eps, p);
    if (c.residual_scale != 1.0f) k.scale(p, c.residual_scale, p, h);
    k.add(xr, p, xr, h);
  }
}

// xn = norm(x) for rows [begin, end), or a copy of x where the block has no input norm.
void InputNorm(const kernels::KernelBackend& k, const ModelConfig& c, const float* norm,
               ForwardScratch& s, int64_t begin, int64_t end) {
  const int64_t h = c.hidden_size;
  if (norm != nullptr) {
    k.rms_norm(s.x.data() + begin * h, norm, end - begin, h, c.rms_norm_eps,
               s.xn.data() + begin * h);
  } else {
    std::memcpy(s.xn.data() + begin * h, s.x.data() + begin * h, (end - begin) * h * sizeof(float));
  }
}

// Llama 4's attention temperature for the query at `position`, evaluated as llama.cpp does
// (llm_graph_input_attn_temp: float position and quotient, the rest in double, then float).
float AttentionTemperature(const ModelConfig& c, int64_t position) {
  const float pos = static_cast<float>(position);
  return static_cast<float>(std::log(std::floor((pos + c.attn_temperature_offset) /
                                                static_cast<float>(c.attn_temperature_floor)) +
                                     1.0) *
                                c.attn_temperature_scale +
                            1.0);
}

// RMSNorm of each head (per_head) or of each whole row of x: [rows, n_heads * head_dim].
void QkNorm(const kernels::KernelBackend& k, const ModelConfig& c, const float* norm, float* x,
            int64_t rows, int64_t n_heads, int64_t head_dim) {
  const int64_t width = n_heads * head_dim;
  if (c.qk_norm_per_head) {
    k.rms_norm(x, norm, rows * n_heads, head_dim, c.rms_norm_eps, x);
  } else {
    k.rms_norm(x, norm, rows, width, c.rms_norm_eps, x);
  }
}

void MatMul(const LayerContext& ctx, const kernels::WeightMatrix& w, const float* x, int64_t n,
            float* y, const kernels::RowPrologue* prologue = nullptr) {
  const kernels::MatMulOutput out{&w, y};
  ctx.backend->matmul(std::span<const kernels::MatMulOutput>(&out, 1), x, n, ctx.pool, prologue);
}

// out = down(act(gate(xn)) * up(xn)) for the first n rows of xn, f the gate's and up's rows,
// in blocks of at most s.ffn_rows tokens: the gate and up buffers hold one block (each row's
// values do not depend on the rows beside it, so the blocks change nothing). input (may be
// null) makes rows of xn final, as RunFfnBlock's prologue.
// With `lora`, rows add their adapters' gate, up and down terms (ctx.lora).
void GatedFfn(const LayerContext& ctx, const kernels::WeightMatrix& gate_w,
              const kernels::WeightMatrix& up_w, const kernels::WeightMatrix& down_w, int64_t f,
              int64_t n, const kernels::RowPrologue* input, ForwardScratch& s, float* out,
              bool lora = false) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const int64_t h = c.hidden_size;
  for (int64_t r0 = 0; r0 < n; r0 += s.ffn_rows) {
    const int64_t rows = std::min(s.ffn_rows, n - r0);
    auto block_input = [&](int64_t b, int64_t e) {
      if (input != nullptr) (*input)(r0 + b, r0 + e);
    };
    const kernels::RowPrologue block_input_fn = std::ref(block_input);
    const kernels::MatMulOutput gate_up[2] = {{&gate_w, s.gate.data()}, {&up_w, s.up.data()}};
    k.matmul(std::span<const kernels::MatMulOutput>(gate_up, 2), s.xn.data() + r0 * h, rows,
             ctx.pool, input != nullptr ? &block_input_fn : nullptr);
    LoraRows block_lora;
    if (lora && !ctx.lora.adapter.empty()) {
      block_lora = {ctx.lora.adapter.subspan(r0, rows), ctx.lora.scratch};
      const float* xn = s.xn.data() + r0 * h;
      ApplyLora(block_lora, ctx.layer, LoraTarget::kGate, xn, h, s.gate.data(), f, rows, ctx.pool);
      ApplyLora(block_lora, ctx.layer, LoraTarget::kUp, xn, h, s.up.data(), f, rows, ctx.pool);
    }
    // gate = act(gate) * up, in the region that quantizes it for the down projection.
    auto activation = [&](int64_t b, int64_t e) {
      float* g = s.gate.data() + b * f;
      const float* u = s.up.data() + b * f;
      switch (c.ffn_activation) {
        case FfnActivation::kGeluTanh:
          k.geglu(g, u, g, (e - b) * f);
          break;
        case FfnActivation::kSwigluOai:
          k.swiglu_oai(g, u, g, (e - b) * f);
          break;
        case FfnActivation::kSilu:
          k.swiglu(g, u, g, (e - b) * f);
          break;
      }
    };
    const kernels::RowPrologue activation_fn = std::ref(activation);
    MatMul(ctx, down_w, s.gate.data(), rows, out + r0 * h, &activation_fn);
    if (!block_lora.adapter.empty()) {
      ApplyLora(block_lora, ctx.layer, LoraTarget::kDown, s.gate.data(), f, out + r0 * h, h, rows,
                ctx.pool);
    }
  }
}

// Gemma 4's MoE layer (ModelConfig::moe_dense_branch): proj = post_norm_1(dense FFN of
// ffn_norm(x)) + post_norm_2(experts' mixture of pre_norm_2(x)), the router reading
// RMSNorm(x) * gate_inp_scale / sqrt(hidden). `input` makes rows of x final and xn their
// ffn_norm, in the dense FFN's first GEMM.
void DenseAndExpertsFfn(const LayerContext& ctx, int64_t n, const kernels::RowPrologue& input,
                        ForwardScratch& s) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  const int64_t h = c.hidden_size;
  float* dense = s.moe.shared.data();  // [n, hidden]
  GatedFfn(ctx, w.gate, w.up, w.down, c.LayerFfnSize(ctx.layer), n, &input, s, dense);
  // The router's input into proj (free until the mixture is written there), the experts' into
  // xn.
  const float router_scale = 1.0f / std::sqrt(static_cast<float>(h));
  ParallelRows(ctx.pool, n, 3 * h, [&](int64_t b, int64_t e) {
    float* router_in = s.proj.data() + b * h;
    k.rms_norm(s.x.data() + b * h, w.gate_inp_scale, e - b, h, c.rms_norm_eps, router_in);
    k.scale(router_in, router_scale, router_in, (e - b) * h);
    k.rms_norm(s.x.data() + b * h, w.ffn_pre_norm_2, e - b, h, c.rms_norm_eps, s.xn.data() + b * h);
  });
  RunMoeFfn(ctx, n, nullptr, s, /*router_input=*/s.proj.data());
  ParallelRows(ctx.pool, n, 3 * h, [&](int64_t b, int64_t e) {
    float* p = s.proj.data() + b * h;
    float* d = dense + b * h;
    k.rms_norm(p, w.ffn_post_norm_2, e - b, h, c.rms_norm_eps, p);
    k.rms_norm(d, w.ffn_post_norm_1, e - b, h, c.rms_norm_eps, d);
    k.add(d, p, p, (e - b) * h);
  });
}

// Rows [begin, end) of the shared expert's output (s.moe.shared) times sigmoid(xn · gate) per
// token (Qwen3-Next's and Qwen 3.5 MoE's shared-expert gate; the dot in float as ggml's F32
// mat-vec).
void ScaleBySharedExpertGate(const float* gate, int64_t h, ForwardScratch& s, int64_t begin,
                             int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const float* xn = s.xn.data() + r * h;
    float dot = 0.0f;
    for (int64_t i = 0; i < h; ++i) dot += xn[i] * gate[i];
    const float g = 1.0f / (1.0f + std::exp(-dot));
    float* out = s.moe.shared.data() + r * h;
    for (int64_t i = 0; i < h; ++i) out[i] *= g;
  }
}

}  // namespace

void RunAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& s,
                       const PendingResidual& pending, bool defer_residual) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  const int64_t n = plan.n_tokens;
  const int64_t h = c.hidden_size;
  const int64_t hd = ctx.attention.head_dim;
  const int64_t n_kv_heads = ctx.attention.n_kv_heads;
  const int64_t qs = c.n_heads * hd;
  const int64_t kvs = n_kv_heads * hd;
  // Where the layer has no attn_v (gemma4's K-equals-V layers), V is K's projection.
  const bool v_is_k = w.wv.data == nullptr;

  // [x += pending residual]; xn = [attn_norm](x): row by row, in the region that quantizes xn.
  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    InputNorm(k, c, w.attn_norm, s, b, e);
  };
  const kernels::RowPrologue input_fn = std::ref(input);

  // q, k, v = xn · W{q,k,v}ᵀ   ([n, q_size], [n, kv_size], [n, kv_size])
  // (Q only where the layer reads an earlier layer's K/V.)
  const kernels::MatMulOutput qkv[3] = {
      {&w.wq, s.q.data()}, {&w.wk, s.k.data()}, {&w.wv, s.v.data()}};
  const size_t n_outputs = !ctx.own_kv ? 1 : v_is_k ? 2 : 3;
  k.matmul(std::span<const kernels::MatMulOutput>(qkv, n_outputs), s.xn.data(), n, ctx.pool,
           &input_fn);
  if (!ctx.lora.adapter.empty()) {
    ApplyLora(ctx.lora, ctx.layer, LoraTarget::kQ, s.xn.data(), h, s.q.data(), qs, n, ctx.pool);
    if (n_outputs >= 2) {
      ApplyLora(ctx.lora, ctx.layer, LoraTarget::kK, s.xn.data(), h, s.k.data(), kvs, n, ctx.pool);
    }
    if (n_outputs == 3) {
      ApplyLora(ctx.lora, ctx.layer, LoraTarget::kV, s.xn.data(), h, s.v.data(), kvs, n, ctx.pool);
    }
  }

  // Biases, Q/K RMSNorm, [V RMSNorm], RoPE.
  ParallelRows(ctx.pool, n, qs + 2 * kvs, [&](int64_t b, int64_t e) {
    if (w.bq != nullptr) AddBias(k, s.q.data(), w.bq, b, e, qs);
    if (w.q_norm != nullptr) QkNorm(k, c, w.q_norm, s.q.data() + b * qs, e - b, c.n_heads, hd);
    const bool neox = ctx.rope != nullptr && ctx.rope->neox();
    if (ctx.rope != nullptr) {
      k.rope(s.q.data(), b, e, c.n_heads, hd, neox, ctx.rope_cos, ctx.rope_sin);
    }
    if (ctx.own_kv) {
      if (v_is_k) {
        std::memcpy(s.v.data() + b * kvs, s.k.data() + b * kvs, (e - b) * kvs * sizeof(float));
      }
      if (w.bk != nullptr) AddBias(k, s.k.data(), w.bk, b, e, kvs);
      if (w.bv != nullptr) AddBias(k, s.v.data(), w.bv, b, e, kvs);
      if (w.k_norm != nullptr) {
        QkNorm(k, c, w.k_norm, s.k.data() + b * kvs, e - b, n_kv_heads, hd);
      }
      if (c.v_norm) {
        float* v = s.v.data() + b * kvs;
        k.rms_norm(v, nullptr, (e - b) * n_kv_heads, hd, c.rms_norm_eps, v);
      }
      if (ctx.rope != nullptr) {
        k.rope(s.k.data(), b, e, n_kv_heads, hd, neox, ctx.rope_cos, ctx.rope_sin);
      }
    }
    if (c.attn_temperature_scale > 0.0f) {
      for (int64_t r = b; r < e; ++r) {
        float* q = s.q.data() + r * qs;
        k.scale(q, AttentionTemperature(c, plan.positions[r]), q, qs);
      }
    }
  });

  // This step's K/V go into the cache before attention reads them back with the prefix.
  if (ctx.own_kv) k.store_kv(ctx.kv, ctx.new_slots, n, s.k.data(), s.v.data());
  k.attention(ctx.attention, ctx.kv, ctx.attn_seqs, ctx.pool);

  // proj = attn · Woᵀ [+ bo]; x += [post_attn_norm](proj), here or in the FFN's input prologue.
  MatMul(ctx, w.wo, s.attn.data(), n, s.proj.data());
  if (!ctx.lora.adapter.empty()) {
    ApplyLora(ctx.lora, ctx.layer, LoraTarget::kO, s.attn.data(), qs, s.proj.data(), h, n,
              ctx.pool);
  }
  if (w.bo != nullptr) {
    ParallelRows(ctx.pool, n, h,
                 [&](int64_t b, int64_t e) { AddBias(k, s.proj.data(), w.bo, b, e, h); });
  }
  if (!defer_residual) {
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      AddResidual(k, c, w.post_attn_norm, s.x.data(), s.proj.data(), b, e);
    });
  }
}

void RunFfnBlock(const LayerContext& ctx, int64_t n, ForwardScratch& s,
                 const PendingResidual& pending, bool defer_residual) {
  if (n == 0) return;
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  const int64_t h = c.hidden_size;
  const int64_t f = c.LayerFfnSize(ctx.layer);

  // [x += pending residual]; xn = [ffn_norm](x)
  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    InputNorm(k, c, w.ffn_norm, s, b, e);
  };
  const kernels::RowPrologue input_fn = std::ref(input);
  if (!w.gate_exps.empty() && c.moe_dense_branch) {
    DenseAndExpertsFfn(ctx, n, input_fn, s);
  } else if (!w.gate_exps.empty()) {
    RunMoeFfn(ctx, n, &input_fn, s);  // proj = the experts' mixture of xn
    if (w.gate_shexp.data != nullptr) {
      // proj += the shared expert of xn (made final by the router's GEMM).
      const int64_t sf = c.shared_expert_ffn_size;
      GatedFfn(ctx, w.gate_shexp, w.up_shexp, w.down_shexp, sf, n, nullptr, s, s.moe.shared.data());
      ParallelRows(ctx.pool, n, h, [&](int64_t b, int64_t e) {
        if (w.gate_inp_shexp != nullptr) ScaleBySharedExpertGate(w.gate_inp_shexp, h, s, b, e);
        k.add(s.proj.data() + b * h, s.moe.shared.data() + b * h, s.proj.data() + b * h,
              (e - b) * h);
      });
    }
  } else {
    GatedFfn(ctx, w.gate, w.up, w.down, f, n, &input_fn, s, s.proj.data(), /*lora=*/true);
  }
  if (!defer_residual) {
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      AddResidual(k, c, w.post_ffn_norm, s.x.data(), s.proj.data(), b, e);
    });
  }
}

void RunLayerOutputBlock(const LayerContext& ctx, int64_t n, ForwardScratch& s,
                         const float* per_layer_input) {
  if (n == 0) return;
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  const int64_t h = c.hidden_size;
  if (w.per_layer_inp_gate.data != nullptr) {
    const int64_t p = c.per_layer_input_size;
    // g = x · inp_gateᵀ [n, P]; g = gelu(g) * input, in the region that quantizes g for the
    // projection; proj = g · projᵀ [n, hidden]; x += post_norm(proj).
    MatMul(ctx, w.per_layer_inp_gate, s.x.data(), n, s.per_layer_gate.data());
    auto activation = [&](int64_t b, int64_t e) {
      float* g = s.per_layer_gate.data() + b * p;
      k.geglu(g, per_layer_input + b * p, g, (e - b) * p);
    };
    const kernels::RowPrologue activation_fn = std::ref(activation);
    MatMul(ctx, w.per_layer_proj, s.per_layer_gate.data(), n, s.proj.data(), &activation_fn);
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      AddResidual(k, c, w.per_layer_post_norm, s.x.data(), s.proj.data(), b, e);
    });
  }
  if (w.out_scale != nullptr) k.scale(s.x.data(), *w.out_scale, s.x.data(), n * h);
}

kernels::AttentionParams LayerAttentionParams(const ModelConfig& c,
                                              const LayerAttentionConfig& la) {
  kernels::AttentionParams p;
  p.n_heads = static_cast<int>(c.n_heads);
  p.n_kv_heads = static_cast<int>(la.n_kv_heads);
  p.head_dim = static_cast<int>(la.head_dim);
  p.scale = c.attention_scale;
  p.sliding_window = la.sliding_window;
  p.logit_softcap = c.attn_logit_softcap;
  p.scale_query = c.scale_query;
  return p;
}

void PrepareAttentionSequences(const BatchPlan& plan, int64_t qs, ForwardScratch& s) {
  s.attn_seqs.clear();
  s.swa_attn_seqs.clear();
  for (const BatchPlan::AttentionEntry& e : plan.attention) {
    kernels::AttentionSequence a;
    a.q = s.q.data() + e.first_token * qs;
    a.q_pos = plan.positions.data() + e.first_token;
    a.n_q = static_cast<int>(e.n_q);
    a.kv_slots = plan.kv_slots.data() + e.kv_offset;
    a.n_kv = static_cast<int>(e.n_kv);
    a.out = s.attn.data() + e.first_token * qs;
    a.q_last_key = plan.last_key.empty() ? nullptr : plan.last_key.data() + e.first_token;
    s.attn_seqs.push_back(a);
    if (!plan.swa_kv_slots.empty()) {
      a.kv_slots = plan.swa_kv_slots.data() + e.kv_offset;
      s.swa_attn_seqs.push_back(a);
    }
  }
}

void ApplyPendingResidual(const kernels::KernelBackend& k, const ModelConfig& c,
                          const PendingResidual& pending, ForwardScratch& s, int64_t begin,
                          int64_t end) {
  if (pending.pending) AddResidual(k, c, pending.post_norm, s.x.data(), s.proj.data(), begin, end);
}

}  // namespace radixlm::model
