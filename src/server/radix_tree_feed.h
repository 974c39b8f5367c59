// RadixTreeFeed: the one poller behind every GET /radix_tree/events stream.
//
// The scheduler thread never pushes anything: the cache only bumps a version counter and keeps
// a small ring of recent evictions (cache/radix_cache.h). This feed's own thread, while at
// least one stream is open, asks the engine every `interval` for the tree with
// if_version_not = the version it last sent (an O(1) answer for the scheduler when nothing
// changed), serializes each snapshot once (JSON, decoded snippets) and queues the bytes on
// every stream. So a stream gets at most one event per interval however busy the tree is,
// and N viewers cost the scheduler what one does (per distinct max_nodes). Full snapshots are
// further spaced to at least 200 × the scheduler time the last one took (its build_seconds),
// so they never take more than 0.5 % of the scheduler thread; between them, polls ask for the
// counters only.
//
// Events (SSE): "event: tree" with the whole snapshot when the tree changed (and first, on
// subscribing); "event: stats" with the counters only when just they changed (KV pool use,
// hit tokens); a ": keep-alive" comment after 15 s of silence. A stream ends when the server
// stops or the engine shuts down.
//
// Threading: Subscribe and Stop from any thread; the calls are driven by their sessions.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "server/server_call.h"
#include "util/mutex.h"

namespace radixlm::server {

// One open /radix_tree/events stream.
class RadixTreeEventsCall : public ServerCall {
 public:
  explicit RadixTreeEventsCall(int32_t max_nodes) : max_nodes_(max_nodes) {}

  void SetWaker(const std::function<void()>& wake) override;
  // Tree events are small: max_out_bytes is not applied.
  bool Drain(std::string* out, size_t max_out_bytes) override;
  HttpResponse TakeResponse() override { return HttpResponse{}; }  // always streaming
  void Abort() override;
  bool streaming() const override { return true; }
  bool done() const override { return done_; }

  // The feed's side.
  int32_t max_nodes() const { return max_nodes_; }
  bool aborted();
  // Queues SSE bytes (and, with `end`, the end of the stream), then wakes the session.
  void Push(const std::string& bytes, bool end);
  bool fresh = true;  // no snapshot sent yet (feed thread only)

 private:
  const int32_t max_nodes_;
  bool done_ = false;  // the session's strand only
  Mutex mu_;
  std::string pending_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;
  bool aborted_ GUARDED_BY(mu_) = false;
  std::function<void()> waker_ GUARDED_BY(mu_);
};

class RadixTreeFeed {
 public:
  RadixTreeFeed(Engine* engine, std::chrono::milliseconds interval);
  ~RadixTreeFeed();  // Stop()
  RadixTreeFeed(const RadixTreeFeed&) = delete;
  RadixTreeFeed& operator=(const RadixTreeFeed&) = delete;

  std::shared_ptr<RadixTreeEventsCall> Subscribe(int32_t max_nodes);
  // Ends every stream and joins the feed thread. Idempotent.
  void Stop();

 private:
  struct Group {           // the streams of one max_nodes (feed thread only)
    uint64_t version = 0;  // of the last tree sent
    std::string counters;  // the last counters sent (JSON)
    std::chrono::steady_clock::time_point next_full;  // no full snapshot asked before this
  };
  void Run();
  // One poll: false when the engine is gone (every stream then ends).
  bool Poll(const std::vector<std::shared_ptr<RadixTreeEventsCall>>& calls);

  Engine* const engine_;
  const std::chrono::milliseconds interval_;
  Mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<RadixTreeEventsCall>> calls_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::map<int32_t, Group> groups_;
  std::chrono::steady_clock::time_point last_sent_;
  std::thread thread_;
};

}  // namespace radixlm::server
