#include "server/openai_request.h"

#include <limits>

#include "engine/image_prompt.h"
#include "server/json_fields.h"
#include "server/lora_api.h"
#include "server/native_request.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

constexpr int32_t kMaxTopLogprobs = 20;

// OpenAI fields whose name and meaning equal SGLang's sampling_params (read by FromJson).
constexpr const char* kSharedSamplingFields[] = {"temperature",
                                                 "top_p",
                                                 "top_k",
                                                 "min_p",
                                                 "n",
                                                 "stop",
                                                 "stop_regex",
                                                 "presence_penalty",
                                                 "frequency_penalty",
                                                 "repetition_penalty",
                                                 "logit_bias",
                                                 "stop_token_ids",
                                                 "ignore_eos",
                                                 "skip_special_tokens",
                                                 "spaces_between_special_tokens",
                                                 "no_stop_trim",
                                                 "regex",
                                                 "json_schema",
                                                 "ebnf"};

bool IsUnset(const json& body, const char* field) { return FindField(body, field) == nullptr; }

Status ReadMaxTokens(const json& body, const char* field, const ServerConfig& limits,
                     SamplingParams* p) {
  const json* value = FindField(body, field);
  if (value == nullptr) return Status::Ok();
  int64_t v = 0;
  RADIXLM_RETURN_IF_ERROR(ParseInt(*value, field, 0, std::numeric_limits<int32_t>::max(), &v));
  if (limits.max_new_tokens_cap > 0 && v > limits.max_new_tokens_cap) {
    return InvalidArgument(std::string(field) + " must be at most " +
                           std::to_string(limits.max_new_tokens_cap) + " on this server, got " +
                           std::to_string(v));
  }
  p->max_new_tokens = static_cast<int32_t>(v);
  return Status::Ok();
}

Status ReadSampling(const json& body, bool chat, const ServerConfig& limits, SamplingParams* p) {
  json shared = json::object();
  for (const char* field : kSharedSamplingFields) {
    if (auto it = body.find(field); it != body.end()) shared[field] = *it;
  }
  // The model's defaults (generation_config.json) for what a chat request leaves unset.
  if (chat) {
    for (const auto& [field, value] : limits.chat_sampling_defaults) {
      if (FindField(shared, field.c_str()) != nullptr) continue;
      shared[field] = field == "top_k" ? json(static_cast<int64_t>(value)) : json(value);
    }
  }
  RADIXLM_ASSIGN_OR_RETURN(*p, SamplingParams::FromJson(shared));
  // OpenAI's defaults: 16 tokens for completions, no cap (the context) for chat.
  if (chat) {
    p->max_new_tokens.reset();
    RADIXLM_RETURN_IF_ERROR(ReadMaxTokens(body, "max_tokens", limits, p));
    RADIXLM_RETURN_IF_ERROR(ReadMaxTokens(body, "max_completion_tokens", limits, p));
  } else {
    p->max_new_tokens = 16;
    RADIXLM_RETURN_IF_ERROR(ReadMaxTokens(body, "max_tokens", limits, p));
  }
  RADIXLM_RETURN_IF_ERROR(
      ReadInt32(body, "min_tokens", 0, std::numeric_limits<int32_t>::max(), &p->min_new_tokens));
  if (const json* seed = FindField(body, "seed"); seed != nullptr) {
    int64_t v = 0;
    RADIXLM_RETURN_IF_ERROR(ParseInt(*seed, "seed", std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max(), &v));
    p->sampling_seed = v;
  }
  const bool given = FindField(body, "max_tokens") != nullptr ||
                     (chat && FindField(body, "max_completion_tokens") != nullptr);
  RADIXLM_RETURN_IF_ERROR(ApplyServerLimits(given, limits, p));
  if (const json* best_of = FindField(body, "best_of"); best_of != nullptr) {
    int64_t v = 0;
    RADIXLM_RETURN_IF_ERROR(ParseInt(*best_of, "best_of", 1, limits.max_batch_samples, &v));
    if (v != p->n) return Unimplemented("best_of other than n is not supported by radixlm");
  }
  return Status::Ok();
}

