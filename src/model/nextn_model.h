// NextnModel: a model's multi-token-prediction (NextN / MTP) layer run on its own, as the
// draft of --speculative-algorithm NEXTN (llama.cpp's qwen35 graph_mtp).
//
// For a new token t at position p with the target model's final-normed hidden state h of
// position p - 1 (SequenceInput::nextn_hidden):
//   x = eh_proj · [enorm(embed(t)) | hnorm(h)]       (embed: nextn.embed_tokens, else the
//                                                     target's token_embd)
//   x = one full-attention layer of the family on x (gated attention with Q/K norms and the
//       family's RoPE, its own K/V at the sequence's slots; post_attention_norm, the FFN)
//   hidden = shared_head_norm(x)  (else the target's output_norm)
//   logits = hidden · headᵀ      (nextn.shared_head_head, else the target's LM head)
// so the logits of position p predict the token at p + 2, and `hidden` is what the next draft
// step pairs with the token drafted from them.
//
// Ownership: the layer's weights are views into the target's mapped file; the target Model
// (its file, embeddings, output head and thread pool) must outlive the NextnModel. Forward()
// uses the thread pool the target's Forward() does: call them one at a time (the scheduler
// thread).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/batch_plan.h"
#include "model/forward_batch.h"
#include "model/forward_scratch.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/rotary.h"
#include "util/status.h"

namespace radixlm::model {

class NextnModel {
 public:
  // The first NextN layer of `target`'s file (block target.config().n_layers), batch size and
  // context as the target's options. Unimplemented when the file has none
  // (nextn_predict_layers 0) or the family does not run them; InvalidArgument naming a
  // missing or misshapen tensor.
  static StatusOr<std::unique_ptr<NextnModel>> Create(Model& target);

  // One full-attention layer (the config a KvCache for it is made from).
  const ModelConfig& config() const { return config_; }
  int64_t max_batch_tokens() const { return target_->options().max_batch_tokens; }
  int64_t max_context() const { return target_->options().max_context; }
  int32_t vocab_size() const { return static_cast<int32_t>(config_.vocab_size); }
  int64_t weights_bytes() const { return weights_->resident_bytes(); }
  int64_t scratch_bytes() const { return scratch_->bytes(); }
  ThreadPool* pool() { return target_->pool(); }

  // Runs the layer over every sequence of `batch` (each with nextn_hidden of n_new *
  // hidden_size values): writes its K/V into `cache`, fills out's logits as the batch asks and
  // out->hidden (shared_head_norm(x) of every new token, whatever batch.output_hidden says).
  // InvalidArgument for a malformed batch; nothing is written then.
  Status Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput* out);

 private:
  NextnModel() = default;

  Model* target_ = nullptr;
  ModelConfig config_;
  std::unique_ptr<ModelWeights> weights_;  // layers[0]: the NextN layer
  std::unique_ptr<RotaryEmbedding> rope_;  // null: the layer has no RoPE
  std::unique_ptr<ForwardScratch> scratch_;
  BatchPlan plan_;
  std::vector<float> concat_;  // [max_batch_tokens, 2 * hidden]: eh_proj's input
};

}  // namespace radixlm::model
