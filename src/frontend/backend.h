// Backend: what the interpreter needs from a model server. Two implementations: EngineBackend
// (an in-process Engine) and RemoteBackend (a radixlm server over HTTP, SGLang's native
// /generate). Both send text, not token ids, so the server tokenizes every prompt the same
// way and the two give the same tokens (and, at temperature 0, the same text).
//
// Images (the language's image()): a prompt holds kImageMarker where each image goes, and the
// images' file bytes go beside it, in order, as the server's chat path sends a chat's image
// parts (the engine lays each one out as its projector's model expects).
//
// Thread safety: every method may be called from many threads at once (one per running
// branch).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/chat_roles.h"
#include "sampling/sampling_params.h"
#include "util/status.h"

namespace radixlm::frontend {

// Where an image goes in a prompt: llama-server's media marker, which the engine reads
// (engine/image_prompt.h).
inline constexpr std::string_view kImageMarker = "<__media__>";

// An image file's bytes (PNG, JPEG, WebP or GIF), shared by the states that hold it.
using ImageBytes = std::shared_ptr<const std::vector<uint8_t>>;

struct GenerateReply {
  std::string text;
  std::string finish_reason;  // "stop", "length", "abort"
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

struct ScoredToken {
  int32_t token = -1;
  std::optional<double> logprob;  // none for a sequence's first token
};

struct PrefixCommit {
  int64_t prompt_tokens = 0;  // tokens of the committed text
  int64_t cached_tokens = 0;  // of those, already cached before the commit
  uint64_t pin = 0;           // 0: not pinned (ReleasePrefix not needed)
};

// Counts of what a backend was asked to do (for benchmarks and tests).
struct BackendCounters {
  int64_t generate_calls = 0;
  int64_t commit_calls = 0;
  int64_t score_calls = 0;
  int64_t prompt_tokens = 0;  // summed over every call
  int64_t cached_tokens = 0;  // summed over every call
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Continues `prompt` under `params`.
  virtual StatusOr<GenerateReply> Generate(const std::string& prompt,
                                           const SamplingParams& params) = 0;
  // Continues `prompt`, which holds one kImageMarker per image of `images`, in order. A backend
  // that sends no images answers Unimplemented; a model that takes none, the engine's
  // InvalidArgument.
  virtual StatusOr<GenerateReply> GenerateWithImages(const std::string& /*prompt*/,
                                                     std::span<const ImageBytes> /*images*/,
                                                     const SamplingParams& /*params*/) {
    return Unimplemented("this backend does not send images (the in-process EngineBackend does)");
  }

  // Prefills `text` (no new tokens) so later prompts extending it find its KV cached; with
  // `pin`, and where the backend can, keeps that KV from eviction until ReleasePrefix.
  virtual StatusOr<PrefixCommit> CommitPrefix(const std::string& text, bool pin) = 0;
  virtual void ReleasePrefix(uint64_t pin) = 0;

  // False when the server keeps no prefix cache (--disable-radix-cache): committing a prefix
  // would only compute it one more time, so fork and RunBatch skip their commits.
  virtual bool caches_prefixes() const = 0;

  // The prompt token count of `text` (BOS included), as the server counts it, computing
  // nothing: the in-process backend tokenizes, the remote one asks /tokenize (a server
  // without that route gets the text committed instead).
  virtual StatusOr<int64_t> CountPromptTokens(const std::string& text) = 0;

  // The input logprobs (temperature 1, no sampling) of each prompt's tokens at positions
  // [start, end). All prompts are in flight together.
  virtual StatusOr<std::vector<std::vector<ScoredToken>>> ScorePrompts(
      const std::vector<std::string>& prompts, int32_t start) = 0;

  // The input logprobs of token sequences scored on their own from position 0 (no BOS added;
  // the first token has none) — select's unconditional likelihoods.
  virtual StatusOr<std::vector<std::vector<ScoredToken>>> ScoreTokenSequences(
      const std::vector<std::vector<int32_t>>& sequences) = 0;

  // How roles render (the model's chat template).
  virtual const ChatRoles& chat_roles() const = 0;

  virtual BackendCounters counters() const = 0;
};

}  // namespace radixlm::frontend