Status ReadCommon(const json& body, bool chat, const ServerConfig& limits, OpenAiRequest* r) {
  if (!body.is_object()) return WrongType("the request body", "a JSON object", body);
  r->chat = chat;
  RADIXLM_RETURN_IF_ERROR(ReadString(body, "model", &r->model));
  RADIXLM_RETURN_IF_ERROR(ReadString(body, "rid", &r->rid));
  std::string user;
  RADIXLM_RETURN_IF_ERROR(ReadString(body, "user", &user));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "stream", &r->stream));
  if (const json* options = FindField(body, "stream_options"); options != nullptr) {
    if (!options->is_object()) return WrongType("stream_options", "an object", *options);
    if (!r->stream) {
      return InvalidArgument("stream_options is only allowed when stream is true");
    }
    RADIXLM_RETURN_IF_ERROR(ReadBool(*options, "include_usage", &r->include_usage));
    RADIXLM_RETURN_IF_ERROR(ReadBool(*options, "continuous_usage_stats", &r->continuous_usage));
  }
  RADIXLM_RETURN_IF_ERROR(ReadSampling(body, chat, limits, &r->sampling));
  if (!chat && IsFieldSet(body, "tools")) {
    return InvalidArgument("tools is a /v1/chat/completions field");
  }
  // SGLang's extras that /generate also takes.
  RADIXLM_RETURN_IF_ERROR(ReadInt32(body, "priority", std::numeric_limits<int32_t>::min(),
                                    std::numeric_limits<int32_t>::max(), &r->priority));
  if (IsFieldSet(body, "lora_path")) {
    RADIXLM_ASSIGN_OR_RETURN(r->lora_path, ReadLoraPath(body["lora_path"]));
  }
  return RejectHiddenStates(body);
}

// Completions: logprobs is an integer (how many alternatives).
Status ReadCompletionLogprobs(const json& body, OpenAiRequest* r) {
  const json* value = FindField(body, "logprobs");
  if (value == nullptr) return Status::Ok();
  int64_t k = 0;
  RADIXLM_RETURN_IF_ERROR(ParseInt(*value, "logprobs", 0, kMaxTopLogprobs, &k));
  r->logprobs = true;
  r->top_logprobs = static_cast<int32_t>(k);
  return Status::Ok();
}

Status ReadIds(const json& list, const std::string& field, std::vector<int32_t>* out) {
  for (size_t i = 0; i < list.size(); ++i) {
    int64_t id = 0;
    RADIXLM_RETURN_IF_ERROR(ParseInt(list[i], field + "[" + std::to_string(i) + "]", 0,
                                     std::numeric_limits<int32_t>::max(), &id));
    out->push_back(static_cast<int32_t>(id));
  }
  return Status::Ok();
}

Status ReadPrompts(const json& body, std::vector<GenerateRequest>* prompts) {
  const json* prompt = FindField(body, "prompt");
  if (prompt == nullptr) return InvalidArgument("prompt is required");
  if (prompt->is_string()) {
    prompts->emplace_back().text = prompt->get<std::string>();
    return Status::Ok();
  }
  const char* expected = "a string, a list of strings, a list of token ids or a list of lists";
  if (!prompt->is_array()) return WrongType("prompt", expected, *prompt);
  if (prompt->empty()) return InvalidArgument("prompt is an empty list");
  const json& first = (*prompt)[0];
  if (first.is_number()) {
    std::vector<int32_t> ids;
    RADIXLM_RETURN_IF_ERROR(ReadIds(*prompt, "prompt", &ids));
    prompts->emplace_back().input_ids = std::move(ids);
    return Status::Ok();
  }
  for (size_t i = 0; i < prompt->size(); ++i) {
    const json& item = (*prompt)[i];
    const std::string name = "prompt[" + std::to_string(i) + "]";
    if (item.is_string() && first.is_string()) {
      prompts->emplace_back().text = item.get<std::string>();
    } else if (item.is_array() && first.is_array()) {
      if (item.empty()) return InvalidArgument(name + " is an empty list of token ids");
      std::vector<int32_t> ids;
      RADIXLM_RETURN_IF_ERROR(ReadIds(item, name, &ids));
      prompts->emplace_back().input_ids = std::move(ids);
    } else {
      return WrongType(name, first.is_string() ? "a string" : "a list of token ids", item);
    }
  }
  return Status::Ok();
}

