// ServerCall: a response the session drives by events rather than writing at once — a
// generation (GenerationCall) or a long-lived event stream (RadixTreeEventsCall). The session
// installs a waker, and on each wake-up drains what is ready: SSE bytes when streaming, or the
// whole response at the end.
//
// Threading: every method but the waker is called by one connection, one at a time (its
// strand). The waker may be called from any thread and must only post work.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "server/http_message.h"

namespace radixlm::server {

class ServerCall {
 public:
  virtual ~ServerCall() = default;

  // Installs `wake`, then calls it once (output may already wait).
  virtual void SetWaker(const std::function<void()>& wake) = 0;
  // Takes what is ready. Streaming: appends SSE bytes to *out, taking no more once *out holds
  // over max_out_bytes (the rest waits for a later Drain). Returns true once it has ended.
  virtual bool Drain(std::string* out, size_t max_out_bytes) = 0;
  // Non-streaming: the response, after Drain returned true.
  virtual HttpResponse TakeResponse() = 0;
  // The client went away: release what the call holds.
  virtual void Abort() = 0;

  virtual bool streaming() const = 0;
  virtual bool done() const = 0;
};

}  // namespace radixlm::server
