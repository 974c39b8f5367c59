// ForwardScratch: activation buffers of the forward pass, sized once for max_batch_tokens.
//
// Allocated uninitialized (pages are committed only when a batch that large first runs) and
// reused by every Forward(); nothing here grows afterwards except the attention-sequence list,
// which keeps its capacity.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "model/model_config.h"

namespace radixlm::model {

// A fixed-size float array (no value-initialization, unlike std::vector).
class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(int64_t n) : data_(new float[n]), size_(n) {}
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  std::unique_ptr<float[]> data_;
  int64_t size_ = 0;
};

// The mixture-of-experts FFN's buffers (moe_ffn.h); empty for a dense model. The experts run
// over chunks of at most kTokenChunk tokens; a chunk's rows routed to each expert are gathered
// into one segment of `capacity` rows (each segment starts at a multiple of 16).
struct MoeScratch {
  static constexpr int64_t kTokenChunk = 256;

  MoeScratch() = default;
  MoeScratch(const ModelConfig& c, int64_t max_tokens)
      : chunk(std::min(max_tokens, kTokenChunk)),
        capacity(c.n_experts > 0 ? chunk * c.n_experts_used + 16 * c.n_experts : 0),
        router(max_tokens * c.n_experts),
        select(max_tokens * c.n_experts),
        shared(c.shared_expert_ffn_size > 0 || c.moe_dense_branch ? max_tokens * c.hidden_size : 0),
        input(capacity * c.hidden_size),
        gate(capacity * c.expert_ffn_size),
        up(capacity * c.expert_ffn_size),
        output(capacity * c.hidden_size),
        chosen(max_tokens * c.n_experts_used),
        weights(max_tokens * c.n_experts_used),
        count(c.n_experts),
        first(c.n_experts),
        row_token(capacity),
        slot_row(chunk * c.n_experts_used) {
    gate_up_items.reserve(c.n_experts);
    down_items.reserve(c.n_experts);
  }

  int64_t bytes() const {
    const int64_t floats = router.size() + select.size() + shared.size() + input.size() +
                           gate.size() + up.size() + output.size();
    const auto small = static_cast<int64_t>(chosen.size() + weights.size() + count.size() +
                                            first.size() + row_token.size() + slot_row.size());
    return (floats + small) * 4;
  }

  int64_t chunk = 0;            // tokens per chunk
  int64_t capacity = 0;         // gathered rows per chunk, padding included
  FloatBuffer router;           // [max_tokens, n_experts]: the router's logits, then probabilities
  FloatBuffer select;           // [max_tokens, n_experts]: selection scores (bias, groups)
  FloatBuffer shared;           // [max_tokens, hidden]: the shared expert's (or the dense
                                //   branch's) output, or empty
  FloatBuffer input;            // [capacity, hidden]: a chunk's rows, gathered by expert
  FloatBuffer gate;             // [capacity, expert_ffn]  (act(gate) * up after the activation)
  FloatBuffer up;               // [capacity, expert_ffn]
  FloatBuffer output;           // [capacity, hidden]: each gathered row's expert output
  std::vector<int32_t> chosen;  // [max_tokens, n_experts_used]: each row's experts
  std::vector<float> weights;   // [max_tokens, n_experts_used]: and their weights
  std::vector<int32_t> count;   // [n_experts]: a chunk's rows routed to each expert
  std::vector<int32_t> first;   // [n_experts]: where its segment starts
  std::vector<int32_t> row_token;  // [capacity]: the token of each gathered row, -1: padding
  std::vector<int32_t> slot_row;   // [chunk, n_experts_used]: the gathered row of each choice
  std::vector<kernels::GroupedMatMulItem> gate_up_items, down_items;  // one per expert touched
};

