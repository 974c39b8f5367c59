// The bridge between the engine's public types (engine_config.h, api.h) and the scheduler's:
// internal to the engine (and to tools that drive a Scheduler directly, such as the bench
// command). Nothing that includes only engine.h sees a scheduler type.
#pragma once

#include <cstdint>

#include "engine/api.h"
#include "engine/engine_config.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_config.h"
#include "util/status.h"

namespace radixlm {

// The scheduler config for a pool of `pool_tokens` and a model context of `context` (and,
// for hybrid SWA memory, a sliding-window pool of swa_pool_tokens for a window of
// sliding_window tokens). InvalidArgument naming the flag when a value is out of range or
// unknown.
StatusOr<SchedulerConfig> ToSchedulerConfig(const EngineConfig& config, int64_t pool_tokens,
                                            int64_t context, int64_t swa_pool_tokens = 0,
                                            int64_t sliding_window = 0);

EngineSettings ToEngineSettings(const SchedulerConfig& config);
SchedulerCounters ToSchedulerCounters(const SchedulerStats& stats);
Scheduler::PauseMode ToSchedulerPauseMode(PauseMode mode);

}  // namespace radixlm
