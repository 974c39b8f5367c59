// ForwardScratch: activation buffers of the forward pass, sized once for max_batch_tokens.
//
// Allocated uninitialized (pages are committed only when a batch that large first runs) and
// reused by every Forward(); nothing here grows afterwards except the attention-sequence list,
// which keeps its capacity.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention.h"
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

struct ForwardScratch {
  ForwardScratch(const ModelConfig& c, int64_t max_tokens)
      : max_tokens(max_tokens),
        x(max_tokens * c.hidden_size),
        xn(max_tokens * c.hidden_size),
        proj(max_tokens * c.hidden_size),
        q(max_tokens * c.q_size()),
        attn(max_tokens * c.q_size()),
        k(max_tokens * c.kv_size()),
        v(max_tokens * c.kv_size()),
        gate(max_tokens * c.ffn_size),
        up(max_tokens * c.ffn_size) {}

  // Bytes of the float buffers (the attention-sequence lists are small and not counted).
  int64_t bytes() const {
    int64_t n = x.size() + xn.size() + proj.size() + q.size() + attn.size() + k.size() + v.size() +
                gate.size() + up.size();
    for (const FloatBuffer& b : rope_cos) n += b.size();
    for (const FloatBuffer& b : rope_sin) n += b.size();
    return n * static_cast<int64_t>(sizeof(float));
  }

  int64_t max_tokens;
  FloatBuffer x;     // [max_tokens, hidden]  residual stream
  FloatBuffer xn;    // [max_tokens, hidden]  normalized block input
  FloatBuffer proj;  // [max_tokens, hidden]  block output before the residual add
  FloatBuffer q;     // [max_tokens, n_heads * head_dim]
  FloatBuffer attn;  // [max_tokens, n_heads * head_dim]  attention output
  FloatBuffer k;     // [max_tokens, n_kv_heads * head_dim]
  FloatBuffer v;     // [max_tokens, n_kv_heads * head_dim]
  FloatBuffer gate;  // [max_tokens, ffn]  (holds act(gate) * up after the activation)
  FloatBuffer up;    // [max_tokens, ffn]
  // RoPE tables per variant: [max_tokens, head_dim / 2] each.
  std::vector<FloatBuffer> rope_cos;
  std::vector<FloatBuffer> rope_sin;
  std::vector<kernels::AttentionSequence> attn_seqs;      // one per attention entry
  std::vector<kernels::AttentionSequence> swa_attn_seqs;  // the same over SWA rows (or empty)
};

}  // namespace radixlm::model
