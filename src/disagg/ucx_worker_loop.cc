#include "disagg/ucx_worker_loop.h"

#include <poll.h>

namespace radixlm::disagg {

Status UcxError(const std::string& what, ucs_status_t status) {
  return IoError("UCX " + what + ": " + ucs_status_string(status));
}

void ForceCloseEndpoint(ucp_ep_h ep) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
  if (request != nullptr && !UCS_PTR_IS_ERR(request)) ucp_request_free(request);
}

Status UcxWorkerLoop::SetAmHandler(unsigned am_id, ucp_am_recv_callback_t handler, void* arg) {
  ucp_am_handler_param_t param{};
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                     UCP_AM_HANDLER_PARAM_FIELD_ARG;
  param.id = am_id;
  param.cb = handler;
  param.arg = arg;
  ucs_status_t status = ucp_worker_set_am_recv_handler(worker_, &param);
  if (status != UCS_OK) return UcxError("AM handler registration", status);
  return Status::Ok();
}

StatusOr<std::unique_ptr<UcxWorkerLoop>> UcxWorkerLoop::Create() {
  std::unique_ptr<UcxWorkerLoop> loop(new UcxWorkerLoop());
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return UcxError("reading the configuration", status);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  status = ucp_init(&params, config, &loop->context_);
  ucp_config_release(config);
  if (status != UCS_OK) return UcxError("init", status);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  status = ucp_worker_create(loop->context_, &worker_params, &loop->worker_);
  if (status != UCS_OK) return UcxError("worker creation", status);
  status = ucp_worker_get_efd(loop->worker_, &loop->event_fd_);
  if (status != UCS_OK) return UcxError("worker event fd", status);
  return loop;
}

UcxWorkerLoop::~UcxWorkerLoop() {
  Stop(nullptr);
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

void UcxWorkerLoop::Start(std::function<void()> on_tick) {
  thread_ = std::thread([this, tick = std::move(on_tick)]() mutable { Run(std::move(tick)); });
}

void UcxWorkerLoop::Stop(std::function<void()> on_stop) {
  if (!thread_.joinable()) return;
  if (on_stop) Post(std::move(on_stop));
  {
    MutexLock lock(&mu_);
    accepting_ = false;
  }
  stop_.store(true);
  ucp_worker_signal(worker_);
  thread_.join();
}

bool UcxWorkerLoop::Post(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    if (!accepting_) return false;
    tasks_.push_back(std::move(task));
  }
  ucp_worker_signal(worker_);
  return true;
}

void UcxWorkerLoop::RunPosted() {
  std::deque<std::function<void()>> tasks;
  {
    MutexLock lock(&mu_);
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) task();
}

void UcxWorkerLoop::Run(std::function<void()> on_tick) {
  while (!stop_.load()) {
    RunPosted();
    while (ucp_worker_progress(worker_) != 0) {
    }
    if (on_tick) on_tick();
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;  // events arrived meanwhile
    pollfd fd{event_fd_, POLLIN, 0};
    poll(&fd, 1, 10);
  }
  RunPosted();  // the stop task (closing endpoints) posted by Stop
  // Let the closes and sends in flight finish, for a bounded time.
  for (int i = 0; i < 1000 && ucp_worker_progress(worker_) != 0; ++i) {
  }
}

}  // namespace radixlm::disagg
