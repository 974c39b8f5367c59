// RemoteBackend: runs frontend programs against a radixlm (or SGLang) server through SGLang's
// native POST /generate, sending text as the in-process backend does, so a program gives the
// same text both ways at temperature 0.
//
// Fork prefixes are committed (prefilled once, before the branches start) but not pinned: the
// HTTP API has no pin, so they stay cached only as long as the server's eviction allows.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "frontend/backend.h"
#include "net/http_client.h"

namespace radixlm::frontend {

struct RemoteBackendOptions {
  std::string base_url = "http://127.0.0.1:30000";
  std::string api_key = "";
  double timeout_s = 600;
  // How roles render. Unset: from the server's /get_model_info — its model file's chat template
  // when that path exists on this machine, else radixlm's built-in template for its type.
  std::optional<ChatRoles> chat_roles = std::nullopt;
};

class RemoteBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<RemoteBackend>> Create(RemoteBackendOptions options);

  StatusOr<GenerateReply> Generate(const std::string& prompt,
                                   const SamplingParams& params) override;
  StatusOr<PrefixCommit> CommitPrefix(const std::string& text, bool pin) override;
  void ReleasePrefix(uint64_t) override {}
  bool caches_prefixes() const override { return caches_prefixes_; }
  StatusOr<int64_t> CountPromptTokens(const std::string& text) override;
  StatusOr<std::vector<std::vector<ScoredToken>>> ScorePrompts(
      const std::vector<std::string>& prompts, int32_t start) override;
  StatusOr<std::vector<std::vector<ScoredToken>>> ScoreTokenSequences(
      const std::vector<std::vector<int32_t>>& sequences) override;
  const ChatRoles& chat_roles() const override { return roles_; }
  BackendCounters counters() const override;

 private:
  RemoteBackend(RemoteBackendOptions options, net::HttpTarget target, ChatRoles roles)
      : options_(std::move(options)), target_(std::move(target)), roles_(std::move(roles)) {}
  // POST `path` with a JSON body; the parsed JSON response of a 200, else an error carrying
  // the server's message.
  StatusOr<nlohmann::json> Call(const std::string& method, const std::string& path,
                                const std::string& body) const;
  // /generate on every body at once (one thread each); the responses in order.
  StatusOr<std::vector<nlohmann::json>> GenerateAll(const std::vector<std::string>& bodies);
  // GenerateAll on scoring bodies; each one's input token logprobs.
  StatusOr<std::vector<std::vector<ScoredToken>>> ScoreAll(const std::vector<std::string>& bodies);
  void Count(const nlohmann::json& response, int64_t BackendCounters::*call);

  const RemoteBackendOptions options_;
  const net::HttpTarget target_;
  const ChatRoles roles_;
  bool caches_prefixes_ = true;  // from /get_server_info's disable_radix_cache
  mutable std::mutex mu_;
  BackendCounters counters_;  // guarded by mu_
};

}  // namespace radixlm::frontend
