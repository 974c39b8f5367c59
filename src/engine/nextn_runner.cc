#include "engine/nextn_runner.h"

namespace radixlm {

StatusOr<std::unique_ptr<NextnRunner>> NextnRunner::Create(model::Model& target, int64_t kv_slots,
                                                           kernels::KvDtype kv_dtype) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::NextnModel> model,
                           model::NextnModel::Create(target));
  RADIXLM_ASSIGN_OR_RETURN(
      std::unique_ptr<model::KvCache> kv,
      model::KvCache::Create(model->config(),
                             model::KvCacheOptions{.n_slots = kv_slots, .dtype = kv_dtype}));
  return std::unique_ptr<NextnRunner>(new NextnRunner(std::move(model), std::move(kv)));
}

}  // namespace radixlm
