#include "server/tokenize_api.h"

#include <nlohmann/json.hpp>

#include "server/chat_prompt.h"
#include "server/openai_request.h"
#include "server/openai_tools.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

HandlerResult Fail(const std::string& message, const std::string& param) {
  return HandlerResult::Error(ApiError{400, message, param});
}

// The ids /generate computes for `text` (add_special: BOS as the model says), or the chat
// path's (the template writes BOS itself: add_special false).
StatusOr<std::vector<int32_t>> Encode(const ServerContext& ctx, const std::string& text,
                                      bool add_special) {
  const TokenTextCodec& codec = ctx.engine->assets().codec();
  return add_special ? codec.Encode(text) : codec.EncodeVerbatim(text);
}

HandlerResult HandleTokenize(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object()) return Fail("the body must be a JSON object", "");
  const bool has_prompt = body->contains("prompt") && !(*body)["prompt"].is_null();
  const bool has_messages = body->contains("messages") && !(*body)["messages"].is_null();
  if (has_prompt == has_messages) {
    return Fail("exactly one of 'prompt' or 'messages' must be given", "prompt");
  }
  for (const char* field : {"tools", "tool_choice", "parallel_tool_calls", "chat_template_kwargs",
                            "continue_final_message"}) {
    if (has_prompt && body->contains(field) && !(*body)[field].is_null()) {
      return Fail(std::string("'") + field + "' goes with 'messages', not 'prompt'", field);
    }
  }
  // Messages: the chat template writes BOS itself, so no special tokens by default (as the
  // chat completion path encodes them).
  bool add_special = !has_messages;
  if (body->contains("add_special_tokens")) {
    if (!(*body)["add_special_tokens"].is_boolean()) {
      return Fail("'add_special_tokens' must be a boolean", "add_special_tokens");
    }
    add_special = (*body)["add_special_tokens"].get<bool>();
  }
  std::vector<std::string> texts;
  const bool batch = has_prompt && (*body)["prompt"].is_array();
  if (has_messages) {
    // The prompt /v1/chat/completions would render for these messages and tools.
    Status messages_ok = CheckChatMessages(*body);
    if (!messages_ok.ok()) return HandlerResult::Error(ApiErrorFromStatus(messages_ok));
    StatusOr<ToolRequest> tools = ParseToolRequest(*body);
    if (!tools.ok()) return HandlerResult::Error(ApiErrorFromStatus(tools.status()));
    StatusOr<ChatTemplateOptions> options = ReadChatTemplateOptions(*body);
    if (!options.ok()) return HandlerResult::Error(ApiErrorFromStatus(options.status()));
    if (ctx.chat == nullptr) return HandlerResult::Error(ApiErrorFromStatus(ctx.chat_status));
    StatusOr<std::string> rendered = RenderChatPrompt(ctx, (*body)["messages"], *tools, *options);
    if (!rendered.ok()) return HandlerResult::Error(ApiErrorFromStatus(rendered.status()));
    texts.push_back(std::move(*rendered));
  } else if (batch) {
    for (const json& p : (*body)["prompt"]) {
      if (!p.is_string()) return Fail("'prompt' must be a string or a list of strings", "prompt");
      texts.push_back(p.get<std::string>());
    }
  } else if ((*body)["prompt"].is_string()) {
    texts.push_back((*body)["prompt"].get<std::string>());
  } else {
    return Fail("'prompt' must be a string or a list of strings", "prompt");
  }
  json tokens = json::array(), counts = json::array();
  for (const std::string& text : texts) {
    StatusOr<std::vector<int32_t>> ids = Encode(ctx, text, add_special);
    if (!ids.ok()) return HandlerResult::Error(ApiErrorFromStatus(ids.status()));
    counts.push_back(ids->size());
    tokens.push_back(std::move(*ids));
  }
  json out{{"max_model_len", ctx.engine->context_length()}};
  out["tokens"] = batch ? tokens : tokens[0];
  out["count"] = batch ? counts : counts[0];
  return HandlerResult::Respond(HttpResponse::Json(200, out));
}

HandlerResult HandleDetokenize(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  if (!body->is_object() || !body->contains("tokens") || !(*body)["tokens"].is_array()) {
    return Fail("'tokens' must be a list of token ids or a list of such lists", "tokens");
  }
  bool skip_special_tokens = true;
  if (body->contains("skip_special_tokens")) {
    if (!(*body)["skip_special_tokens"].is_boolean()) {
      return Fail("'skip_special_tokens' must be a boolean", "skip_special_tokens");
    }
    skip_special_tokens = (*body)["skip_special_tokens"].get<bool>();
  }
  const json& tokens = (*body)["tokens"];
  const bool batch = !tokens.empty() && tokens[0].is_array();
  const int32_t vocab = ctx.engine->vocab_size();
  json texts = json::array();
  for (const json& seq : batch ? tokens : json::array({tokens})) {
    if (!seq.is_array()) return Fail("'tokens' must not mix ids and lists", "tokens");
    std::unique_ptr<TokenTextDecoder> decoder =
        ctx.engine->assets().codec().NewDecoder(skip_special_tokens);
    std::string text;
    for (const json& id : seq) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab) {
        return Fail("token id " + id.dump() + " is not in the vocabulary [0, " +
                        std::to_string(vocab) + ")",
                    "tokens");
      }
      text += decoder->Append(id.get<int32_t>());
    }
    texts.push_back(text + decoder->Flush());
  }
  return HandlerResult::Respond(HttpResponse::Json(200, json{{"text", batch ? texts : texts[0]}}));
}

}  // namespace

void AddTokenizeRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  for (const char* path : {"/tokenize", "/v1/tokenize"}) {
    router->Add("POST", path,
                [ctx](const HttpRequest& request) { return HandleTokenize(ctx, request); });
  }
  for (const char* path : {"/detokenize", "/v1/detokenize"}) {
    router->Add("POST", path,
                [ctx](const HttpRequest& request) { return HandleDetokenize(ctx, request); });
  }
}

}  // namespace radixlm::server
