#include "frontend/remote_backend.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "chat/chat_renderer.h"

namespace radixlm::frontend {
namespace {

using nlohmann::json;

json ScoringBody(int32_t start) {
  return json{{"sampling_params", {{"max_new_tokens", 0}, {"temperature", 0}}},
              {"return_logprob", true},
              {"logprob_start_len", start}};
}

std::vector<ScoredToken> InputLogprobs(const json& response) {
  std::vector<ScoredToken> out;
  const json& meta = response.at("meta_info");
  auto it = meta.find("input_token_logprobs");
  if (it == meta.end() || !it->is_array()) return out;
  for (const json& e : *it) {  // [logprob or null, token id, text or null]
    ScoredToken t;
    t.token = e.at(1).get<int32_t>();
    if (!e.at(0).is_null()) t.logprob = e.at(0).get<double>();
    out.push_back(t);
  }
  return out;
}

int64_t MetaInt(const json& response, const char* field) {
  const json& meta = response.at("meta_info");
  auto it = meta.find(field);
  return it != meta.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// "gemma3_text" -> "gemma3": the architecture radixlm keys its built-in templates by.
std::string ArchOfModelType(std::string model_type) {
  const std::string suffix = "_text";
  if (model_type.size() > suffix.size() &&
      model_type.compare(model_type.size() - suffix.size(), suffix.size(), suffix) == 0) {
    model_type.resize(model_type.size() - suffix.size());
  }
  return model_type;
}

}  // namespace

StatusOr<std::unique_ptr<RemoteBackend>> RemoteBackend::Create(RemoteBackendOptions options) {
  RADIXLM_ASSIGN_OR_RETURN(net::HttpTarget target, net::ParseBaseUrl(options.base_url));
  std::unique_ptr<RemoteBackend> probe(new RemoteBackend(options, target, ChatRoles::Plain()));
  ChatRoles roles;
  if (options.chat_roles.has_value()) {
    roles = std::move(*options.chat_roles);
  } else {
    RADIXLM_ASSIGN_OR_RETURN(json info, probe->Call("GET", "/get_model_info", ""));
    if (info.contains("chat_template") && info.contains("arch")) {
      // A radixlm server: its own template, as it renders chats.
      RADIXLM_ASSIGN_OR_RETURN(
          chat::ChatRenderer renderer,
          chat::ChatRenderer::ForModel(info.value("chat_template", ""), info.value("arch", ""),
                                       info.value("model_name", ""), "", ""));
      RADIXLM_ASSIGN_OR_RETURN(roles, ChatRoles::FromRenderer(renderer));
    } else {  // another server (SGLang): the built-in template of its architecture
      RADIXLM_ASSIGN_OR_RETURN(
          roles, ChatRolesForArchitecture(ArchOfModelType(info.value("model_type", ""))));
    }
  }
  std::unique_ptr<RemoteBackend> backend(new RemoteBackend(options, target, std::move(roles)));
  StatusOr<json> server_info = probe->Call("GET", "/get_server_info", "");
  if (server_info.ok() && server_info->is_object()) {
    backend->caches_prefixes_ = !server_info->value("disable_radix_cache", false);
  }
  return backend;
}

StatusOr<json> RemoteBackend::Call(const std::string& method, const std::string& path,
                                   const std::string& body) const {
  net::HttpCall call;
  call.method = method;
  call.path = path;
  call.body = body;
  call.api_key = options_.api_key;
  call.timeout_s = options_.timeout_s;
  std::string response;
  RADIXLM_ASSIGN_OR_RETURN(
      int status, net::Fetch(target_, call, [&](std::string_view d) { response.append(d); }));
  json parsed = json::parse(response, nullptr, /*allow_exceptions=*/false);
  if (status != 200) {
    std::string message = response;
    if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
      message = parsed["error"].value("message", response);
    } else if (parsed.is_object() && parsed.contains("message")) {
      message = parsed.value("message", response);
    }
    const StatusCode code = status == 400   ? StatusCode::kInvalidArgument
                            : status == 404 ? StatusCode::kNotFound
                                            : StatusCode::kInternal;
    return Status(code,
                  "the server answered " + std::to_string(status) + " to " + path + ": " + message);
  }
  if (parsed.is_discarded()) return Internal("the server's " + path + " reply is not JSON");
  return parsed;
}

StatusOr<std::vector<json>> RemoteBackend::GenerateAll(const std::vector<std::string>& bodies) {
  std::vector<StatusOr<json>> replies(bodies.size(), Internal("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bodies.size(); ++i) {
    threads.emplace_back([&, i] { replies[i] = Call("POST", "/generate", bodies[i]); });
  }
  for (std::thread& t : threads) t.join();
  std::vector<json> out;
  for (StatusOr<json>& r : replies) {
    RADIXLM_RETURN_IF_ERROR(r.status());
    if (!r->is_object() || !r->contains("meta_info")) {
      return Internal("the server's /generate reply has no meta_info");
    }
    out.push_back(std::move(*r));
  }
  return out;
}

void RemoteBackend::Count(const json& response, int64_t BackendCounters::*call) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(counters_.*call);
  counters_.prompt_tokens += MetaInt(response, "prompt_tokens");
  counters_.cached_tokens += MetaInt(response, "cached_tokens");
}

BackendCounters RemoteBackend::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

StatusOr<GenerateReply> RemoteBackend::Generate(const std::string& prompt,
                                                const SamplingParams& params) {
  json body{{"text", prompt}, {"sampling_params", params.ToJson()}};
  RADIXLM_ASSIGN_OR_RETURN(std::vector<json> r, GenerateAll({body.dump()}));
  Count(r[0], &BackendCounters::generate_calls);
  GenerateReply reply;
  reply.text = r[0].value("text", "");
  const json& meta = r[0].at("meta_info");
  if (meta.contains("finish_reason") && meta["finish_reason"].is_object()) {
    reply.finish_reason = meta["finish_reason"].value("type", "");
  }
  reply.prompt_tokens = MetaInt(r[0], "prompt_tokens");
  reply.completion_tokens = MetaInt(r[0], "completion_tokens");
  reply.cached_tokens = MetaInt(r[0], "cached_tokens");
  if (reply.finish_reason == "abort") {
    return Aborted("the server aborted the request: " +
                   meta["finish_reason"].value("message", std::string()));
  }
  return reply;
}

StatusOr<PrefixCommit> RemoteBackend::CommitPrefix(const std::string& text, bool /*pin*/) {
  json body{{"text", text}, {"sampling_params", {{"max_new_tokens", 0}}}};
  RADIXLM_ASSIGN_OR_RETURN(std::vector<json> r, GenerateAll({body.dump()}));
  Count(r[0], &BackendCounters::commit_calls);
  PrefixCommit commit;
  commit.prompt_tokens = MetaInt(r[0], "prompt_tokens");
  commit.cached_tokens = MetaInt(r[0], "cached_tokens");
  return commit;
}

StatusOr<int64_t> RemoteBackend::CountPromptTokens(const std::string& text) {
  // /tokenize counts without computing anything; a server without it (404) gets the prompt
  // committed instead, which reports its token count too.
  StatusOr<json> r = Call("POST", "/tokenize", json{{"prompt", text}}.dump());
  if (r.ok() && r->is_object() && (*r)["count"].is_number_integer()) {
    return (*r)["count"].get<int64_t>();
  }
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  RADIXLM_ASSIGN_OR_RETURN(PrefixCommit commit, CommitPrefix(text, /*pin=*/false));
  return commit.prompt_tokens;
}

StatusOr<std::vector<std::vector<ScoredToken>>> RemoteBackend::ScorePrompts(
    const std::vector<std::string>& prompts, int32_t start) {
  std::vector<std::string> bodies;
  for (const std::string& p : prompts) {
    json body = ScoringBody(start);
    body["text"] = p;
    bodies.push_back(body.dump());
  }
  return ScoreAll(bodies);
}

StatusOr<std::vector<std::vector<ScoredToken>>> RemoteBackend::ScoreTokenSequences(
    const std::vector<std::vector<int32_t>>& sequences) {
  std::vector<std::string> bodies;
  for (const auto& ids : sequences) {
    json body = ScoringBody(0);
    body["input_ids"] = ids;
    bodies.push_back(body.dump());
  }
  return ScoreAll(bodies);
}

StatusOr<std::vector<std::vector<ScoredToken>>> RemoteBackend::ScoreAll(
    const std::vector<std::string>& bodies) {
  RADIXLM_ASSIGN_OR_RETURN(std::vector<json> replies, GenerateAll(bodies));
  std::vector<std::vector<ScoredToken>> out;
  for (const json& r : replies) {
    Count(r, &BackendCounters::score_calls);
    out.push_back(InputLogprobs(r));
  }
  return out;
}

}  // namespace radixlm::frontend