// An image part's URL: {"type": "image_url", "image_url": {"url": ...}} (or the URL as a
// string, as some clients send it).
StatusOr<std::string> ReadImageUrl(const json& part, const std::string& part_name) {
  const json* image = FindField(part, "image_url");
  if (image != nullptr && image->is_string()) return image->get<std::string>();
  const json* url = image != nullptr && image->is_object() ? FindField(*image, "url") : nullptr;
  if (url == nullptr || !url->is_string()) {
    return InvalidArgument(part_name + ".image_url.url must be a string (a data: or http URL)");
  }
  return url->get<std::string>();
}

// An image part becomes the image marker (engine/image_prompt.h) in the message's text, and
// its URL joins image_urls.
Status ReadContent(const json& message, const std::string& name, ChatMessage* out,
                   std::vector<std::string>* image_urls) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) {
    if (out->role != "assistant") return InvalidArgument(name + ".content is required");
    out->content_is_null = true;
    return Status::Ok();
  }
  if (it->is_string()) {
    out->content = it->get<std::string>();
    return Status::Ok();
  }
  if (!it->is_array()) return WrongType(name + ".content", "a string or a list of parts", *it);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& part = (*it)[i];
    const std::string part_name = name + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) return WrongType(part_name, "an object", part);
    std::string type;
    RADIXLM_RETURN_IF_ERROR(ReadString(part, "type", &type));
    if (type == "image_url") {
      RADIXLM_ASSIGN_OR_RETURN(std::string url, ReadImageUrl(part, part_name));
      image_urls->push_back(std::move(url));
      out->content += kImageMarker;
      continue;
    }
    if (type != "text") {
      return Unimplemented(part_name + ".type \"" + type +
                           "\" is not supported (text and image_url parts are)");
    }
    const json* text = FindField(part, "text");
    if (text == nullptr || !text->is_string()) {
      return InvalidArgument(part_name + ".text must be a string");
    }
    out->content += text->get<std::string>();
  }
  return Status::Ok();
}

Status ReadMessages(const json& body, OpenAiRequest* r) {
  const json* messages = FindField(body, "messages");
  if (messages == nullptr) return InvalidArgument("messages is required");
  if (!messages->is_array()) return WrongType("messages", "a list of messages", *messages);
  if (messages->empty()) return InvalidArgument("messages must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return WrongType(name, "an object", m);
    ChatMessage message;
    const json* role = FindField(m, "role");
    if (role == nullptr) return InvalidArgument(name + ".role is required");
    if (!role->is_string()) return WrongType(name + ".role", "a string", *role);
    message.role = role->get<std::string>();
    if (message.role != "system" && message.role != "developer" && message.role != "user" &&
        message.role != "assistant" && message.role != "tool" && message.role != "function") {
      return InvalidArgument(name +
                             ".role must be one of system, developer, user, assistant, "
                             "tool; got \"" +
                             message.role + "\"");
    }
    RADIXLM_RETURN_IF_ERROR(ReadContent(m, name, &message, &r->image_urls));
    r->messages.push_back(std::move(message));
  }
  r->raw_messages = *messages;
  // Image parts reach the chat template as text parts holding the marker (as llama-server
  // sends them), so the template places them and the engine puts each image there.
  for (json& m : r->raw_messages) {
    auto content = m.find("content");
    if (content == m.end() || !content->is_array()) continue;
    for (json& part : *content) {
      if (part.value("type", "") == "image_url") {
        part = json{{"type", "text"}, {"text", std::string(kImageMarker)}};
      }
    }
  }
  return Status::Ok();
}

