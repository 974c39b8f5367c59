#include "server/embeddings_api.h"

#include <nlohmann/json.hpp>

#include "server/embedding_request.h"
#include "server/generation_call.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

// The first abort among the results as an error response (an embedding is all or nothing).
std::optional<HttpResponse> AbortResponse(const ResultGrid& results) {
  for (const auto& samples : results) {
    for (const GenerateResult& r : samples) {
      if (!r.finish_reason.has_value() || !r.finish_reason->is_abort()) continue;
      const int status = r.finish_reason->status_code != 0 ? r.finish_reason->status_code : 503;
      return ErrorResponse(
          ApiError{status, "embedding aborted: " + r.finish_reason->matched_text, ""});
    }
  }
  return std::nullopt;
}

class OpenAiEmbeddingFormatter : public GenerationFormatter {
 public:
  OpenAiEmbeddingFormatter(const EmbeddingCall& call, std::string model)
      : base64_(call.base64), dimensions_(call.dimensions), model_(std::move(model)) {}

  HttpResponse OnComplete(const ResultGrid& results, double) override {
    if (std::optional<HttpResponse> abort = AbortResponse(results)) return *abort;
    json data = json::array();
    int64_t prompt_tokens = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const GenerateResult& r = results[i].front();
      std::vector<float> v = TruncateEmbedding(r.embedding, dimensions_);
      json item{{"object", "embedding"}, {"index", i}};
      item["embedding"] = base64_ ? json(EmbeddingToBase64(v)) : json(v);
      data.push_back(std::move(item));
      prompt_tokens += r.meta.prompt_tokens;
    }
    return HttpResponse::Json(
        200, json{{"object", "list"},
                  {"data", std::move(data)},
                  {"model", model_},
                  {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}});
  }

 private:
  const bool base64_;
  const std::optional<int64_t> dimensions_;
  const std::string model_;
};

class NativeEmbeddingFormatter : public GenerationFormatter {
 public:
  explicit NativeEmbeddingFormatter(bool batch) : batch_(batch) {}

  HttpResponse OnComplete(const ResultGrid& results, double elapsed_s) override {
    if (std::optional<HttpResponse> abort = AbortResponse(results)) return *abort;
    json list = json::array();
    for (const auto& samples : results) {
      const GenerateResult& r = samples.front();
      json meta{{"id", r.meta.id},
                {"prompt_tokens", r.meta.prompt_tokens},
                {"cached_tokens", r.meta.cached_tokens},
                {"finish_reason", {{"type", "length"}, {"length", 0}}},
                {"e2e_latency", elapsed_s}};
      list.push_back(json{{"embedding", r.embedding}, {"meta_info", std::move(meta)}});
    }
    return HttpResponse::Json(200, batch_ ? list : list[0]);
  }

 private:
  const bool batch_;
};

HandlerResult Fail(const Status& status) {
  return HandlerResult::Error(ApiErrorFromStatus(status));
}

HandlerResult RunEmbedding(const ServerContext& ctx, EmbeddingCall call,
                           std::unique_ptr<GenerationFormatter> formatter) {
  auto running = std::make_shared<GenerationCall>(ctx.engine, ctx.metrics, ctx.live,
                                                  std::move(formatter), /*streaming=*/false);
  Status status = running->Submit(std::move(call.requests));
  if (!status.ok()) return Fail(status);
  return HandlerResult::Generate(std::move(running));
}

HandlerResult HandleOpenAiEmbeddings(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  StatusOr<EmbeddingCall> call = ParseOpenAiEmbedding(*body);
  if (!call.ok()) return Fail(call.status());
  const int64_t width = ctx.model_info->hidden_size;
  if (call->dimensions.has_value() && width > 0 && *call->dimensions > width) {
    return HandlerResult::Error(ApiError{400,
                                         "'dimensions' " + std::to_string(*call->dimensions) +
                                             " is larger than the model's embedding width " +
                                             std::to_string(width),
                                         "dimensions"});
  }
  auto formatter = std::make_unique<OpenAiEmbeddingFormatter>(*call, ctx.served_model_name);
  return RunEmbedding(ctx, std::move(*call), std::move(formatter));
}

HandlerResult HandleEncode(const ServerContext& ctx, const HttpRequest& request) {
  ApiError error;
  std::optional<json> body = ParseJsonBody(request, &error);
  if (!body.has_value()) return HandlerResult::Error(error);
  StatusOr<EmbeddingCall> call = ParseNativeEmbedding(*body);
  if (!call.ok()) return Fail(call.status());
  auto formatter = std::make_unique<NativeEmbeddingFormatter>(call->batch);
  return RunEmbedding(ctx, std::move(*call), std::move(formatter));
}

HandlerResult NotAnEmbeddingServer(const std::string& route) {
  return HandlerResult::Error(ApiError{
      400,
      route + " needs an embedding model: this server runs a generation model (start it with "
              "--is-embedding to serve embeddings)",
      ""});
}

HandlerResult NotAGenerationServer(const std::string& route) {
  return HandlerResult::Error(
      ApiError{400,
               route + " is a generation request, and this server runs an embedding model "
                       "(--is-embedding): it serves /v1/embeddings and /encode",
               ""});
}

}  // namespace

void AddEmbeddingRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  const bool embedding = ctx.engine->config().is_embedding;
  auto route = [&](const std::string& method, const std::string& path, Handler handler) {
    if (!embedding) {
      handler = [path](const HttpRequest&) { return NotAnEmbeddingServer(path); };
    }
    router->Add(method, path, std::move(handler));
  };
  route("POST", "/v1/embeddings",
        [ctx](const HttpRequest& request) { return HandleOpenAiEmbeddings(ctx, request); });
  for (const char* method : {"POST", "PUT"}) {
    route(method, "/encode",
          [ctx](const HttpRequest& request) { return HandleEncode(ctx, request); });
  }
  if (!embedding) return;
  for (const char* path : {"/generate", "/v1/completions", "/v1/chat/completions"}) {
    const std::string name = path;
    router->Add("POST", path, [name](const HttpRequest&) { return NotAGenerationServer(name); });
  }
}

}  // namespace radixlm::server
