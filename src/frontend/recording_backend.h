// RecordingBackend: forwards to another backend and records every model call a program made
// (kind, prompt, sampling parameters), so the same calls can be replayed without the frontend
// (bench/bench_frontend.py sends them as independent OpenAI requests).
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>

#include "frontend/backend.h"

namespace radixlm::frontend {

class RecordingBackend : public Backend {
 public:
  explicit RecordingBackend(Backend* inner) : inner_(inner) {}

  StatusOr<GenerateReply> Generate(const std::string& prompt,
                                   const SamplingParams& params) override;
  StatusOr<GenerateReply> GenerateWithImages(const std::string& prompt,
                                             std::span<const ImageBytes> images,
                                             const SamplingParams& params) override;
  StatusOr<PrefixCommit> CommitPrefix(const std::string& text, bool pin) override;
  void ReleasePrefix(uint64_t pin) override { inner_->ReleasePrefix(pin); }
  bool caches_prefixes() const override { return inner_->caches_prefixes(); }
  StatusOr<int64_t> CountPromptTokens(const std::string& text) override {
    return inner_->CountPromptTokens(text);
  }
  StatusOr<std::vector<std::vector<ScoredToken>>> ScorePrompts(
      const std::vector<std::string>& prompts, int32_t start) override;
  StatusOr<std::vector<std::vector<ScoredToken>>> ScoreTokenSequences(
      const std::vector<std::vector<int32_t>>& sequences) override {
    return inner_->ScoreTokenSequences(sequences);
  }
  const ChatRoles& chat_roles() const override { return inner_->chat_roles(); }
  BackendCounters counters() const override { return inner_->counters(); }

  // [{"kind": "generate" | "commit" | "score", "prompt": ..., "sampling_params": {...}}, ...]
  // in the order the calls were made (a generate call with images also has "images": the
  // number of them). Scoring calls list one entry per option prompt.
  nlohmann::json Calls() const;

 private:
  void Record(nlohmann::json call);

  Backend* inner_;
  mutable std::mutex mu_;
  nlohmann::json calls_ = nlohmann::json::array();  // guarded by mu_
};

}  // namespace radixlm::frontend
