// EngineBackend: runs frontend programs on an in-process Engine. Prompts go in as text (the
// engine tokenizes them, as the server does); fork prefixes are pinned with
// Engine::PinPrefix while their branches run.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "engine/engine.h"
#include "frontend/backend.h"

namespace radixlm::frontend {

struct EngineBackendOptions {
  // How roles render. Unset: from the engine's model file (its chat template, or radixlm's
  // built-in one for its architecture); engines without a model file need this set.
  std::optional<ChatRoles> chat_roles = std::nullopt;
};

class EngineBackend : public Backend {
 public:
  // `engine` must outlive the backend.
  static StatusOr<std::unique_ptr<EngineBackend>> Create(Engine* engine,
                                                         EngineBackendOptions options = {});

  StatusOr<GenerateReply> Generate(const std::string& prompt,
                                   const SamplingParams& params) override;
  // As the server's chat path: the prompt text with its markers, each image's bytes as the
  // request's image_data (encoded through the engine's image cache).
  StatusOr<GenerateReply> GenerateWithImages(const std::string& prompt,
                                             std::span<const ImageBytes> images,
                                             const SamplingParams& params) override;
  StatusOr<PrefixCommit> CommitPrefix(const std::string& text, bool pin) override;
  void ReleasePrefix(uint64_t pin) override;
  bool caches_prefixes() const override { return !engine_->config().disable_radix_cache; }
  StatusOr<int64_t> CountPromptTokens(const std::string& text) override;
  StatusOr<std::vector<std::vector<ScoredToken>>> ScorePrompts(
      const std::vector<std::string>& prompts, int32_t start) override;
  StatusOr<std::vector<std::vector<ScoredToken>>> ScoreTokenSequences(
      const std::vector<std::vector<int32_t>>& sequences) override;
  const ChatRoles& chat_roles() const override { return roles_; }
  BackendCounters counters() const override;

  Engine& engine() { return *engine_; }

 private:
  EngineBackend(Engine* engine, ChatRoles roles) : engine_(engine), roles_(std::move(roles)) {}
  StatusOr<GenerateReply> RunGenerate(GenerateRequest request);
  // Submits every request, then collects each one's single result.
  StatusOr<std::vector<GenerateResult>> RunAll(std::vector<GenerateRequest> requests);
  // RunAll on scoring requests; each one's input token logprobs.
  StatusOr<std::vector<std::vector<ScoredToken>>> ScoreAll(std::vector<GenerateRequest> requests);
  void Count(const GenerateResult& r, int64_t BackendCounters::*call);

  Engine* engine_;
  const ChatRoles roles_;
  mutable std::mutex mu_;
  BackendCounters counters_;  // guarded by mu_
};

}  // namespace radixlm::frontend
