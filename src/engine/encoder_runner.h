// The serving side of an encoder embedding model (GGUF architecture bert / nomic-bert;
// model/encoder/encoder_model.h): a ModelRunner that runs each prompt whole, and the engine
// start-up for such a file.
//
// An encoder's attention is bidirectional, so a token's state depends on the tokens after it:
// no prefix of one prompt is a prefix of another's computation. The engine therefore runs an
// encoder with the radix cache disabled (nothing is matched or inserted, no KV is kept: the
// runner's "KV slots" are only the scheduler's bookkeeping) and with runs_whole_prompts(), so
// the scheduler never cuts a prompt into chunks; several prompts still share one Forward().
#pragma once

#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/engine_config.h"
#include "gguf/gguf_file.h"
#include "model/encoder/encoder_model.h"
#include "sampling/pooling.h"
#include "scheduler/model_runner.h"

namespace radixlm {

class EncoderRunner : public ModelRunner {
 public:
  // context: the most tokens a prompt may have (<= the model's context_length); kv_slots: the
  // scheduler's slot budget (no storage behind it).
  EncoderRunner(std::unique_ptr<model::EncoderModel> model, int64_t context, int64_t kv_slots);

  int32_t vocab_size() const override { return static_cast<int32_t>(model_->config().vocab_size); }
  int64_t context_length() const override { return context_; }
  int64_t max_batch_tokens() const override { return max_batch_tokens_; }
  int64_t kv_slots() const override { return kv_slots_; }
  bool runs_whole_prompts() const override { return true; }
  ThreadPool* thread_pool() override { return model_->pool(); }
  RunnerMemory memory() const override { return {.weights_bytes = model_->weights_bytes()}; }

  // Each sequence must be a whole prompt (no prefix slots): InvalidArgument otherwise. Rows
  // are the final hidden states, per sequence as its logits mode asks (every row, the last,
  // or none); out->vocab_size is the hidden width.
  Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) override;

  const model::EncoderModel& model() const { return *model_; }

 private:
  std::unique_ptr<model::EncoderModel> model_;
  int64_t context_;
  int64_t kv_slots_;
  int64_t max_batch_tokens_;
  std::vector<float> hidden_;  // [tokens of the batch, hidden]
};

// Engine::Create's path for an encoder file (`file` opened from `path`): needs
// config.is_embedding (`pooling` resolved from --pooling or the file); refuses what an encoder
// cannot do (speculative decoding, LoRA, the disk tier) with a message naming the flag.
StatusOr<std::unique_ptr<Engine>> CreateEncoderEngine(const EngineConfig& config,
                                                      const std::string& path,
                                                      std::unique_ptr<gguf::GgufFile> file,
                                                      Pooling pooling);

}  // namespace radixlm
