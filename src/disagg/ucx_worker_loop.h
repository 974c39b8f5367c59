// UcxWorkerLoop: one UCX context and worker (Active Messages, wake-up by event fd) driven by
// one thread of its own. Every UCX call of the KV sender and receiver runs on that thread:
// other threads hand it work with Post(), so the worker runs in UCX's single-thread mode and
// no UCX object is shared between threads.
//
// The thread loops: run the posted tasks, progress the worker until it has nothing left, call
// the tick callback (timeouts), then sleep on the worker's event fd for at most 10 ms
// (Post() wakes it through ucp_worker_signal). Only built with UCX (disagg/CMakeLists.txt).
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "util/mutex.h"
#include "util/status.h"

namespace radixlm::disagg {

class UcxWorkerLoop {
 public:
  // Creates the context and worker (UCX reads its UCX_* environment, e.g. UCX_TLS=tcp,shm).
  // The thread starts with Start(), once the owner has registered its handlers.
  static StatusOr<std::unique_ptr<UcxWorkerLoop>> Create();
  // Stop(), then destroys the worker and the context.
  ~UcxWorkerLoop();
  UcxWorkerLoop(const UcxWorkerLoop&) = delete;
  UcxWorkerLoop& operator=(const UcxWorkerLoop&) = delete;

  // `on_tick` runs on the loop thread after each round of progress.
  void Start(std::function<void()> on_tick);
  // Runs `on_stop` on the loop thread (close endpoints, listeners), progresses a last time,
  // and joins the thread. Idempotent.
  void Stop(std::function<void()> on_stop);

  // Runs `task` on the loop thread (soon; in posting order). Thread-safe. After Stop the task
  // is dropped and Post returns false.
  bool Post(std::function<void()> task);

  // Registers `handler` (called with `arg`) for the Active Messages with id `am_id`; before
  // Start(), or on the loop thread.
  Status SetAmHandler(unsigned am_id, ucp_am_recv_callback_t handler, void* arg);

  ucp_worker_h worker() const { return worker_; }
  bool on_loop_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  UcxWorkerLoop() = default;
  void Run(std::function<void()> on_tick);
  void RunPosted();

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  Mutex mu_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool accepting_ GUARDED_BY(mu_) = true;
};

// "UCX <what>: <ucs_status_string(status)>".
Status UcxError(const std::string& what, ucs_status_t status);

// Closes `ep` at once (UCP_EP_CLOSE_FLAG_FORCE: no flush, the peer sees an error); on the loop
// thread of the endpoint's worker.
void ForceCloseEndpoint(ucp_ep_h ep);

}  // namespace radixlm::disagg
