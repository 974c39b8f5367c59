#include "server/openai_api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "chat/chat_renderer.h"
#include "server/bootstrap_fields.h"
#include "server/chat_prompt.h"
#include "server/generation_call.h"
#include "server/image_input.h"
#include "server/lora_api.h"
#include "server/openai_request.h"
#include "server/openai_response.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

std::string RandomHex() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string DecodeIds(const TokenTextCodec& codec, const std::vector<int32_t>& ids) {
  std::unique_ptr<TokenTextDecoder> decoder = codec.NewDecoder(/*skip_special_tokens=*/false);
  std::string text;
  for (int32_t id : ids) text += decoder->Append(id);
  return text + decoder->Flush();
}

// The chat prompt as ids: the template already writes BOS, so the tokenizer must not add
// another one (as Hugging Face's apply_chat_template(tokenize=True) does).
StatusOr<GenerateRequest> ChatPrompt(const ServerContext& ctx, const std::string& text) {
  GenerateRequest request;
  RADIXLM_ASSIGN_OR_RETURN(request.input_ids, ctx.engine->assets().codec().EncodeVerbatim(text));
  return request;
}

// A chat prompt with images: the rendered text (markers where the images go, tokenized by the
// engine around them) and each image's bytes.
StatusOr<GenerateRequest> ChatPromptWithImages(const ServerContext& ctx, const std::string& text,
                                               const std::vector<std::string>& urls) {
  RADIXLM_RETURN_IF_ERROR(CheckTakesImages(ctx.engine->image_counters().has_value()));
  GenerateRequest request;
  request.text = text;
  request.text_verbatim = true;
  const ImageInputLimits limits = ImageLimits(*ctx.config);
  for (size_t i = 0; i < urls.size(); ++i) {
    StatusOr<std::vector<uint8_t>> bytes = ReadImageReference(urls[i], limits);
    if (!bytes.ok()) {
      return Status(bytes.status().code(),
                    "image " + std::to_string(i) + ": " + bytes.status().message());
    }
    request.image_data.push_back(std::move(bytes).value());
  }
  return request;
}

HandlerResult Submit(const ServerContext& ctx, const json& body, OpenAiRequest& parsed,
                     std::vector<GenerateRequest> prompts, OpenAiResponseOptions options) {
  const std::string rid = parsed.rid.empty() ? RandomHex() : parsed.rid;
  options.id = (parsed.chat ? "chatcmpl-" : "cmpl-") + rid;
  options.model = parsed.model.empty() ? ctx.served_model_name : parsed.model;
  options.created = NowUnix();
  options.n = parsed.sampling.n;
  options.logprobs = parsed.logprobs;
  options.top_logprobs = parsed.top_logprobs;
  options.include_usage = parsed.include_usage;
  options.continuous_usage = parsed.continuous_usage;
  for (size_t i = 0; i < prompts.size(); ++i) {
    GenerateRequest& r = prompts[i];
    r.rid = prompts.size() == 1 ? rid : rid + "-" + std::to_string(i);
    r.sampling_params = parsed.sampling;
    r.return_logprob = parsed.logprobs;
    r.top_logprobs_num = parsed.logprobs ? parsed.top_logprobs : 0;
    r.stream = parsed.stream;
    r.session_params = parsed.session;
    r.priority = parsed.priority;
    r.lora_path = ResolveOpenAiLora(ctx, parsed.model, parsed.lora_path);
  }
  if (Status pd = ApplyBootstrapFields(body, *ctx.config, &prompts); !pd.ok()) {
    return HandlerResult::Error(ApiErrorFromStatus(pd));
  }
  auto call = std::make_shared<GenerationCall>(
      ctx.engine, ctx.metrics, ctx.live,
      MakeOpenAiFormatter(std::move(options), &ctx.engine->assets().codec()), parsed.stream);
  Status status = call->Submit(std::move(prompts));
  if (!status.ok()) return HandlerResult::Error(ApiErrorFromStatus(status));
  return HandlerResult::Generate(std::move(call));
}

HandlerResult HandleCompletions(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  StatusOr<OpenAiRequest> parsed = ParseCompletionRequest(*body, *ctx.config);
  if (!parsed.ok()) return HandlerResult::Error(ApiErrorFromStatus(parsed.status()));
  OpenAiResponseOptions options;
  if (parsed->echo) {
    for (const GenerateRequest& prompt : parsed->prompts) {
      options.echo_prefixes.push_back(
          prompt.text.has_value() ? *prompt.text
                                  : DecodeIds(ctx.engine->assets().codec(), *prompt.input_ids));
    }
  }
  std::vector<GenerateRequest> prompts = std::move(parsed->prompts);
  // echo with logprobs: every prompt token after the first is scored too.
  if (parsed->echo && parsed->logprobs) {
    for (GenerateRequest& prompt : prompts) prompt.logprob_start_len = 0;
  }
  return Submit(ctx, *body, *parsed, std::move(prompts), std::move(options));
}

// Whether `text` holds a control token of the vocabulary (a call marker that is one cannot be
// written under a grammar: control tokens add no output bytes).
bool HasControlToken(const TokenTextCodec& codec, std::string_view text) {
  StatusOr<std::vector<int32_t>> ids = codec.EncodeVerbatim(text);
  if (!ids.ok()) return true;
  return std::any_of(ids->begin(), ids->end(),
                     [&](int32_t id) { return codec.IsControlToken(id); });
}

