#include "frontend/recording_backend.h"

namespace radixlm::frontend {

void RecordingBackend::Record(nlohmann::json call) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(std::move(call));
}

nlohmann::json RecordingBackend::Calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

StatusOr<GenerateReply> RecordingBackend::Generate(const std::string& prompt,
                                                   const SamplingParams& params) {
  Record({{"kind", "generate"}, {"prompt", prompt}, {"sampling_params", params.ToJson()}});
  return inner_->Generate(prompt, params);
}

StatusOr<GenerateReply> RecordingBackend::GenerateWithImages(const std::string& prompt,
                                                             std::span<const ImageBytes> images,
                                                             const SamplingParams& params) {
  Record({{"kind", "generate"},
          {"prompt", prompt},
          {"images", images.size()},
          {"sampling_params", params.ToJson()}});
  return inner_->GenerateWithImages(prompt, images, params);
}

StatusOr<PrefixCommit> RecordingBackend::CommitPrefix(const std::string& text, bool pin) {
  Record({{"kind", "commit"}, {"prompt", text}});
  return inner_->CommitPrefix(text, pin);
}

StatusOr<std::vector<std::vector<ScoredToken>>> RecordingBackend::ScorePrompts(
    const std::vector<std::string>& prompts, int32_t start) {
  for (const std::string& p : prompts) {
    Record({{"kind", "score"}, {"prompt", p}, {"logprob_start_len", start}});
  }
  return inner_->ScorePrompts(prompts, start);
}

}  // namespace radixlm::frontend
