#include "engine/engine_config.h"

#include <algorithm>

namespace radixlm {

StatusOr<SchedulerConfig> EngineConfig::ToSchedulerConfig(int64_t pool_tokens,
                                                          int64_t context) const {
  SchedulerConfig c;
  RADIXLM_ASSIGN_OR_RETURN(c.schedule_policy, ParseSchedulePolicy(schedule_policy));
  RADIXLM_ASSIGN_OR_RETURN(c.radix_eviction_policy, ParseEvictionPolicy(radix_eviction_policy));
  if (page_size < 1) return InvalidArgument("--page-size must be at least 1");
  if (!(schedule_conservativeness > 0)) {
    return InvalidArgument("--schedule-conservativeness must be positive");
  }
  c.max_total_tokens = pool_tokens;
  c.page_size = page_size;
  c.disable_radix_cache = disable_radix_cache;
  c.context_length = context;
  c.chunked_prefill_size = chunked_prefill_size;
  c.max_prefill_tokens = max_prefill_tokens;
  c.max_running_requests =
      max_running_requests > 0
          ? max_running_requests
          : static_cast<int32_t>(std::clamp<int64_t>(pool_tokens / 32, 1, 256));
  c.init_new_token_ratio = std::min(1.0, 0.7 * schedule_conservativeness);
  c.random_seed = random_seed;
  c.enable_jump_forward = !disable_jump_forward;
  RADIXLM_RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace radixlm
