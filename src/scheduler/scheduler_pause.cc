// Scheduler: pausing generation (SGLang's pause_generation / continue_generation) and the
// waiting / running timeouts checked once per Step.
#include <vector>

#include "scheduler/scheduler.h"

namespace radixlm {

void Scheduler::Pause(PauseMode mode) {
  paused_ = true;
  switch (mode) {
    case PauseMode::kAbort: {
      std::vector<uint64_t> ids;
      ids.reserve(requests_.size());
      for (const auto& [id, req] : requests_) ids.push_back(id);
      for (uint64_t id : ids) Abort(id, "Generation was paused (mode abort).");
      break;
    }
    case PauseMode::kRetract: {
      // The chunked request first: Retract moves requests to the back of waiting_, and the
      // one furthest along should not queue behind requests that never ran.
      if (chunked_ != nullptr) Retract(chunked_);
      const std::vector<Request*> running = running_;
      for (Request* req : running) Retract(req);
      break;
    }
    case PauseMode::kInPlace:
      break;
  }
}

void Scheduler::Continue() { paused_ = false; }

void Scheduler::AbortTimedOut() {
  const double waiting_limit = config_.waiting_timeout_s;
  const double running_limit = config_.running_timeout_s;
  if (waiting_limit <= 0 && running_limit <= 0) return;
  const double now = clock_();
  std::vector<Request*> waited;
  std::vector<Request*> ran;
  if (waiting_limit > 0) {
    for (Request* req : waiting_) {
      if (!req->admitted_once && now - req->arrival_time > waiting_limit) waited.push_back(req);
    }
  }
  if (running_limit > 0) {
    auto over = [&](const Request* req) { return now - req->first_admission_time > running_limit; };
    for (Request* req : running_) {
      if (over(req)) ran.push_back(req);
    }
    if (chunked_ != nullptr && over(chunked_)) ran.push_back(chunked_);
  }
  for (Request* req : waited) {
    // SGLang answers a request that never left the queue with 503 Service Unavailable.
    FinishRequest(req, FinishReason::Abort("Request waiting timeout reached.", 503));
  }
  for (Request* req : ran)
    FinishRequest(req, FinishReason::Abort("Request running timeout reached."));
}

}  // namespace radixlm
