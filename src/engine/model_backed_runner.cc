#include "engine/model_backed_runner.h"

namespace radixlm {

StatusOr<std::unique_ptr<ModelBackedRunner>> ModelBackedRunner::Create(
    std::unique_ptr<model::Model> model, int64_t kv_slots, int64_t swa_kv_slots,
    kernels::KvDtype kv_dtype, int64_t state_slots) {
  if (model == nullptr) return InvalidArgument("ModelBackedRunner needs a model");
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::KvCache> kv,
                           model->CreateKvCache(model::KvCacheOptions{
                               .n_slots = kv_slots,
                               .n_swa_slots = swa_kv_slots,
                               .dtype = kv_dtype,
                               .n_state_slots = state_slots}));
  return std::unique_ptr<ModelBackedRunner>(new ModelBackedRunner(std::move(model), std::move(kv)));
}

Status ModelBackedRunner::CopyState(int32_t from, int32_t to) {
  model::RecurrentState* state = kv_->recurrent();
  if (state == nullptr) return Unimplemented("the model keeps no recurrent state");
  if (from < 0 || from >= state->n_slots() || to < 0 || to >= state->n_slots()) {
    return InvalidArgument("state slot copy " + std::to_string(from) + " -> " + std::to_string(to) +
                           " outside [0, " + std::to_string(state->n_slots()) + ")");
  }
  state->Copy(from, to);
  return Status::Ok();
}

}  // namespace radixlm