// A hybrid model's buffers (gated_delta_net.h, gated_attention.h); empty for the others.
// C = conv channels, V = ssm_inner_size, H = ssm_n_v_heads.
struct HybridScratch {
  HybridScratch() = default;
  HybridScratch(const ModelConfig& c, int64_t max_tokens)
      : mixed(c.IsHybrid() ? max_tokens * c.LinearConvChannels() : 0),
        conv(c.IsHybrid() ? max_tokens * c.LinearConvChannels() : 0),
        z(c.IsHybrid() ? max_tokens * c.ssm_inner_size : 0),
        core(c.IsHybrid() ? max_tokens * c.ssm_inner_size : 0),
        beta(c.IsHybrid() ? max_tokens * c.ssm_n_v_heads : 0),
        alpha(c.IsHybrid() ? max_tokens * c.ssm_n_v_heads : 0),
        beta_alpha(c.IsHybrid() ? max_tokens * 2 * c.ssm_n_v_heads : 0),
        q_gate(c.attn_output_gate ? max_tokens * 2 * c.MaxQSize() : 0) {}

  int64_t bytes() const {
    return (mixed.size() + conv.size() + z.size() + core.size() + beta.size() + alpha.size() +
            beta_alpha.size() + q_gate.size()) *
           4;
  }

  FloatBuffer mixed;       // [max_tokens, C]  Q, K, V before the convolution
  FloatBuffer conv;        // [max_tokens, C]  after it (and SiLU; Q, K then L2-normed)
  FloatBuffer z;           // [max_tokens, V]  the output gate
  FloatBuffer core;        // [max_tokens, V]  the delta rule's output, then normed and gated
  FloatBuffer beta;        // [max_tokens, H]  sigmoid(beta)
  FloatBuffer alpha;       // [max_tokens, H]  the decay's log: softplus(alpha + dt) * a
  FloatBuffer beta_alpha;  // [max_tokens, 2 * H]  a fused ssm_ba's projection (qwen3next)
  FloatBuffer q_gate;      // [max_tokens, 2 * q_size]  the gated attention's Q and gate, per head
};

// Multi-head latent attention's buffers (mla_attention.h; H = n_heads, R = mla_kv_rank, QR,
// K, N, V as in layer_tensor.h); empty for other models. The per-head projections (attn_k_b,
// attn_v_b) run over blocks of `block` tokens: head h's rows of a block are rows
// [h * block, h * block + block) of heads_in / heads_out.
struct MlaScratch {
  MlaScratch() = default;
  MlaScratch(const ModelConfig& c, int64_t max_tokens)
      : block(c.IsMla() ? BlockTokens(c.n_heads, max_tokens) : 0),
        q_a(c.IsMla() ? max_tokens * c.mla_q_rank : 0),
        kv_a(c.IsMla() ? max_tokens * (c.mla_kv_rank + c.rope_dims) : 0),
        q_raw(c.IsMla() ? max_tokens * c.n_heads * c.mla_key_dim : 0),
        heads_in(block * c.n_heads * std::max(c.MlaNopeDim(), c.mla_kv_rank)),
        heads_out(block * c.n_heads * std::max(c.mla_kv_rank, c.mla_value_dim)),
        o(c.IsMla() ? max_tokens * c.n_heads * c.mla_value_dim : 0) {
    if (c.IsMla()) items.reserve(c.n_heads);
  }

  // Tokens per block: a multiple of 16 (kernels::kGroupedRowAlign), about 4096 rows of all
  // heads together, 256 tokens at most.
  static int64_t BlockTokens(int64_t n_heads, int64_t max_tokens) {
    const int64_t by_heads = std::max<int64_t>(16, 4096 / n_heads / 16 * 16);
    return std::min<int64_t>({256, by_heads, (max_tokens + 15) / 16 * 16});
  }

  int64_t bytes() const {
    return (q_a.size() + kv_a.size() + q_raw.size() + heads_in.size() + heads_out.size() +
            o.size()) *
           4;
  }

  int64_t block = 0;
  FloatBuffer q_a;        // [max_tokens, QR]  Q's low-rank projection (then normed)
  FloatBuffer kv_a;       // [max_tokens, R + rope_dims]  the latent and key part before norm / RoPE
  FloatBuffer q_raw;      // [max_tokens, H * K]  Q per head: nope then rope values
  FloatBuffer heads_in;   // [H * block, max(N, R)]  a block's per-head inputs, gathered by head
  FloatBuffer heads_out;  // [H * block, max(R, V)]  and their projections
  FloatBuffer o;          // [max_tokens, H * V]  the heads' values, attn_output's input
  std::vector<kernels::GroupedMatMulItem> items;      // one per head
  std::vector<kernels::AttentionSequence> attn_seqs;  // out rows [n_q, H * R]
};

