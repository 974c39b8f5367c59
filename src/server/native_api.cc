#include "server/native_api.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/result_json.h"
#include "server/bootstrap_fields.h"
#include "server/generation_call.h"
#include "server/image_input.h"
#include "server/native_request.h"
#include "server/sse.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

class NativeFormatter : public GenerationFormatter {
 public:
  NativeFormatter(const NativeGenerateCall& call, bool incremental, const TokenTextCodec* codec)
      : returns_list_(call.ReturnsList()),
        incremental_(incremental),
        codec_(call.return_text_in_logprobs ? codec : nullptr) {
    int32_t offset = 0;
    for (const GenerateRequest& request : call.requests) {
      return_logprob_.push_back(request.return_logprob);
      token_ids_logprob_.push_back(!request.token_ids_logprob.empty());
      offsets_.push_back(offset);
      offset += request.sampling_params.n;
    }
  }

  void OnChunk(size_t prompt, const GenerateOutput& chunk, const GenerateResult& result,
               double elapsed_s, std::string* out) override {
    json item;
    if (incremental_) {
      GenerateResult delta;
      delta.Append(GenerateOutput(chunk));
      item = ResultToJson(delta, return_logprob_[prompt], codec_, token_ids_logprob_[prompt]);
    } else {
      item = ResultToJson(result, return_logprob_[prompt], codec_, token_ids_logprob_[prompt]);
    }
    if (chunk.finish_reason.has_value()) item["meta_info"]["e2e_latency"] = elapsed_s;
    if (returns_list_) item["index"] = offsets_[prompt] + chunk.index;
    *out += SseEvent(item);
  }

  void OnStreamEnd(const ResultGrid&, double, std::string* out) override { *out += kSseDone; }

  HttpResponse OnComplete(const ResultGrid& results, double elapsed_s) override {
    json list = json::array();
    for (size_t p = 0; p < results.size(); ++p) {
      for (const GenerateResult& result : results[p]) {
        // An abort the engine gave an HTTP status (a waiting timeout: 503) is answered with it,
        // as SGLang does (400 in the usual error shape, others in SGLang's flat one); other
        // aborts are a 200 with finish_reason abort.
        const std::optional<FinishReason>& finish = result.finish_reason;
        if (finish.has_value() && finish->is_abort() && finish->status_code != 0) {
          const ApiError error{finish->status_code, finish->matched_text, ""};
          return finish->status_code == 400 ? ErrorResponse(error)
                                            : SglangAbortErrorResponse(error);
        }
        json item = ResultToJson(result, return_logprob_[p], codec_, token_ids_logprob_[p]);
        item["meta_info"]["e2e_latency"] = elapsed_s;
        list.push_back(std::move(item));
      }
    }
    if (!returns_list_ && list.size() == 1) return HttpResponse::Json(200, list[0]);
    return HttpResponse::Json(200, list);
  }

 private:
  const bool returns_list_;
  const bool incremental_;
  const TokenTextCodec* const codec_;
  std::vector<bool> return_logprob_;
  std::vector<bool> token_ids_logprob_;
  std::vector<int32_t> offsets_;
};

HandlerResult SubmitGenerate(const ServerContext& ctx, NativeGenerateCall& call_request);

HandlerResult HandleGenerate(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  StatusOr<NativeGenerateCall> parsed = ParseNativeGenerate(*body, *ctx.config);
  if (!parsed.ok()) return HandlerResult::Error(ApiErrorFromStatus(parsed.status()));
  if (Status pd = ApplyBootstrapFields(*body, *ctx.config, &parsed->requests); !pd.ok()) {
    return HandlerResult::Error(ApiErrorFromStatus(pd));
  }
  const bool has_images =
      std::any_of(parsed->image_refs.begin(), parsed->image_refs.end(),
                  [](const std::vector<std::string>& refs) { return !refs.empty(); });
  if (!has_images) return SubmitGenerate(ctx, *parsed);
  // Reading the images (an http fetch) and encoding them (Engine::Submit) may take seconds: off
  // the IO threads.
  auto state = std::make_shared<NativeGenerateCall>(std::move(*parsed));
  return HandlerResult::Deferred([ctx, state] { return SubmitGenerate(ctx, *state); });
}

// A parsed /generate: its images read, then submitted.
HandlerResult SubmitGenerate(const ServerContext& ctx, NativeGenerateCall& call_request) {
  NativeGenerateCall* parsed = &call_request;
  const ImageInputLimits limits = ImageLimits(*ctx.config);
  for (size_t p = 0; p < parsed->requests.size(); ++p) {
    if (!parsed->image_refs[p].empty()) {
      Status takes = CheckTakesImages(ctx.engine->image_counters().has_value());
      if (!takes.ok()) return HandlerResult::Error(ApiErrorFromStatus(takes));
    }
    for (size_t i = 0; i < parsed->image_refs[p].size(); ++i) {
      StatusOr<std::vector<uint8_t>> bytes = ReadImageReference(parsed->image_refs[p][i], limits);
      if (!bytes.ok()) {
        return HandlerResult::Error(
            ApiErrorFromStatus(Status(bytes.status().code(), "image_data " + std::to_string(i) +
                                                                 ": " + bytes.status().message())));
      }
      parsed->requests[p].image_data.push_back(std::move(bytes).value());
    }
  }
  auto formatter = std::make_unique<NativeFormatter>(
      *parsed, ctx.config->incremental_streaming_output, &ctx.engine->assets().codec());
  auto call = std::make_shared<GenerationCall>(ctx.engine, ctx.metrics, ctx.live,
                                               std::move(formatter), parsed->stream);
  Status status = call->Submit(std::move(parsed->requests));
  if (!status.ok()) return HandlerResult::Error(ApiErrorFromStatus(status));
  return HandlerResult::Generate(std::move(call));
}

}  // namespace

void AddNativeGenerateRoutes(const ServerContext& context, Router* router) {
  router->Add("POST", "/generate",
              [context](const HttpRequest& request) { return HandleGenerate(context, request); });
}

}  // namespace radixlm::server
