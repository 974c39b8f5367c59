#include "server/loads_api.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "server/load_report.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

HandlerResult Loads(const ServerContext& ctx, const HttpRequest& request) {
  const std::map<std::string, std::string> query = ParseQuery(request.query);
  auto param = [&query](const char* name) {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  };
  StatusOr<LoadSections> sections = ParseLoadSections(param("include"));
  if (!sections.ok())
    return HandlerResult::Error(BadRequest(sections.status().message(), "include"));
  const std::string format = param("format");
  if (!format.empty() && format != "json" && format != "prometheus") {
    return HandlerResult::Error(
        BadRequest("format must be json or prometheus, got '" + format + "'", "format"));
  }
  const std::string dp_rank = param("dp_rank");
  if (!dp_rank.empty() && dp_rank != "0") {
    return HandlerResult::Error(BadRequest(
        "dp_rank " + dp_rank + " does not exist: this server has one data-parallel rank (0)",
        "dp_rank"));
  }
  return HandlerResult::Blocking([ctx, include = *sections, prometheus = format == "prometheus"] {
    LoadInputs in;
    in.stats = ctx.engine->GetStats();
    in.max_running_requests = ctx.engine->settings().max_running_requests;
    in.speculative = !ctx.engine->settings().speculative_algorithm.empty();
    in.unix_time_s = UnixSeconds();
    in.rates = ctx.load_rates->Update(MonotonicSeconds(), in.stats.scheduler.decode_tokens,
                                      in.stats.scheduler.forward_seconds);
    const json loads = json::array({LoadSnapshotJson(in, include)});
    if (prometheus) {
      return HttpResponse::Text(200, LoadsPrometheusText(loads),
                                "text/plain; version=0.0.4; charset=utf-8");
    }
    return HttpResponse::Json(200, json{
                                       {"timestamp", IsoUtcTimestamp(in.unix_time_s)},
                                       {"version", kServerVersion},
                                       {"accelerator", nullptr},  // CPU kernels
                                       {"num_accelerators", 0},
                                       {"loads", loads},
                                   });
  });
}

}  // namespace

void AddLoadsRoutes(const ServerContext& context, Router* router) {
  const ServerContext ctx = context;
  router->Add("GET", "/v1/loads",
              [ctx](const HttpRequest& request) { return Loads(ctx, request); });
}

}  // namespace radixlm::server