struct ForwardScratch {
  ForwardScratch(const ModelConfig& c, int64_t max_tokens)
      : max_tokens(max_tokens),
        x(max_tokens * c.hidden_size),
        xn(max_tokens * c.hidden_size),
        proj(max_tokens * c.hidden_size),
        q(max_tokens * c.MaxQSize()),
        attn(max_tokens * c.MaxQSize()),
        k(max_tokens * c.MaxKvSize()),
        v(max_tokens * c.MaxKvSize()),
        ffn_rows(std::min<int64_t>(max_tokens, kFfnBlockRows)),
        gate(ffn_rows * c.MaxFfnSize()),
        up(ffn_rows * c.MaxFfnSize()),
        per_layer_inputs(max_tokens * c.per_layer_input_size * c.n_layers),
        per_layer_proj(max_tokens * c.per_layer_input_size * c.n_layers),
        per_layer_gate(max_tokens * c.per_layer_input_size),
        moe(c, max_tokens),
        hybrid(c, max_tokens),
        mla(c, max_tokens) {}

  // Bytes of the float buffers (the attention-sequence lists are small and not counted).
  int64_t bytes() const {
    int64_t n = x.size() + xn.size() + proj.size() + q.size() + attn.size() + k.size() + v.size() +
                gate.size() + up.size() + per_layer_inputs.size() + per_layer_proj.size() +
                per_layer_gate.size();
    for (const FloatBuffer& b : rope_cos) n += b.size();
    for (const FloatBuffer& b : rope_sin) n += b.size();
    return n * static_cast<int64_t>(sizeof(float)) + moe.bytes() + hybrid.bytes() + mla.bytes();
  }

  int64_t max_tokens;
  FloatBuffer x;     // [max_tokens, hidden]  residual stream
  FloatBuffer xn;    // [max_tokens, hidden]  normalized block input
  FloatBuffer proj;  // [max_tokens, hidden]  block output before the residual add
  FloatBuffer q;     // [max_tokens, n_heads * head_dim]
  FloatBuffer attn;  // [max_tokens, n_heads * head_dim]  attention output
  FloatBuffer k;     // [max_tokens, n_kv_heads * head_dim]
  FloatBuffer v;     // [max_tokens, n_kv_heads * head_dim]
  // The dense feed-forward runs in blocks of at most ffn_rows tokens (kFfnBlockRows): its two
  // [rows, ffn] buffers are the largest of a wide model's, and blocks of 512 rows keep the
  // GEMMs as fast as one of 2048.
  static constexpr int64_t kFfnBlockRows = 512;
  int64_t ffn_rows;
  FloatBuffer gate;  // [ffn_rows, ffn]  (holds act(gate) * up after the activation)
  FloatBuffer up;    // [ffn_rows, ffn]
  // Per-layer inputs (gemma4; P = per_layer_input_size, empty without): this step's, layer
  // by layer ([n_layers][n_tokens, P]); the token-major projection they are made from
  // ([max_tokens, n_layers * P]); a layer's gate ([max_tokens, P]).
  FloatBuffer per_layer_inputs;
  FloatBuffer per_layer_proj;
  FloatBuffer per_layer_gate;
  // RoPE tables per variant: [max_tokens, its head_dim / 2] each.
  std::vector<FloatBuffer> rope_cos;
  std::vector<FloatBuffer> rope_sin;
  std::vector<kernels::AttentionSequence> attn_seqs;      // one per attention entry
  std::vector<kernels::AttentionSequence> swa_attn_seqs;  // the same over SWA rows (or empty)
  MoeScratch moe;
  HybridScratch hybrid;
  MlaScratch mla;
};

}  // namespace radixlm::model
