#include "model/gated_delta_net.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/backend.h"
#include "kernels/gated_delta.h"

namespace radixlm::model {

namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float Silu(float x) { return x / (1.0f + std::exp(-x)); }
// ggml's softplus (the same threshold).
float Softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

// x / sqrt(sum(x²) + eps), in place (ggml_rms_norm(x, eps / n) / sqrt(n), as llama.cpp's
// build_gdn_l2_norm evaluates it: the sum in double).
void L2Norm(float* x, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps / static_cast<float>(n));
  const float inv_sqrt_n = 1.0f / std::sqrt(static_cast<float>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * scale * inv_sqrt_n;
}

}  // namespace

void RunGatedDeltaNetBlock(const LayerContext& ctx, int64_t n, std::span<const LinearSequence> seqs,
                           RecurrentState& state, ForwardScratch& s, const PendingResidual& pending,
                           bool defer_residual) {
  const kernels::KernelBackend& k = *ctx.backend;
  const ModelConfig& c = *ctx.config;
  const LayerWeights& w = *ctx.weights;
  HybridScratch& hs = s.hybrid;
  const int64_t h = c.hidden_size;
  const int64_t channels = c.LinearConvChannels();
  const int64_t taps = c.ssm_conv_kernel;
  const int64_t n_v = c.ssm_n_v_heads;
  const int64_t n_k = c.ssm_n_k_heads;
  const int64_t sd = c.ssm_state_size;
  const int64_t vs = c.ssm_inner_size;
  const int64_t key_size = n_k * sd;

  // [x += pending residual]; xn = attn_norm(x), in the region that quantizes xn.
  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    k.rms_norm(s.x.data() + b * h, w.attn_norm, e - b, h, c.rms_norm_eps, s.xn.data() + b * h);
  };
  const kernels::RowPrologue input_fn = std::ref(input);
  const bool fused_gates = w.ssm_beta_alpha.data != nullptr;
  const kernels::MatMulOutput projections[4] = {
      {&w.wqkv, hs.mixed.data()},
      {&w.attn_gate, hs.z.data()},
      fused_gates ? kernels::MatMulOutput{&w.ssm_beta_alpha, hs.beta_alpha.data()}
                  : kernels::MatMulOutput{&w.ssm_beta, hs.beta.data()},
      {&w.ssm_alpha, hs.alpha.data()}};
  k.matmul(std::span<const kernels::MatMulOutput>(projections, fused_gates ? 3 : 4), s.xn.data(), n,
           ctx.pool, &input_fn);

  // The gates, per token and value head.
  const int64_t group = n_v / n_k;  // value heads per key head
  for (int64_t r = 0; r < n; ++r) {
    float* beta = hs.beta.data() + r * n_v;
    float* alpha = hs.alpha.data() + r * n_v;
    if (fused_gates) {  // per key head: its group's beta values, then their alpha values
      const float* ba = hs.beta_alpha.data() + r * 2 * n_v;
      for (int64_t head = 0; head < n_v; ++head) {
        beta[head] = ba[(head / group) * 2 * group + head % group];
        alpha[head] = ba[(head / group) * 2 * group + group + head % group];
      }
    }
    for (int64_t head = 0; head < n_v; ++head) {
      beta[head] = Sigmoid(beta[head]);
      alpha[head] = Softplus(alpha[head] + w.ssm_dt[head]) * w.ssm_a[head];
    }
  }

  // The causal convolution, each channel independent: a sequence's inputs are its state's
  // conv_kernel - 1 latest ones, then its new tokens'; token by token over a range of channels
  // (rows read contiguously); the state keeps the last inputs (and each checkpoint the inputs
  // after its token).
  ParallelRows(ctx.pool, channels, n * taps, [&](int64_t cb, int64_t ce) {
    for (const LinearSequence& seq : seqs) {
      float* window = state.Conv(ctx.layer, seq.state_slot);  // [taps - 1, channels]
      // Input tp of the sequence, tp in [-(taps - 1), n_new): the window's rows, then mixed's.
      auto input = [&](int64_t tp) -> const float* {
        return tp < 0 ? window + (tp + taps - 1) * channels
                      : hs.mixed.data() + (seq.first_token + tp) * channels;
      };
      const float* src[kMaxConvKernel];
      for (int64_t t = 0; t < seq.n_new; ++t) {
        for (int64_t i = 0; i < taps; ++i) src[i] = input(t - (taps - 1) + i);
        float* out = hs.conv.data() + (seq.first_token + t) * channels;
        for (int64_t ch = cb; ch < ce; ++ch) {
          const float* tap = w.ssm_conv1d + ch * taps;
          float sum = 0.0f;
          for (int64_t i = 0; i + 1 < taps; ++i) sum += src[i][ch] * tap[i];
          out[ch] = sum + src[taps - 1][ch] * tap[taps - 1];
        }
        for (int64_t ch = cb; ch < ce; ++ch) out[ch] = Silu(out[ch]);
        if (seq.checkpoints != nullptr && seq.checkpoints[t] >= 0) {
          float* saved = state.Conv(ctx.layer, seq.checkpoints[t]);
          for (int64_t i = 0; i + 1 < taps; ++i) {
            std::memcpy(saved + i * channels + cb, src[i + 1] + cb,
                        static_cast<size_t>(ce - cb) * sizeof(float));
          }
        }
      }
      // The window after the last token: inputs n_new - (taps - 1) ... n_new - 1 (ascending, so
      // a row still to be read from the old window is never overwritten first).
      for (int64_t i = 0; i + 1 < taps; ++i) {
        const float* from = input(seq.n_new - (taps - 1) + i);
        if (from != window + i * channels) {
          std::memmove(window + i * channels + cb, from + cb,
                       static_cast<size_t>(ce - cb) * sizeof(float));
        }
      }
    }
  });

  // Q and K heads L2-normed, per token.
  ParallelRows(ctx.pool, n, 2 * key_size, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* row = hs.conv.data() + r * channels;
      for (int64_t head = 0; head < 2 * n_k; ++head) L2Norm(row + head * sd, sd, c.rms_norm_eps);
    }
  });

  // The delta rule, one (sequence, value head) per task, tokens in order: step by step, or
  // (chunked prefill, a sequence of several new tokens and no checkpoints) in chunks that
  // start at multiples of kGatedDeltaChunk in positions.
  const auto n_tasks = static_cast<int64_t>(seqs.size()) * n_v;
  ParallelRows(ctx.pool, n_tasks, n * sd * sd / std::max<int64_t>(1, std::ssize(seqs)) * 4,
               [&](int64_t b, int64_t e) {
                 std::vector<float> chunk_scratch;
                 for (int64_t task = b; task < e; ++task) {
                   const LinearSequence& seq = seqs[task / n_v];
                   const int64_t head = task % n_v;
                   const int64_t kh = c.ssm_grouped_heads ? head / group : head % n_k;
                   float* m = state.Delta(ctx.layer, seq.state_slot) + head * sd * sd;
                   if (ctx.chunked_linear_prefill && seq.n_new > 1 && seq.checkpoints == nullptr) {
                     if (chunk_scratch.empty())
                       chunk_scratch.resize(kernels::GatedDeltaChunkScratch(sd));
                     constexpr int64_t kChunk = kernels::kGatedDeltaChunk;
                     for (int64_t t = 0; t < seq.n_new;) {
                       const int64_t len =
                           std::min(seq.n_new - t, kChunk - (seq.first_position + t) % kChunk);
                       const int64_t row = seq.first_token + t;
                       const float* conv = hs.conv.data() + row * channels;
                       const kernels::GatedDeltaTokens tokens{conv + kh * sd,
                                                              conv + key_size + kh * sd,
                                                              conv + 2 * key_size + head * sd,
                                                              channels,
                                                              hs.alpha.data() + row * n_v + head,
                                                              hs.beta.data() + row * n_v + head,
                                                              n_v,
                                                              hs.core.data() + row * vs + head * sd,
                                                              vs};
                       k.gated_delta_chunk(m, tokens, len, sd, chunk_scratch.data());
                       t += len;
                     }
                     continue;
                   }
                   for (int64_t t = 0; t < seq.n_new; ++t) {
                     const int64_t row = seq.first_token + t;
                     const float* conv = hs.conv.data() + row * channels;
                     k.gated_delta_step(m, conv + kh * sd, conv + key_size + kh * sd,
                                        conv + 2 * key_size + head * sd,
                                        std::exp(hs.alpha.data()[row * n_v + head]),
                                        hs.beta.data()[row * n_v + head], sd,
                                        hs.core.data() + row * vs + head * sd);
                     if (seq.checkpoints != nullptr && seq.checkpoints[t] >= 0) {
                       std::memcpy(state.Delta(ctx.layer, seq.checkpoints[t]) + head * sd * sd, m,
                                   static_cast<size_t>(sd * sd) * sizeof(float));
                     }
                   }
                 }
               });

  // core = RMSNorm(core per head) * ssm_norm * SiLU(z), in the region that quantizes it for
  // ssm_out; proj = core · ssm_outᵀ.
  auto gate = [&](int64_t b, int64_t e) {
    float* core = hs.core.data() + b * vs;
    k.rms_norm(core, w.ssm_norm, (e - b) * n_v, sd, c.rms_norm_eps, core);
    const float* z = hs.z.data() + b * vs;
    for (int64_t i = 0; i < (e - b) * vs; ++i) core[i] *= Silu(z[i]);
  };
  const kernels::RowPrologue gate_fn = std::ref(gate);
  const kernels::MatMulOutput out{&w.ssm_out, s.proj.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&out, 1), hs.core.data(), n, ctx.pool, &gate_fn);
  if (!defer_residual) {
    ParallelRows(ctx.pool, n, 2 * h, [&](int64_t b, int64_t e) {
      ApplyPendingResidual(k, c, PendingResidual{true, nullptr}, s, b, e);
    });
  }
}

}  // namespace radixlm::model
