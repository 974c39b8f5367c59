#include "frontend/engine_backend.h"

#include "engine/image_prompt.h"

namespace radixlm::frontend {
namespace {

GenerateRequest Scoring(int32_t start) {
  GenerateRequest r;
  r.sampling_params.max_new_tokens = 0;
  r.sampling_params.temperature = 0;  // input logprobs at temperature 1 (no scaling)
  r.return_logprob = true;
  r.logprob_start_len = start;
  return r;
}

std::vector<ScoredToken> ToScored(const std::vector<LogprobEntry>& entries) {
  std::vector<ScoredToken> out;
  out.reserve(entries.size());
  for (const LogprobEntry& e : entries) {
    ScoredToken t;
    t.token = e.token;
    if (e.logprob.has_value()) t.logprob = *e.logprob;
    out.push_back(t);
  }
  return out;
}

Status FinishedOk(const GenerateResult& r) {
  if (r.finish_reason.has_value() && r.finish_reason->is_abort()) {
    return Aborted("the engine aborted the request: " + r.finish_reason->matched_text);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<EngineBackend>> EngineBackend::Create(Engine* engine,
                                                               EngineBackendOptions options) {
  if (engine == nullptr) return InvalidArgument("EngineBackend needs an engine");
  ChatRoles roles;
  if (options.chat_roles.has_value()) {
    roles = std::move(*options.chat_roles);
  } else {
    const chat::ChatRenderer* renderer = engine->assets().chat();
    if (renderer == nullptr) return engine->assets().chat_status();
    RADIXLM_ASSIGN_OR_RETURN(roles, ChatRoles::FromRenderer(*renderer));
  }
  return std::unique_ptr<EngineBackend>(new EngineBackend(engine, std::move(roles)));
}

void EngineBackend::Count(const GenerateResult& r, int64_t BackendCounters::*call) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(counters_.*call);
  counters_.prompt_tokens += r.meta.prompt_tokens;
  counters_.cached_tokens += r.meta.cached_tokens;
}

BackendCounters EngineBackend::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

StatusOr<std::vector<GenerateResult>> EngineBackend::RunAll(std::vector<GenerateRequest> requests) {
  std::vector<std::shared_ptr<GenerateStream>> streams;
  Status status = Status::Ok();
  for (GenerateRequest& r : requests) {
    StatusOr<std::shared_ptr<GenerateStream>> s = engine_->Submit(std::move(r));
    if (!s.ok()) {
      status = s.status();
      break;
    }
    streams.push_back(*s);
  }
  std::vector<GenerateResult> results;
  for (auto& stream : streams) {  // collect even after a failed submit: never leave one running
    std::vector<GenerateResult> r = stream->Collect();
    if (r.size() != 1) {
      if (status.ok()) status = Internal("expected one sample per request");
      continue;
    }
    if (status.ok()) status = FinishedOk(r[0]);
    results.push_back(std::move(r[0]));
  }
  RADIXLM_RETURN_IF_ERROR(status);
  return results;
}

StatusOr<GenerateReply> EngineBackend::Generate(const std::string& prompt,
                                                const SamplingParams& params) {
  GenerateRequest r;
  r.text = prompt;
  r.sampling_params = params;
  return RunGenerate(std::move(r));
}

StatusOr<GenerateReply> EngineBackend::GenerateWithImages(const std::string& prompt,
                                                          std::span<const ImageBytes> images,
                                                          const SamplingParams& params) {
  static_assert(kImageMarker == radixlm::kImageMarker);
  GenerateRequest r;
  r.text = prompt;
  r.sampling_params = params;
  for (const ImageBytes& image : images) {
    if (image == nullptr) return InvalidArgument("an image of the prompt has no bytes");
    r.image_data.push_back(*image);
  }
  return RunGenerate(std::move(r));
}

StatusOr<GenerateReply> EngineBackend::RunGenerate(GenerateRequest request) {
  request.sampling_params.n = 1;
  std::vector<GenerateRequest> one;
  one.push_back(std::move(request));
  RADIXLM_ASSIGN_OR_RETURN(std::vector<GenerateResult> results, RunAll(std::move(one)));
  const GenerateResult& g = results[0];
  Count(g, &BackendCounters::generate_calls);
  GenerateReply reply;
  reply.text = g.text;
  reply.finish_reason = g.finish_reason.has_value() ? g.finish_reason->type() : "";
  reply.prompt_tokens = g.meta.prompt_tokens;
  reply.completion_tokens = g.meta.completion_tokens;
  reply.cached_tokens = g.meta.cached_tokens;
  return reply;
}

StatusOr<PrefixCommit> EngineBackend::CommitPrefix(const std::string& text, bool pin) {
  GenerateRequest r = Scoring(-1);
  r.return_logprob = false;
  r.text = text;
  std::vector<GenerateRequest> one;
  one.push_back(std::move(r));
  RADIXLM_ASSIGN_OR_RETURN(std::vector<GenerateResult> results, RunAll(std::move(one)));
  Count(results[0], &BackendCounters::commit_calls);
  PrefixCommit commit;
  commit.prompt_tokens = results[0].meta.prompt_tokens;
  commit.cached_tokens = results[0].meta.cached_tokens;
  if (pin) {
    RADIXLM_ASSIGN_OR_RETURN(std::vector<int32_t> ids, engine_->assets().codec().Encode(text));
    RADIXLM_ASSIGN_OR_RETURN(PrefixPin p, engine_->PinPrefix(std::move(ids)));
    commit.pin = p.id;
  }
  return commit;
}

StatusOr<int64_t> EngineBackend::CountPromptTokens(const std::string& text) {
  RADIXLM_ASSIGN_OR_RETURN(std::vector<int32_t> ids, engine_->assets().codec().Encode(text));
  return static_cast<int64_t>(ids.size());
}

void EngineBackend::ReleasePrefix(uint64_t pin) { engine_->UnpinPrefix(pin); }

StatusOr<std::vector<std::vector<ScoredToken>>> EngineBackend::ScorePrompts(
    const std::vector<std::string>& prompts, int32_t start) {
  std::vector<GenerateRequest> requests;
  for (const std::string& p : prompts) {
    GenerateRequest r = Scoring(start);
    r.text = p;
    requests.push_back(std::move(r));
  }
  return ScoreAll(std::move(requests));
}

StatusOr<std::vector<std::vector<ScoredToken>>> EngineBackend::ScoreTokenSequences(
    const std::vector<std::vector<int32_t>>& sequences) {
  std::vector<GenerateRequest> requests;
  for (const auto& ids : sequences) {
    GenerateRequest r = Scoring(0);
    r.input_ids = ids;
    requests.push_back(std::move(r));
  }
  return ScoreAll(std::move(requests));
}

StatusOr<std::vector<std::vector<ScoredToken>>> EngineBackend::ScoreAll(
    std::vector<GenerateRequest> requests) {
  RADIXLM_ASSIGN_OR_RETURN(std::vector<GenerateResult> results, RunAll(std::move(requests)));
  std::vector<std::vector<ScoredToken>> out;
  for (const GenerateResult& g : results) {
    Count(g, &BackendCounters::score_calls);
    out.push_back(ToScored(g.input_token_logprobs));
  }
  return out;
}

}  // namespace radixlm::frontend