HandlerResult FinishChat(const ServerContext& ctx, const json& body, OpenAiRequest& parsed_chat,
                         StatusOr<GenerateRequest> chat_prompt, chat::ToolCallFormat format);

HandlerResult HandleChat(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  StatusOr<OpenAiRequest> parsed = ParseChatRequest(*body, *ctx.config);
  if (!parsed.ok()) return HandlerResult::Error(ApiErrorFromStatus(parsed.status()));
  if (ctx.chat == nullptr) return HandlerResult::Error(ApiErrorFromStatus(ctx.chat_status));
  const ToolRequest& tools = parsed->tools;
  const chat::ToolCallFormat format = ToolFormat(ctx);
  StatusOr<std::string> prompt =
      RenderChatPrompt(ctx, parsed->raw_messages, tools, parsed->chat_template);
  if (!prompt.ok()) return HandlerResult::Error(ApiErrorFromStatus(prompt.status()));
  // The engine compiles grammars with these options (engine_core.cc).
  grammar::CompileOptions compile_options;
  compile_options.json.whitespace_pattern =
      ctx.engine->config().constrained_json_whitespace_pattern;
  if (tools.active() && tools.forced()) {
    StatusOr<std::string> regex =
        ForcedToolCallRegex(tools, format, compile_options, ctx.grammar_checks);
    if (!regex.ok()) return HandlerResult::Error(ApiErrorFromStatus(regex.status()));
    parsed->sampling.regex = std::move(*regex);
  }
  const SamplingParams& sampling = parsed->sampling;
  if (tools.active() && !tools.forced() && !sampling.regex && !sampling.json_schema &&
      !sampling.ebnf && !sampling.structural_tag &&
      !HasControlToken(ctx.engine->assets().codec(), AutoToolCallTrigger(format))) {
    parsed->sampling.structural_tag =
        AutoToolCallConstraint(tools, format, compile_options, ctx.grammar_checks);
  }
  if (parsed->image_urls.empty()) {
    return FinishChat(ctx, *body, *parsed, ChatPrompt(ctx, *prompt), format);
  }
  // Reading the images (an http fetch) and encoding them (Engine::Submit) may take seconds: off
  // the IO threads.
  auto state = std::make_shared<std::tuple<json, OpenAiRequest, std::string>>(
      std::move(*body), std::move(*parsed), std::move(*prompt));
  return HandlerResult::Deferred([ctx, state, format] {
    auto& [deferred_body, deferred_parsed, text] = *state;
    return FinishChat(ctx, deferred_body, deferred_parsed,
                      ChatPromptWithImages(ctx, text, deferred_parsed.image_urls), format);
  });
}

// The rest of a chat request once its prompt is built: the response options and the submit.
HandlerResult FinishChat(const ServerContext& ctx, const json& body, OpenAiRequest& parsed_chat,
                         StatusOr<GenerateRequest> chat_prompt, chat::ToolCallFormat format) {
  OpenAiRequest* parsed = &parsed_chat;
  const ToolRequest& tools = parsed->tools;
  if (!chat_prompt.ok()) return HandlerResult::Error(ApiErrorFromStatus(chat_prompt.status()));
  std::vector<GenerateRequest> prompts;
  prompts.push_back(std::move(*chat_prompt));
  OpenAiResponseOptions options;
  options.chat = true;
  if (tools.active()) options.tool_parser.emplace(format, tools.names());
  if (!ctx.config->reasoning_parser.empty() && parsed->separate_reasoning) {
    StatusOr<chat::ReasoningFormat> reasoning =
        chat::ReasoningFormatFromName(ctx.config->reasoning_parser);
    if (reasoning.ok()) {
      const json& kwargs = parsed->chat_template.kwargs;
      const auto thinking = kwargs.find("thinking");
      options.reasoning = chat::ForRequest(
          *reasoning, thinking != kwargs.end() && thinking->is_boolean() && thinking->get<bool>());
    }
    options.stream_reasoning = parsed->stream_reasoning;
  }
  return Submit(ctx, body, *parsed, std::move(prompts), std::move(options));
}

json ModelCard(const ServerContext& ctx) {
  return json{
      {"id", ctx.served_model_name},        {"object", "model"},
      {"created", ctx.created_unix_s},      {"owned_by", "radixlm"},
      {"root", ctx.model_info->model_path}, {"max_model_len", ctx.engine->context_length()}};
}

}  // namespace

void AddOpenAiRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  router->Add("POST", "/v1/completions",
              [ctx](const HttpRequest& request) { return HandleCompletions(ctx, request); });
  router->Add("POST", "/v1/chat/completions",
              [ctx](const HttpRequest& request) { return HandleChat(ctx, request); });
  router->Add("GET", "/v1/models", [ctx](const HttpRequest&) {
    json data = json::array({ModelCard(ctx)});
    for (json& card : LoraModelCards(ctx)) data.push_back(std::move(card));
    return HandlerResult::Respond(
        HttpResponse::Json(200, json{{"object", "list"}, {"data", std::move(data)}}));
  });
  router->Add("GET", "/v1/models/" + ctx.served_model_name, [ctx](const HttpRequest&) {
    return HandlerResult::Respond(HttpResponse::Json(200, ModelCard(ctx)));
  });
}

}  // namespace radixlm::server