// response_format → the grammar fields.
Status ReadResponseFormat(const json& body, SamplingParams* p) {
  const json* format = FindField(body, "response_format");
  if (format == nullptr) return Status::Ok();
  if (!format->is_object()) return WrongType("response_format", "an object", *format);
  std::string type;
  RADIXLM_RETURN_IF_ERROR(ReadString(*format, "type", &type));
  if (type == "text") return Status::Ok();
  if (type == "json_object") {
    p->json_schema = R"({"type":"object"})";
    return Status::Ok();
  }
  if (type == "json_schema") {
    const json* spec = FindField(*format, "json_schema");
    if (spec == nullptr || !spec->is_object()) {
      return InvalidArgument("response_format.json_schema must be an object with a schema");
    }
    const json* schema = FindField(*spec, "schema");
    if (schema == nullptr) return InvalidArgument("response_format.json_schema.schema is required");
    if (!schema->is_object() && !schema->is_boolean()) {
      return WrongType("response_format.json_schema.schema", "a JSON schema object", *schema);
    }
    p->json_schema = schema->dump();
    return Status::Ok();
  }
  if (type == "structural_tag") {
    // SGLang's shape: the whole object is the tag (checked when the grammar is compiled).
    p->structural_tag = format->dump();
    return Status::Ok();
  }
  return InvalidArgument(
      "response_format.type must be text, json_object, json_schema or structural_tag, got \"" +
      type + "\"");
}

}  // namespace

StatusOr<OpenAiRequest> ParseCompletionRequest(const json& body, const ServerConfig& limits) {
  OpenAiRequest r;
  RADIXLM_RETURN_IF_ERROR(ReadCommon(body, /*chat=*/false, limits, &r));
  RADIXLM_RETURN_IF_ERROR(ReadPrompts(body, &r.prompts));
  RADIXLM_RETURN_IF_ERROR(ReadCompletionLogprobs(body, &r));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "echo", &r.echo));
  RADIXLM_RETURN_IF_ERROR(ReadResponseFormat(body, &r.sampling));
  RADIXLM_ASSIGN_OR_RETURN(r.session, ReadSessionParams(body, r.prompts.size() > 1));
  if (IsFieldSet(body, "suffix")) {
    return Unimplemented("suffix is not supported by radixlm");
  }
  const int64_t samples = static_cast<int64_t>(r.prompts.size()) * r.sampling.n;
  if (samples > limits.max_batch_samples) {
    return InvalidArgument("the request asks for " + std::to_string(samples) +
                           " completions (prompts x n); this server allows at most " +
                           std::to_string(limits.max_batch_samples));
  }
  return r;
}

StatusOr<OpenAiRequest> ParseChatRequest(const json& body, const ServerConfig& limits) {
  OpenAiRequest r;
  RADIXLM_RETURN_IF_ERROR(ReadCommon(body, /*chat=*/true, limits, &r));
  RADIXLM_RETURN_IF_ERROR(ReadMessages(body, &r));
  RADIXLM_ASSIGN_OR_RETURN(r.session, ReadSessionParams(body, /*batch=*/false));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "logprobs", &r.logprobs));
  RADIXLM_RETURN_IF_ERROR(ReadInt32(body, "top_logprobs", 0, kMaxTopLogprobs, &r.top_logprobs));
  if (!IsUnset(body, "top_logprobs") && r.top_logprobs > 0 && !r.logprobs) {
    return InvalidArgument("top_logprobs requires logprobs to be true");
  }
  RADIXLM_RETURN_IF_ERROR(ReadResponseFormat(body, &r.sampling));
  RADIXLM_ASSIGN_OR_RETURN(r.tools, ParseToolRequest(body));
  RADIXLM_ASSIGN_OR_RETURN(r.chat_template, ReadChatTemplateOptions(body));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "separate_reasoning", &r.separate_reasoning));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "stream_reasoning", &r.stream_reasoning));
  const SamplingParams& p = r.sampling;
  if (r.tools.active() && r.tools.forced() &&
      (p.regex.has_value() || p.json_schema.has_value() || p.ebnf.has_value() ||
       p.structural_tag.has_value())) {
    return InvalidArgument(
        "tool_choice required or a named function constrains the reply itself; it cannot be "
        "combined with response_format, regex, json_schema or ebnf");
  }
  return r;
}

Status CheckChatMessages(const json& body) {
  OpenAiRequest unused;
  return ReadMessages(body, &unused);
}

}  // namespace radixlm::server
