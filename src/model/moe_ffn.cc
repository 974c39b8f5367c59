#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <span>

namespace radixlm::model {

namespace {

// The n_experts_used largest of logits ([n_experts]) into chosen, the largest first (ties: the
// lower index); NaN logits choose expert 0 (the row's output is NaN regardless).
void TopK(const ModelConfig& c, const float* logits, int32_t* chosen) {
  auto before = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  for (int64_t j = 0; j < c.n_experts_used; ++j) {
    int32_t best = -1;
    for (int64_t e = 0; e < c.n_experts; ++e) {
      if (j > 0 && !before(chosen[j - 1], e)) continue;
      if (best < 0 || before(e, best)) best = static_cast<int32_t>(e);
    }
    chosen[j] = best < 0 ? 0 : best;
  }
}

// gpt-oss's routing (llama.cpp's SOFTMAX_WEIGHT gating): the top experts by logit, weighted by
// the softmax of their logits alone (ggml's soft_max: the sum in double, times its inverse).
void RouteTopKThenSoftmax(const ModelConfig& c, const float* logits, int32_t* chosen,
                          float* weights) {
  TopK(c, logits, chosen);
  const float max = logits[chosen[0]];
  double sum = 0.0;
  for (int64_t j = 0; j < c.n_experts_used; ++j) {
    weights[j] = std::exp(logits[chosen[j]] - max);
    sum += weights[j];
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < c.n_experts_used; ++j) weights[j] *= inv;
}

// The top n of scores[0, count) into out, the largest first (ties: the lower index).
void TopN(const float* scores, int64_t count, int64_t n, int32_t* out) {
  auto before = [&](int64_t a, int64_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  for (int64_t j = 0; j < n; ++j) {
    int32_t best = -1;
    for (int64_t e = 0; e < count; ++e) {
      if (j > 0 && !before(out[j - 1], e)) continue;
      if (best < 0 || before(e, best)) best = static_cast<int32_t>(e);
    }
    out[j] = best < 0 ? 0 : best;  // NaN scores: any (the row's output is NaN regardless)
  }
}

// DeepSeek V3's expert groups (ModelConfig::n_expert_groups): every expert outside the
// n_expert_groups_used groups with the best sums of their two best scores gets -inf.
void MaskExpertGroups(const ModelConfig& c, float* scores) {
  const int64_t groups = c.n_expert_groups;
  const int64_t per = c.n_experts / groups;
  float group_score[kMaxExpertGroups] = {};
  int32_t best[kMaxExpertGroups] = {};
  for (int64_t g = 0; g < groups; ++g) {
    int32_t top[2];
    TopN(scores + g * per, per, 2, top);
    group_score[g] = scores[g * per + top[0]] + scores[g * per + top[1]];
  }
  TopN(group_score, groups, c.n_expert_groups_used, best);
  for (int64_t g = 0; g < groups; ++g) {
    bool kept = false;
    for (int64_t j = 0; j < c.n_expert_groups_used; ++j) kept = kept || best[j] == g;
    if (!kept) std::fill(scores + g * per, scores + (g + 1) * per, -INFINITY);
  }
}

// One row's routing: probs (the router's logits, [n_experts]) become the experts' scores as
// ggml computes them: the softmax (exp of the difference from the maximum, the sum in double,
// times its inverse) or, with sigmoid gating, 1 / (1 + e^-logit). chosen / weights ([n_used])
// get the experts with the best scores (plus `bias`, exp_probs_b, where given; within the best
// groups where there are groups), the best first (ties: the lower index), and their unbiased
// scores as weights. `select` is [n_experts] scratch.
void Route(const ModelConfig& c, float* probs, const float* bias, float* select, int32_t* chosen,
           float* weights) {
  const int64_t n = c.n_experts;
  if (c.expert_softmax_after_topk) return RouteTopKThenSoftmax(c, probs, chosen, weights);
  if (c.expert_gating == ModelConfig::ExpertGating::kSigmoid) {
    for (int64_t e = 0; e < n; ++e) probs[e] = 1.0f / (1.0f + std::exp(-probs[e]));
  } else {
    float max = probs[0];
    for (int64_t e = 1; e < n; ++e) max = std::max(max, probs[e]);
    double sum = 0.0;
    for (int64_t e = 0; e < n; ++e) {
      probs[e] = std::exp(probs[e] - max);
      sum += probs[e];
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (int64_t e = 0; e < n; ++e) probs[e] *= inv;
  }
  const float* scores = probs;
  if (bias != nullptr || c.n_expert_groups > 1) {
    for (int64_t e = 0; e < n; ++e) select[e] = bias != nullptr ? probs[e] + bias[e] : probs[e];
    if (c.n_expert_groups > 1) MaskExpertGroups(c, select);
    scores = select;
  }
  TopN(scores, n, c.n_experts_used, chosen);
  for (int64_t j = 0; j < c.n_experts_used; ++j) weights[j] = probs[chosen[j]];
  if (c.expert_weights_norm) {
    double total = 0.0;
    for (int64_t j = 0; j < c.n_experts_used; ++j) total += weights[j];
    // llama.cpp clamps the sum to the smallest normal half before dividing.
    const float divisor = std::max(static_cast<float>(total), 6.103515625e-5f);
    for (int64_t j = 0; j < c.n_experts_used; ++j) weights[j] /= divisor;
  }
  if (c.expert_weights_scale != 1.0f) {
    for (int64_t j = 0; j < c.n_experts_used; ++j) weights[j] *= c.expert_weights_scale;
  }
}

// The expert whose segment holds gathered row r (segments ascending by first row).
int64_t ExpertOfRow(const std::vector<kernels::GroupedMatMulItem>& items, const LayerWeights& w,
                    int64_t r) {
  const auto it = std::upper_bound(
      items.begin(), items.end(), r,
      [](int64_t row, const kernels::GroupedMatMulItem& item) { return row < item.first; });
  return std::prev(it)->w[0] - w.gate_exps.data();
}

}  // namespace

void RunMoeFfn(const LayerContext& ctx, int64_t n, const kernels::RowPrologue* input,
               ForwardScratch& s, const float* router_input) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  MoeScratch& m = s.moe;
  const int64_t h = c.hidden_size;
  const int64_t f = c.expert_ffn_size;
  const int64_t n_experts = c.n_experts;
  const int64_t used = c.n_experts_used;

  // router = (router_input or xn) · gate_inpᵀ   [n, n_experts], with xn made final on the way
  // in; then each row's experts and weights.
  const kernels::MatMulOutput router{&w.gate_inp, m.router.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&router, 1),
           router_input != nullptr ? router_input : s.xn.data(), n, ctx.pool, input);
  ParallelRows(ctx.pool, n, n_experts * (used + 4), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* select = m.select.data() + r * n_experts;
      float* logits = m.router.data() + r * n_experts;
      if (w.gate_inp_b != nullptr) k.add(logits, w.gate_inp_b, logits, n_experts);
      Route(c, m.router.data() + r * n_experts, w.exp_probs_b, select, m.chosen.data() + r * used,
            m.weights.data() + r * used);
      if (w.down_exps_scale != nullptr) {
        for (int64_t j = 0; j < used; ++j) {
          m.weights[r * used + j] *= w.down_exps_scale[m.chosen[r * used + j]];
        }
      }
    }
  });

  for (int64_t t0 = 0; t0 < n; t0 += m.chunk) {
    const int64_t t1 = std::min(n, t0 + m.chunk);
    const int32_t* chosen = m.chosen.data() + t0 * used;
    const int64_t n_choices = (t1 - t0) * used;

    // Each touched expert's segment of gathered rows (tokens ascending), starting at a
    // multiple of 16; rows between segments are padding.
    std::fill(m.count.begin(), m.count.end(), 0);
    for (int64_t i = 0; i < n_choices; ++i) ++m.count[chosen[i]];
    int64_t rows = 0;
    m.gate_up_items.clear();
    m.down_items.clear();
    for (int64_t e = 0; e < n_experts; ++e) {
      m.first[e] = static_cast<int32_t>(rows);
      if (m.count[e] == 0) continue;  // no row routes here: its weights are not read
      kernels::GroupedMatMulItem gate_up;
      gate_up.w[0] = &w.gate_exps[e];
      gate_up.w[1] = &w.up_exps[e];
      gate_up.y[0] = m.gate.data() + rows * f;
      gate_up.y[1] = m.up.data() + rows * f;
      gate_up.first = rows;
      gate_up.rows = m.count[e];
      m.gate_up_items.push_back(gate_up);
      kernels::GroupedMatMulItem down;
      down.w[0] = &w.down_exps[e];
      down.y[0] = m.output.data() + rows * h;
      down.first = rows;
      down.rows = m.count[e];
      m.down_items.push_back(down);
      rows += (m.count[e] + kernels::kGroupedRowAlign - 1) / kernels::kGroupedRowAlign *
              kernels::kGroupedRowAlign;
    }
    std::fill(m.row_token.begin(), m.row_token.begin() + rows, -1);
    for (int64_t i = 0; i < n_choices; ++i) {
      const int32_t row = m.first[chosen[i]]++;
      m.row_token[row] = static_cast<int32_t>(t0 + i / used);
      m.slot_row[i] = row;
    }

    // [gate | up] of every segment = its gathered rows of xn · [gate_e | up_e]ᵀ, one parallel
    // region over the experts and their output rows; the rows gathered (padding zeroed) in the
    // region that quantizes them.
    auto gather = [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        float* dst = m.input.data() + r * h;
        if (m.row_token[r] < 0) {
          std::memset(dst, 0, h * sizeof(float));
        } else {
          std::memcpy(dst, s.xn.data() + m.row_token[r] * h, h * sizeof(float));
        }
      }
    };
    const kernels::RowPrologue gather_fn = std::ref(gather);
    k.grouped_matmul(m.gate_up_items, m.input.data(), rows, ctx.pool, &gather_fn);

    // output = act(gate [+ bias_e]) * (up [+ bias_e]) · down_eᵀ per segment, the activation
    // where it is quantized (padding rows, which no GEMM wrote, zeroed).
    auto activation = [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        float* g = m.gate.data() + r * f;
        float* u = m.up.data() + r * f;
        if (m.row_token[r] < 0) {
          std::memset(g, 0, f * sizeof(float));
          continue;
        }
        if (w.gate_exps_b != nullptr || w.up_exps_b != nullptr) {
          const int64_t expert = ExpertOfRow(m.gate_up_items, w, r);
          if (w.gate_exps_b != nullptr) k.add(g, w.gate_exps_b + expert * f, g, f);
          if (w.up_exps_b != nullptr) k.add(u, w.up_exps_b + expert * f, u, f);
        }
        switch (c.ffn_activation) {
          case FfnActivation::kGeluTanh:
            k.geglu(g, u, g, f);
            break;
          case FfnActivation::kSwigluOai:
            k.swiglu_oai(g, u, g, f);
            break;
          case FfnActivation::kSilu:
            k.swiglu(g, u, g, f);
            break;
        }
      }
    };
    const kernels::RowPrologue activation_fn = std::ref(activation);
    k.grouped_matmul(m.down_items, m.gate.data(), rows, ctx.pool, &activation_fn);

    // proj[t] = sum of weight * (output [+ down bias]) over t's experts, most probable first
    // (llama.cpp's order; fixed by the row alone).
    if (w.down_exps_b != nullptr) {
      ParallelRows(ctx.pool, n_choices, h, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          float* y = m.output.data() + m.slot_row[i] * h;
          k.add(y, w.down_exps_b + static_cast<int64_t>(chosen[i]) * h, y, h);
        }
      });
    }
    ParallelRows(ctx.pool, t1 - t0, used * h, [&](int64_t b, int64_t e) {
      for (int64_t t = t0 + b; t < t0 + e; ++t) {
        float* p = s.proj.data() + t * h;
        const int64_t i0 = (t - t0) * used;
        const float* y0 = m.output.data() + m.slot_row[i0] * h;
        const float w0 = m.weights[t * used];
        for (int64_t j = 0; j < h; ++j) p[j] = w0 * y0[j];
        for (int64_t slot = 1; slot < used; ++slot) {
          const float* y = m.output.data() + m.slot_row[i0 + slot] * h;
          const float weight = m.weights[t * used + slot];
          for (int64_t j = 0; j < h; ++j) p[j] += weight * y[j];
        }
      }
    });
  }
}

}  // namespace radixlm::model
