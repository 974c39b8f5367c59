#include "server/sse.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace radixlm::server {

std::string SseEvent(const nlohmann::json& data) {
  std::string out = "data: ";
  out += DumpJson(data);
  out += "\n\n";
  return out;
}

std::string SerializeResponse(const HttpResponse& response, bool keep_alive) {
  std::string out;
  out.reserve(192 + response.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(response.status);
  out += ' ';
  out += HttpStatusReason(response.status);
  out += "\r\nServer: radixlm\r\nContent-Type: ";
  out += response.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(response.body.size());
  out += keep_alive ? "\r\nConnection: keep-alive\r\n" : "\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "\r\n";
  out += response.body;
  return out;
}

std::string SseResponseHead(bool keep_alive) {
  std::string out =
      "HTTP/1.1 200 OK\r\nServer: radixlm\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
      "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return out;
}

std::string HttpChunk(std::string_view payload) {
  if (payload.empty()) return "";
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", payload.size());
  std::string out = size;
  out.append(payload);
  out += "\r\n";
  return out;
}

}  // namespace radixlm::server
