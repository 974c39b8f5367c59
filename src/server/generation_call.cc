#include "server/generation_call.h"

#include <utility>

namespace radixlm::server {

GenerationCall::GenerationCall(Engine* engine, ServerMetrics* metrics, LiveRequests* live,
                               std::unique_ptr<GenerationFormatter> formatter, bool streaming)
    : engine_(engine),
      metrics_(metrics),
      live_(live),
      formatter_(std::move(formatter)),
      streaming_(streaming),
      start_(Clock::now()) {}

GenerationCall::~GenerationCall() {
  // Detach from streams that may outlive this call (the engine still holds them).
  for (const auto& stream : streams_) {
    stream->SetNotifier(nullptr);
    if (live_ != nullptr) live_->Remove(stream->rid());
  }
}

Status GenerationCall::Submit(std::vector<GenerateRequest> requests) {
  if (metrics_ != nullptr) metrics_->OnRequest();
  for (GenerateRequest& request : requests) {
    const int32_t n = request.sampling_params.n;
    StatusOr<std::shared_ptr<GenerateStream>> stream = engine_->Submit(std::move(request));
    if (!stream.ok()) {
      for (const auto& submitted : streams_) {
        engine_->Abort(submitted->rid());
        if (live_ != nullptr) live_->Remove(submitted->rid());
      }
      streams_.clear();
      return stream.status();
    }
    if (live_ != nullptr) live_->Add((*stream)->rid());
    streams_.push_back(std::move(*stream));
    results_.emplace_back(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) results_.back()[i].index = i;
    clocks_.emplace_back(static_cast<size_t>(n));
  }
  consumed_.assign(streams_.size(), false);
  return Status::Ok();
}

void GenerationCall::SetWaker(const std::function<void()>& wake) {
  for (const auto& stream : streams_) stream->SetNotifier(wake);
  wake();
}

double GenerationCall::Elapsed(Clock::time_point now) const {
  return std::chrono::duration<double>(now - start_).count();
}

void GenerationCall::Record(size_t prompt, const GenerateOutput& chunk, Clock::time_point now) {
  if (metrics_ == nullptr) return;
  SampleClock& clock = clocks_[prompt][chunk.index];
  if (!chunk.output_ids.empty()) {
    if (!clock.has_output) {
      metrics_->OnTimeToFirstToken(Elapsed(now));
      clock.has_output = true;
    } else {
      metrics_->OnInterTokenLatency(std::chrono::duration<double>(now - clock.last).count(),
                                    static_cast<int64_t>(chunk.output_ids.size()));
    }
    clock.last = now;
  }
  if (chunk.finish_reason.has_value()) {
    metrics_->OnSampleFinished(chunk.meta, chunk.finish_reason->is_abort(), Elapsed(now));
  }
}

bool GenerationCall::Drain(std::string* out, size_t max_out_bytes) {
  if (done_) return true;
  const Clock::time_point now = Clock::now();
  bool all_consumed = true;
  for (size_t p = 0; p < streams_.size(); ++p) {
    if (consumed_[p]) continue;
    GenerateStream& stream = *streams_[p];
    // Read ended() first: if it was already true, the loop below takes the last chunk.
    const bool ended = stream.ended();
    bool emptied = true;
    while (true) {
      if (streaming_ && out->size() > max_out_bytes) {
        emptied = false;
        break;
      }
      std::optional<GenerateOutput> chunk = stream.TryNext();
      if (!chunk.has_value()) break;
      const int32_t index = chunk->index;
      if (index < 0 || static_cast<size_t>(index) >= results_[p].size()) continue;
      Record(p, *chunk, now);
      GenerateResult& result = results_[p][index];
      if (streaming_) {
        GenerateOutput copy = *chunk;
        result.Append(std::move(*chunk));
        formatter_->OnChunk(p, copy, result, Elapsed(now), out);
      } else {
        result.Append(std::move(*chunk));
      }
    }
    consumed_[p] = ended && emptied;
    all_consumed = all_consumed && consumed_[p];
  }
  if (all_consumed) {
    done_ = true;
    if (streaming_) formatter_->OnStreamEnd(results_, Elapsed(now), out);
  }
  return done_;
}

HttpResponse GenerationCall::TakeResponse() {
  return formatter_->OnComplete(results_, Elapsed(Clock::now()));
}

void GenerationCall::Abort() {
  if (done_) return;
  for (size_t p = 0; p < streams_.size(); ++p) {
    if (!consumed_[p]) engine_->Abort(streams_[p]->rid());
  }
}

}  // namespace radixlm::server
