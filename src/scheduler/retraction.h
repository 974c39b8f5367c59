// Retraction (SGLang's ScheduleBatch.retract_decode): when the KV pool cannot hold the next
// decode step even after evicting the tree, running requests are sent back to the waiting
// queue, their KV handed to the tree (evictable, so it is reclaimed at once if needed and
// reused if it survives). They keep their output ids and later re-prefill prompt + outputs,
// so their output is unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scheduler/request.h"

namespace radixlm {

// Victims in retraction order: fewest output tokens first (least work lost), then longest
// prompt (most memory freed), then latest arrival.
std::vector<Request*> RetractionOrder(std::span<Request* const> running);

// KV tokens the remaining requests should have free after a retraction: retract_decode_steps
// decode steps each (so the scheduler does not retract again at the very next step).
int64_t RetractionTarget(int64_t remaining_requests, int32_t retract_decode_steps,
                         int32_t page_size);

// The new_token_ratio after a retraction: (tokens decoded + steps * n) / (max_new_tokens sum)
// over the remaining requests, at most 1.
double NewTokenRatioAfterRetraction(std::span<Request* const> remaining,
                                    int32_t retract_decode_steps);

}  // namespace radixlm
