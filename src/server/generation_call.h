// GenerationCall: one HTTP request's generation in flight, driven by events.
//
// It submits one engine request per prompt (each with n samples), then is drained on the
// owning connection's strand whenever a stream's notifier fires; nothing ever blocks waiting
// for the engine. A GenerationFormatter (native or OpenAI) turns the chunks into SSE events as
// they arrive (streaming) or into one response at the end. Latency and token metrics are
// recorded here, once per sample.
//
// Threading: Submit, SetWaker, Drain, TakeResponse and Abort are called by one connection, one
// at a time (its strand). The waker is called by the engine's scheduler thread and must only
// post work.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/http_message.h"
#include "server/live_requests.h"
#include "server/metrics.h"
#include "server/server_call.h"

namespace radixlm::server {

// [prompt][sample] results; sample s of prompt p has index s.
using ResultGrid = std::vector<std::vector<GenerateResult>>;

class GenerationFormatter {
 public:
  virtual ~GenerationFormatter() = default;
  // Streaming only: appends the SSE bytes for one chunk of prompt `prompt`. `result` is that
  // sample's result so far, `chunk` already appended; elapsed_s is the time since submission.
  virtual void OnChunk(size_t prompt, const GenerateOutput& chunk, const GenerateResult& result,
                       double elapsed_s, std::string* out) {}
  // Streaming only: appends the closing events ("data: [DONE]" and anything before it).
  virtual void OnStreamEnd(const ResultGrid& results, double elapsed_s, std::string* out) {}
  // Non-streaming only: the response once every sample has finished.
  virtual HttpResponse OnComplete(const ResultGrid& results, double elapsed_s) = 0;
};

class GenerationCall : public ServerCall {
 public:
  // metrics and live may be null.
  GenerationCall(Engine* engine, ServerMetrics* metrics, LiveRequests* live,
                 std::unique_ptr<GenerationFormatter> formatter, bool streaming);
  ~GenerationCall() override;

  // Submits the requests in order. On the first refusal, aborts those already submitted and
  // returns the engine's error (InvalidArgument for bad input).
  Status Submit(std::vector<GenerateRequest> requests);

  // Installs `wake` as every stream's notifier, then calls it once (output may already wait).
  void SetWaker(const std::function<void()>& wake) override;

  // Takes every ready chunk. Streaming: appends SSE bytes to *out (the closing events too, once
  // everything ended), but stops taking chunks once *out holds more than max_out_bytes; the
  // rest stay in their streams for a later Drain (a client that cannot keep up is not
  // formatted for without bound). Returns true once every sample has finished and been taken.
  bool Drain(std::string* out, size_t max_out_bytes) override;

  // Non-streaming: the response, after Drain returned true.
  HttpResponse TakeResponse() override;

  // The client went away: aborts every unfinished request so its KV is freed.
  void Abort() override;

  bool streaming() const override { return streaming_; }
  bool done() const override { return done_; }
  const std::vector<std::shared_ptr<GenerateStream>>& streams() const { return streams_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct SampleClock {
    bool has_output = false;
    Clock::time_point last;
  };

  double Elapsed(Clock::time_point now) const;
  void Record(size_t prompt, const GenerateOutput& chunk, Clock::time_point now);

  Engine* const engine_;
  ServerMetrics* const metrics_;
  LiveRequests* const live_;
  const std::unique_ptr<GenerationFormatter> formatter_;
  const bool streaming_;
  const Clock::time_point start_;
  std::vector<std::shared_ptr<GenerateStream>> streams_;
  std::vector<bool> consumed_;  // per stream: ended and fully drained
  ResultGrid results_;
  std::vector<std::vector<SampleClock>> clocks_;
  bool done_ = false;
};

}  // namespace radixlm::server
