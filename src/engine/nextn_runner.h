// NextnRunner: the draft runner of --speculative-algorithm NEXTN, the target model's own NextN
// (multi-token-prediction) layer (model/nextn_model.h) with a KV cache of its one layer that
// the scheduler indexes by the target pool's slots, as a draft model's
// (scheduler/scheduler_nextn.cc). Each sequence of a Forward() carries the target's hidden
// states (SequenceInput::nextn_hidden); with ForwardBatch::output_hidden the output's hidden
// rows are the layer's own, the input of the next draft step.
#pragma once

#include <cstdint>
#include <memory>

#include "model/kv_cache.h"
#include "model/nextn_model.h"
#include "scheduler/model_runner.h"

namespace radixlm {

class NextnRunner : public ModelRunner {
 public:
  // The NextN layer of `target` (which must outlive the runner) with kv_slots slots of
  // kv_dtype. Unimplemented for a model without one (NextnModel::Create).
  static StatusOr<std::unique_ptr<NextnRunner>> Create(model::Model& target, int64_t kv_slots,
                                                       kernels::KvDtype kv_dtype);

  int32_t vocab_size() const override { return model_->vocab_size(); }
  int64_t context_length() const override { return model_->max_context(); }
  int64_t max_batch_tokens() const override { return model_->max_batch_tokens(); }
  int64_t kv_slots() const override { return kv_->n_slots(); }
  Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) override {
    return model_->Forward(batch, *kv_, out);
  }
  int64_t nextn_hidden_size() const override { return model_->config().hidden_size; }
  ThreadPool* thread_pool() override { return model_->pool(); }
  RunnerMemory memory() const override {
    return RunnerMemory{.weights_bytes = model_->weights_bytes(),
                        .kv_bytes = static_cast<int64_t>(kv_->bytes()),
                        .scratch_bytes = model_->scratch_bytes()};
  }

 private:
  NextnRunner(std::unique_ptr<model::NextnModel> model, std::unique_ptr<model::KvCache> kv)
      : model_(std::move(model)), kv_(std::move(kv)) {}

  std::unique_ptr<model::NextnModel> model_;
  std::unique_ptr<model::KvCache> kv_;
};

}  // namespace radixlm
