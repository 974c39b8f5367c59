// ModelBackedRunner: the scheduler's ModelRunner over a loaded Model and its KvCache.
#pragma once

#include <cstdint>
#include <memory>

#include "model/kv_cache.h"
#include "model/lora_pool.h"
#include "model/model.h"
#include "scheduler/model_runner.h"

namespace radixlm {

class ModelBackedRunner : public ModelRunner {
 public:
  // Takes the model and allocates a KV cache of kv_slots slots (KvPool::storage_slots()), with
  // swa_kv_slots rows of their own for sliding-window layers when > 0
  // (KvPool::swa_storage_slots()); values of kv_dtype. A hybrid model's linear layers get
  // state_slots slots of state (one per running request: the scheduler passes a request's
  // request-to-token row as its slot; then the radix cache's snapshots).
  static StatusOr<std::unique_ptr<ModelBackedRunner>> Create(
      std::unique_ptr<model::Model> model, int64_t kv_slots, int64_t swa_kv_slots = 0,
      kernels::KvDtype kv_dtype = kernels::KvDtype::kF16, int64_t state_slots = 1);

  int32_t vocab_size() const override { return static_cast<int32_t>(model_->config().vocab_size); }
  int64_t hidden_size() const override { return model_->config().EmbeddingRowSize(); }
  int64_t context_length() const override { return model_->options().max_context; }
  int64_t max_batch_tokens() const override { return model_->options().max_batch_tokens; }
  int64_t kv_slots() const override { return kv_->n_slots(); }
  int64_t swa_kv_slots() const override { return kv_->n_swa_slots(); }
  Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) override {
    lora_pool_.Prepare(batch);  // the batch's LoRA adapters resident (model/lora_pool.h)
    return model_->Forward(batch, *kv_, out);
  }
  // --max-loras-per-batch: LoRA adapters kept resident (<= 0: all that were used).
  void set_lora_capacity(int32_t capacity) { lora_pool_.set_capacity(capacity); }
  const model::LoraPool& lora_pool() const { return lora_pool_; }
  int64_t kv_token_bytes() const override { return kv_->token_bytes(); }
  Status ReadKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                std::span<uint8_t> out) override {
    return kv_->CopyOut(slots, swa_slots, out);
  }
  Status WriteKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                 std::span<const uint8_t> in) override {
    return kv_->CopyIn(slots, swa_slots, in);
  }
  ThreadPool* thread_pool() override { return model_->pool(); }
  int64_t state_slots() const override {
    return kv_->recurrent() != nullptr ? kv_->recurrent()->n_slots() : 0;
  }
  int64_t state_slot_bytes() const override {
    return kv_->recurrent() != nullptr ? kv_->recurrent()->slot_bytes() : 0;
  }
  Status CopyState(int32_t from, int32_t to) override;
  Status ReadState(int32_t slot, std::span<uint8_t> out) override {
    if (kv_->recurrent() == nullptr) return Unimplemented("the model keeps no recurrent state");
    return kv_->recurrent()->ReadSlot(slot, out);
  }
  Status WriteState(int32_t slot, std::span<const uint8_t> in) override {
    if (kv_->recurrent() == nullptr) return Unimplemented("the model keeps no recurrent state");
    return kv_->recurrent()->WriteSlot(slot, in);
  }
  RunnerMemory memory() const override {
    return RunnerMemory{.weights_bytes = model_->weights_bytes(),
                        .kv_bytes = static_cast<int64_t>(kv_->bytes()),
                        .scratch_bytes = model_->scratch_bytes(),
                        .state_bytes = state_slots() * state_slot_bytes()};
  }

  const model::Model& model() const { return *model_; }
  size_t kv_cache_bytes() const { return kv_->bytes(); }
  model::KvCache* kv_cache() override { return kv_.get(); }

 private:
  ModelBackedRunner(std::unique_ptr<model::Model> model, std::unique_ptr<model::KvCache> kv)
      : model_(std::move(model)), kv_(std::move(kv)) {}

  std::unique_ptr<model::Model> model_;
  std::unique_ptr<model::KvCache> kv_;
  model::LoraPool lora_pool_;
};

}  // namespace radixlm
