#include "server/radix_tree_feed.h"

#include <algorithm>
#include <utility>

#include "server/radix_tree_json.h"
#include "server/sse.h"

namespace radixlm::server {
namespace {

constexpr auto kKeepAlive = std::chrono::seconds(15);
// A full snapshot may take at most 1 / kSnapshotSpacing of the scheduler's time.
constexpr double kSnapshotSpacing = 200;

std::string NamedEvent(const char* name, const nlohmann::json& data) {
  return std::string("event: ") + name + "\n" + SseEvent(data);
}

}  // namespace

// ---- RadixTreeEventsCall ---------------------------------------------------------------------

void RadixTreeEventsCall::SetWaker(const std::function<void()>& wake) {
  {
    MutexLock lock(&mu_);
    waker_ = wake;
  }
  wake();
}

bool RadixTreeEventsCall::Drain(std::string* out, size_t /*max_out_bytes*/) {
  MutexLock lock(&mu_);
  *out += pending_;
  pending_.clear();
  done_ = ended_ || aborted_;
  return done_;
}

void RadixTreeEventsCall::Abort() {
  MutexLock lock(&mu_);
  aborted_ = true;
}

bool RadixTreeEventsCall::aborted() {
  MutexLock lock(&mu_);
  return aborted_;
}

void RadixTreeEventsCall::Push(const std::string& bytes, bool end) {
  std::function<void()> wake;
  {
    MutexLock lock(&mu_);
    if (aborted_ || ended_) return;
    pending_ += bytes;
    ended_ = end;
    wake = waker_;
  }
  if (wake) wake();
}

// ---- RadixTreeFeed ---------------------------------------------------------------------------

RadixTreeFeed::RadixTreeFeed(Engine* engine, std::chrono::milliseconds interval)
    : engine_(engine), interval_(interval), thread_([this] { Run(); }) {}

RadixTreeFeed::~RadixTreeFeed() { Stop(); }

std::shared_ptr<RadixTreeEventsCall> RadixTreeFeed::Subscribe(int32_t max_nodes) {
  auto call = std::make_shared<RadixTreeEventsCall>(max_nodes);
  bool stopped = false;
  {
    MutexLock lock(&mu_);
    stopped = stopping_;
    if (!stopped) calls_.push_back(call);
  }
  if (stopped) {
    call->Push("", /*end=*/true);
  } else {
    cv_.notify_all();
  }
  return call;
}

void RadixTreeFeed::Stop() {
  std::vector<std::shared_ptr<RadixTreeEventsCall>> calls;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    calls.swap(calls_);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (const auto& call : calls) call->Push("", /*end=*/true);
}

void RadixTreeFeed::Run() {
  last_sent_ = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<std::shared_ptr<RadixTreeEventsCall>> calls;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && calls_.empty()) lock.Wait(cv_);
      if (stopping_) return;
      std::erase_if(calls_, [](const auto& call) { return call->aborted(); });
      calls = calls_;
    }
    if (!calls.empty() && !Poll(calls)) {
      std::vector<std::shared_ptr<RadixTreeEventsCall>> ended;
      {
        MutexLock lock(&mu_);
        ended.swap(calls_);
      }
      for (const auto& call : ended) call->Push("", /*end=*/true);
      continue;
    }
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + interval_;
    while (!stopping_ && lock.WaitUntil(cv_, deadline)) {
    }
    if (stopping_) return;
  }
}

bool RadixTreeFeed::Poll(const std::vector<std::shared_ptr<RadixTreeEventsCall>>& calls) {
  std::map<int32_t, std::vector<RadixTreeEventsCall*>> by_size;
  for (const auto& call : calls) by_size[call->max_nodes()].push_back(call.get());
  std::erase_if(groups_, [&by_size](const auto& g) { return !by_size.contains(g.first); });
  bool sent = false;
  for (auto& [max_nodes, members] : by_size) {
    Group& group = groups_[max_nodes];
    const bool any_fresh = std::any_of(members.begin(), members.end(),
                                       [](const RadixTreeEventsCall* c) { return c->fresh; });
    const auto asked = std::chrono::steady_clock::now();
    StatusOr<RadixTreeSnapshot> snap = engine_->GetRadixTree(RadixTreeQuery{
        .max_nodes = max_nodes,
        .if_version_not = any_fresh ? 0 : group.version,
        .counters_only = !any_fresh && asked < group.next_full,
    });
    if (!snap.ok()) return false;
    const nlohmann::json counters = RadixTreeCountersJson(*snap);
    std::string counters_text = counters.dump();
    if (!snap->unchanged && !snap->counters_only) {
      group.next_full =
          asked + std::max<std::chrono::steady_clock::duration>(
                      interval_,
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(kSnapshotSpacing * snap->build_seconds)));
      const std::string bytes = NamedEvent("tree", RadixTreeJson(*snap, engine_->assets().codec()));
      // A fresh stream with an unchanged tree still needs the first snapshot; the others
      // only need what changed.
      for (RadixTreeEventsCall* call : members) {
        if (call->fresh || snap->version != group.version) call->Push(bytes, false);
        call->fresh = false;
      }
      group.version = snap->version;
      sent = true;
    } else if (counters_text != group.counters) {
      const std::string bytes = NamedEvent("stats", counters);
      for (RadixTreeEventsCall* call : members) call->Push(bytes, false);
      sent = true;
    }
    group.counters = std::move(counters_text);
  }
  const auto now = std::chrono::steady_clock::now();
  if (sent) {
    last_sent_ = now;
  } else if (now - last_sent_ >= kKeepAlive) {
    for (const auto& call : calls) call->Push(": keep-alive\n\n", false);
    last_sent_ = now;
  }
  return true;
}

}  // namespace radixlm::server
