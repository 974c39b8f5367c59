// Server-sent events and the HTTP/1.1 wire format the session writes.
//
// Responses are serialized here rather than by Beast so that a streamed response is just a
// sequence of byte strings: SseResponseHead(), then HttpChunk(events...) as they are produced,
// then kHttpLastChunk. Requests are still parsed by Beast.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "server/http_message.h"

namespace radixlm::server {

// "data: <json>\n\n" (compact JSON; invalid UTF-8 replaced).
std::string SseEvent(const nlohmann::json& data);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// A whole response: status line, Content-Type, Content-Length, Connection, extra headers, body.
std::string SerializeResponse(const HttpResponse& response, bool keep_alive);

// The head of a 200 text/event-stream response with chunked transfer encoding.
std::string SseResponseHead(bool keep_alive);

// One chunk of a chunked body ("<hex size>\r\n<payload>\r\n"); "" for an empty payload (an
// empty chunk would end the body).
std::string HttpChunk(std::string_view payload);
inline constexpr std::string_view kHttpLastChunk = "0\r\n\r\n";

}  // namespace radixlm::server
