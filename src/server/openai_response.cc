#include "server/openai_response.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <utility>

#include "server/api_error.h"
#include "server/sse.h"
#include "tokenizer/unicode.h"
#include "util/utf8_chars.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

json FinishReasonJson(const std::optional<FinishReason>& reason) {
  if (!reason.has_value()) return nullptr;
  return reason->type();
}

json MatchedStop(const std::optional<FinishReason>& reason) {
  if (!reason.has_value()) return nullptr;
  if (reason->kind == FinishReason::Kind::kStopToken) return reason->matched_token;
  if (reason->kind == FinishReason::Kind::kStopString) return reason->matched_text;
  return nullptr;
}

json Bytes(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

float LogprobOf(const LogprobEntry& e) { return e.logprob.value_or(0.0f); }

// An aborted request: the status the engine gave the abort (400 for a refused session turn,
// 503 for a waiting timeout), else 503.
ApiError AbortError(const FinishReason& finish) {
  return ApiError{finish.status_code != 0 ? finish.status_code : 503,
                  "the request was aborted: " + finish.matched_text, ""};
}

std::string NewCallId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[32];
  std::snprintf(buf, sizeof(buf), "call_%012llx%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL),
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

// "stop" becomes "tool_calls" when the reply made calls.
json ChatFinishReason(const std::optional<FinishReason>& reason, bool made_calls) {
  json out = FinishReasonJson(reason);
  if (made_calls && out == "stop") return "tool_calls";
  return out;
}

// Per choice: the parsers a streamed chat reply runs through.
struct ChoiceParsers {
  std::optional<chat::ReasoningStreamParser> reasoning;
  std::optional<chat::ToolCallStreamParser> tools;
  std::vector<LogprobEntry> pending_logprobs;  // tokens whose text is still held back
  std::string held_reasoning;                  // stream_reasoning false: not sent yet
};

class OpenAiFormatter : public GenerationFormatter {
 public:
  OpenAiFormatter(OpenAiResponseOptions options, const TokenTextCodec* codec)
      : o_(std::move(options)), codec_(codec) {}

  void OnChunk(size_t prompt, const GenerateOutput& chunk, const GenerateResult&, double,
               std::string* out) override {
    if (chunk.finish_reason.has_value() && chunk.finish_reason->is_abort()) {
      if (!error_sent_) {
        *out += SseEvent(ErrorJson(AbortError(*chunk.finish_reason)));
        error_sent_ = true;
      }
      return;
    }
    const int32_t index = static_cast<int32_t>(prompt) * o_.n + chunk.index;
    if (o_.chat && (o_.tool_parser.has_value() || o_.reasoning.has_value())) {
      ParsedChatChunk(index, chunk, out);
      return;
    }
    json choice = {{"index", index}};
    if (o_.chat) {
      json delta = json::object();
      if (!Mark(&role_sent_, index)) delta["role"] = "assistant";
      if (!chunk.text.empty() || !chunk.finish_reason.has_value()) delta["content"] = chunk.text;
      choice["delta"] = std::move(delta);
      choice["logprobs"] = o_.logprobs ? ChatLogprobs(chunk.output_token_logprobs) : json(nullptr);
    } else {
      std::string text = chunk.text;
      const bool first = !o_.echo_prefixes.empty() && !Mark(&echo_sent_, index);
      if (first) text = o_.echo_prefixes[prompt] + text;  // the sample's first chunk
      choice["text"] = std::move(text);
      if (o_.logprobs) {
        // With echo the prompt's tokens come first, in the sample's first chunk.
        std::span<const LogprobEntry> prompt_entries;
        if (first && EchoLogprobs()) prompt_entries = chunk.input_token_logprobs;
        if (next_offset_.size() <= static_cast<size_t>(index)) next_offset_.resize(index + 1, 0);
        choice["logprobs"] =
            CompletionLogprobs(prompt_entries, chunk.output_token_logprobs, &next_offset_[index]);
      } else {
        choice["logprobs"] = nullptr;
      }
    }
    choice["finish_reason"] = FinishReasonJson(chunk.finish_reason);
    choice["matched_stop"] = MatchedStop(chunk.finish_reason);
    json event = Envelope(o_.chat ? "chat.completion.chunk" : "text_completion");
    event["choices"] = json::array({std::move(choice)});
    event["usage"] = ChunkUsage(chunk);
    *out += SseEvent(event);
  }

  void OnStreamEnd(const ResultGrid& results, double, std::string* out) override {
    if (o_.include_usage && !error_sent_) {
      json event = Envelope(o_.chat ? "chat.completion.chunk" : "text_completion");
      event["choices"] = json::array();
      event["usage"] = UsageJson(results);
      *out += SseEvent(event);
    }
    *out += kSseDone;
  }

  HttpResponse OnComplete(const ResultGrid& results, double) override {
    json choices = json::array();
    for (size_t p = 0; p < results.size(); ++p) {
      for (const GenerateResult& r : results[p]) {
        if (r.finish_reason.has_value() && r.finish_reason->is_abort()) {
          return ErrorResponse(AbortError(*r.finish_reason));
        }
        json choice = {{"index", static_cast<int32_t>(p) * o_.n + r.index}};
        if (o_.chat) {
          bool made_calls = false;
          choice["message"] = ChatMessageJson(r.text, &made_calls);
          choice["logprobs"] = o_.logprobs ? ChatLogprobs(r.output_token_logprobs) : json(nullptr);
          choice["finish_reason"] = ChatFinishReason(r.finish_reason, made_calls);
          choice["matched_stop"] = MatchedStop(r.finish_reason);
          choices.push_back(std::move(choice));
          continue;
        } else {
          const std::string prefix = o_.echo_prefixes.empty() ? "" : o_.echo_prefixes[p];
          choice["text"] = prefix + r.text;
          if (o_.logprobs) {
            std::span<const LogprobEntry> prompt_entries;
            if (EchoLogprobs()) prompt_entries = r.input_token_logprobs;
            size_t offset = 0;
            choice["logprobs"] =
                CompletionLogprobs(prompt_entries, r.output_token_logprobs, &offset);
          } else {
            choice["logprobs"] = nullptr;
          }
        }
        choice["finish_reason"] = FinishReasonJson(r.finish_reason);
        choice["matched_stop"] = MatchedStop(r.finish_reason);
        choices.push_back(std::move(choice));
      }
    }
    json body = Envelope(o_.chat ? "chat.completion" : "text_completion");
    body["choices"] = std::move(choices);
    body["usage"] = UsageJson(results);
    return HttpResponse::Json(200, body);
  }

 private:
  // The non-streamed message: reasoning split off, then tool calls parsed out of the rest.
  json ChatMessageJson(const std::string& text, bool* made_calls) const {
    json message = {{"role", "assistant"},
                    {"content", text},
                    {"reasoning_content", nullptr},
                    {"tool_calls", nullptr}};
    std::string content = text;
    if (o_.reasoning.has_value()) {
      chat::ReasoningSplit split = chat::SplitReasoning(*o_.reasoning, text);
      if (!split.reasoning.empty()) message["reasoning_content"] = split.reasoning;
      content = std::move(split.content);
    }
    if (o_.tool_parser.has_value()) {
      chat::ParsedToolOutput parsed = o_.tool_parser->Parse(content);
      content = std::move(parsed.content);
      if (!parsed.calls.empty()) {
        json calls = json::array();
        for (chat::ToolCall& call : parsed.calls) {
          calls.push_back({{"id", NewCallId()},
                           {"type", "function"},
                           {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        }
        message["tool_calls"] = std::move(calls);
        *made_calls = true;
      }
    }
    message["content"] = *made_calls && content.empty() ? json(nullptr) : json(content);
    return message;
  }

  ChoiceParsers& ParsersOf(int32_t index) {
    if (parsers_.size() <= static_cast<size_t>(index)) parsers_.resize(index + 1);
    std::unique_ptr<ChoiceParsers>& p = parsers_[index];
    if (p == nullptr) {
      p = std::make_unique<ChoiceParsers>();
      if (o_.reasoning.has_value()) p->reasoning.emplace(*o_.reasoning);
      if (o_.tool_parser.has_value()) p->tools.emplace(*o_.tool_parser);
    }
    return *p;
  }

  // A streamed chat chunk through the reasoning and tool-call parsers: zero or more events.
  void ParsedChatChunk(int32_t index, const GenerateOutput& chunk, std::string* out) {
    ChoiceParsers& p = ParsersOf(index);
    const bool finished = chunk.finish_reason.has_value();
    std::string reasoning, content = chunk.text;
    if (p.reasoning.has_value()) {
      chat::ReasoningSplit split = p.reasoning->Feed(chunk.text);
      if (finished) {
        chat::ReasoningSplit rest = p.reasoning->Finish();
        split.reasoning += rest.reasoning;
        split.content += rest.content;
      }
      reasoning = std::move(split.reasoning);
      content = std::move(split.content);
      if (!o_.stream_reasoning) {
        // SGLang's stream_reasoning false: the thinking goes out in one delta once it ends.
        p.held_reasoning += reasoning;
        reasoning.clear();
        if (!content.empty() || finished) reasoning = std::exchange(p.held_reasoning, {});
      }
    }
    chat::ToolStreamDelta tools;
    if (p.tools.has_value()) {
      tools = p.tools->Feed(content);
      if (finished) {
        chat::ToolStreamDelta rest = p.tools->Finish();
        tools.content += rest.content;
        for (chat::ToolCallDelta& d : rest.calls) tools.calls.push_back(std::move(d));
      }
      content = std::move(tools.content);
    }
    std::vector<json> deltas;
    json first = json::object();
    if (!content.empty()) first["content"] = content;
    if (!reasoning.empty()) first["reasoning_content"] = reasoning;
    if (!first.empty()) deltas.push_back(std::move(first));
    for (const chat::ToolCallDelta& d : tools.calls) {
      if (d.name.has_value()) {
        deltas.push_back({{"tool_calls",
                           json::array({{{"index", d.index},
                                         {"id", NewCallId()},
                                         {"type", "function"},
                                         {"function", {{"name", *d.name}, {"arguments", ""}}}}})}});
      }
      if (!d.arguments.empty()) {
        deltas.push_back(
            {{"tool_calls",
              json::array({{{"index", d.index}, {"function", {{"arguments", d.arguments}}}}})}});
      }
    }
    for (const LogprobEntry& e : chunk.output_token_logprobs) p.pending_logprobs.push_back(e);
    const bool role_pending = static_cast<size_t>(index) >= role_sent_.size() || !role_sent_[index];
    if (deltas.empty() && (finished || role_pending)) {
      deltas.push_back(json::object());
    }
    if (deltas.empty()) return;
    if (!Mark(&role_sent_, index)) deltas.front()["role"] = "assistant";
    const bool made_calls = p.tools.has_value() && p.tools->calls_started() > 0;
    for (size_t k = 0; k < deltas.size(); ++k) {
      const bool last = k + 1 == deltas.size();
      json choice = {{"index", index}, {"delta", std::move(deltas[k])}};
      choice["logprobs"] = last && o_.logprobs ? ChatLogprobs(p.pending_logprobs) : json(nullptr);
      choice["finish_reason"] =
          last ? ChatFinishReason(chunk.finish_reason, made_calls) : json(nullptr);
      choice["matched_stop"] = last ? MatchedStop(chunk.finish_reason) : json(nullptr);
      json event = Envelope("chat.completion.chunk");
      event["choices"] = json::array({std::move(choice)});
      event["usage"] = last ? ChunkUsage(chunk) : json(nullptr);
      *out += SseEvent(event);
    }
    p.pending_logprobs.clear();
  }

  // stream_options.continuous_usage_stats (vLLM's and SGLang's): every event carries its
  // choice's usage so far; otherwise null until the final usage event.
  json ChunkUsage(const GenerateOutput& chunk) const {
    if (!o_.continuous_usage) return nullptr;
    return json{{"prompt_tokens", chunk.meta.prompt_tokens},
                {"completion_tokens", chunk.meta.completion_tokens},
                {"total_tokens", chunk.meta.prompt_tokens + chunk.meta.completion_tokens}};
  }

  // Sets flags[index]; returns its previous value.
  static bool Mark(std::vector<bool>* flags, int32_t index) {
    if (flags->size() <= static_cast<size_t>(index)) flags->resize(index + 1, false);
    const bool was = (*flags)[index];
    (*flags)[index] = true;
    return was;
  }

  json Envelope(const char* object) const {
    return json{{"id", o_.id}, {"object", object}, {"created", o_.created}, {"model", o_.model}};
  }

  std::string Text(int32_t token) const {
    return codec_ != nullptr ? codec_->TokenText(token) : "";
  }

  json ChatLogprobs(const std::vector<LogprobEntry>& entries) const {
    json content = json::array();
    for (const LogprobEntry& e : entries) {
      const std::string text = Text(e.token);
      json top = json::array();
      for (size_t k = 0; k < e.top.size() && static_cast<int32_t>(k) < o_.top_logprobs; ++k) {
        const std::string alt = Text(e.top[k].token);
        top.push_back({{"token", alt}, {"logprob", e.top[k].logprob}, {"bytes", Bytes(alt)}});
      }
      content.push_back({{"token", text},
                         {"logprob", LogprobOf(e)},
                         {"bytes", Bytes(text)},
                         {"top_logprobs", std::move(top)}});
    }
    return json{{"content", std::move(content)}};
  }

  bool EchoLogprobs() const { return o_.logprobs && !o_.echo_prefixes.empty(); }

  // A token's text as a completion's logprobs show it: bytes of a partial character become
  // U+FFFD, as they would when the JSON is written.
  std::string ShownText(int32_t token) const {
    std::string shown;
    tokenizer::SanitizeUtf8(Text(token), &shown);
    return shown;
  }

  // OpenAI's legacy shape over the prompt's entries (echo; else empty), then the output's.
  // text_offset counts the characters of the tokens shown before (as vLLM does, from the
  // echoed prompt's first token or the completion's), continuing from *offset, which it
  // advances; an entry without a logprob (a prompt's first token, under echo) has null for it
  // and for its alternatives.
  json CompletionLogprobs(std::span<const LogprobEntry> prompt,
                          std::span<const LogprobEntry> output, size_t* offset) const {
    json tokens = json::array(), token_logprobs = json::array(), tops = json::array(),
         offsets = json::array();
    for (size_t i = 0; i < prompt.size() + output.size(); ++i) {
      const LogprobEntry& e = i < prompt.size() ? prompt[i] : output[i - prompt.size()];
      const std::string text = ShownText(e.token);
      tokens.push_back(text);
      token_logprobs.push_back(e.logprob.has_value() ? json(*e.logprob) : json(nullptr));
      offsets.push_back(*offset);
      *offset += static_cast<size_t>(std::count_if(
          text.begin(), text.end(), [](char c) { return !IsUtf8ContinuationByte(c); }));
      if (o_.top_logprobs > 0 && e.logprob.has_value()) {
        json top = json::object();
        for (size_t k = 0; k < e.top.size() && static_cast<int32_t>(k) < o_.top_logprobs; ++k) {
          // Best first: an alternative shown as the same text as a likelier one is left out.
          top.emplace(ShownText(e.top[k].token), e.top[k].logprob);
        }
        tops.push_back(std::move(top));
      } else {
        tops.push_back(nullptr);
      }
    }
    return json{{"tokens", std::move(tokens)},
                {"token_logprobs", std::move(token_logprobs)},
                {"top_logprobs", std::move(tops)},
                {"text_offset", std::move(offsets)}};
  }

  const OpenAiResponseOptions o_;
  const TokenTextCodec* const codec_;
  std::vector<bool> role_sent_;  // per choice: the first chunk went out
  std::vector<bool> echo_sent_;
  std::vector<size_t> next_offset_;  // per choice, streamed completion logprobs: text_offset
  std::vector<std::unique_ptr<ChoiceParsers>> parsers_;  // per choice, streamed chat
  bool error_sent_ = false;
};

}  // namespace

json UsageJson(const ResultGrid& results) {
  int64_t prompt = 0, completion = 0, cached = 0;
  for (const auto& samples : results) {
    if (samples.empty()) continue;
    prompt += samples[0].meta.prompt_tokens;
    cached += samples[0].meta.cached_tokens;
    for (const GenerateResult& r : samples) completion += r.meta.completion_tokens;
  }
  return json{{"prompt_tokens", prompt},
              {"completion_tokens", completion},
              {"total_tokens", prompt + completion},
              {"prompt_tokens_details", {{"cached_tokens", cached}}}};
}

std::unique_ptr<GenerationFormatter> MakeOpenAiFormatter(OpenAiResponseOptions options,
                                                         const TokenTextCodec* codec) {
  return std::make_unique<OpenAiFormatter>(std::move(options), codec);
}

}  // namespace radixlm::server
