// The randomized workload the scheduler's workload tests run against the fake model: three
// shared "system prompts", each request one of them plus a random tail or (one in five) a cold
// random prompt; half the requests are added up front, the rest arrive between steps while
// others run, then the harness runs until idle. Deterministic for a PromptGen seed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "scheduler_harness.h"

namespace radixlm::testing {

struct RandomWorkload {
  int64_t min_system_tokens = 10;  // each shared prefix is [min_system_tokens, 90] tokens
  int64_t min_requests = 6;        // [min_requests, 24] requests
  int max_arrival_steps = 10000;   // steps during which the second half may arrive
  // A request's max_new_tokens, drawn after its prompt.
  std::function<int32_t(PromptGen&)> max_new_tokens = [](PromptGen& gen) {
    return static_cast<int32_t>(gen.Uniform(1, 40));
  };
  std::function<void()> after_step;  // optional: after each step while requests arrive
};

struct WorkloadRequest {
  std::vector<int32_t> prompt;
  int32_t max_new_tokens = 0;
};

// Runs `workload` on `h` until idle; returns every request added, by id (0, 1, ...). Returns
// early, with the requests added so far, once the test has a fatal failure.
inline std::map<uint64_t, WorkloadRequest> RunRandomWorkload(SchedulerHarness& h, PromptGen& gen,
                                                             const RandomWorkload& workload) {
  std::vector<std::vector<int32_t>> systems;
  for (int i = 0; i < 3; ++i) {
    systems.push_back(gen.Tokens(gen.Uniform(workload.min_system_tokens, 90)));
  }
  std::map<uint64_t, WorkloadRequest> requests;
  const int n_requests = static_cast<int>(gen.Uniform(workload.min_requests, 24));
  uint64_t next_id = 0;
  auto add_one = [&] {
    std::vector<int32_t> prompt =
        Concat(systems[gen.Uniform(0, 2)], gen.Tokens(gen.Uniform(1, 40)));
    if (gen.Uniform(0, 4) == 0) prompt = gen.Tokens(gen.Uniform(1, 120));  // cold
    const int32_t max_new = workload.max_new_tokens(gen);
    requests[next_id] = {prompt, max_new};
    h.Add(SchedulerHarness::Greedy(next_id, prompt, max_new));
    ++next_id;
  };
  for (int i = 0; i < n_requests / 2; ++i) add_one();
  for (int step = 0; step < workload.max_arrival_steps && h.scheduler().HasWork(); ++step) {
    if (static_cast<int>(next_id) < n_requests && gen.Uniform(0, 2) == 0) add_one();
    h.Step();
    if (::testing::Test::HasFatalFailure()) return requests;
    if (workload.after_step) workload.after_step();
  }
  while (static_cast<int>(next_id) < n_requests) add_one();
  h.RunUntilIdle();
  return requests;
}

// Every request finished with the unbatched, uncached reference's greedy output.
inline void ExpectReferenceOutputs(SchedulerHarness& h,
                                   const std::map<uint64_t, WorkloadRequest>& requests) {
  for (const auto& [id, r] : requests) {
    const Collected& c = h.result(id);
    ASSERT_TRUE(c.finish.has_value()) << id;
    EXPECT_EQ(c.ids, h.runner().ReferenceGreedy(r.prompt, r.max_new_tokens)) << "request " << id;
  }
}

}  // namespace radixlm::testing
