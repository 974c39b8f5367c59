#include "disagg/kv_sender.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <set>
#include <unordered_map>

#include "disagg/ucx_worker_loop.h"

namespace radixlm::disagg {

using Clock = std::chrono::steady_clock;

// Everything but counters_ (and the loop's own queue) lives on the loop thread.
class KvSender::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)) {}

  Status Init() {
    RADIXLM_ASSIGN_OR_RETURN(loop_, UcxWorkerLoop::Create());
    RADIXLM_RETURN_IF_ERROR(loop_->SetAmHandler(kAmWant, &Impl::OnWant, this));

    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(options_.port));
    if (inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr) != 1) {
      return InvalidArgument("KV sender: " + options_.host + " is not an IPv4 address");
    }
    ucp_listener_params_t params{};
    params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&addr);
    params.sockaddr.addrlen = sizeof(addr);
    params.conn_handler.cb = &Impl::OnConnection;
    params.conn_handler.arg = this;
    ucs_status_t status = ucp_listener_create(loop_->worker(), &params, &listener_);
    if (status != UCS_OK) {
      return UcxError("listening on " + options_.host + ":" + std::to_string(options_.port),
                      status);
    }
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    status = ucp_listener_query(listener_, &attr);
    if (status != UCS_OK) return UcxError("listener query", status);
    port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port);
    loop_->Start([this] { ExpireOld(); });
    return Status::Ok();
  }

  ~Impl() {
    if (loop_ == nullptr) return;
    loop_->Stop([this] {
      for (ucp_ep_h ep : endpoints_) ForceCloseEndpoint(ep);
      endpoints_.clear();
      if (listener_ != nullptr) ucp_listener_destroy(listener_);
      listener_ = nullptr;
    });
  }

  int port() const { return port_; }

  void Publish(uint64_t room, std::vector<uint8_t> record) {
    {
      MutexLock lock(&counters_mu_);
      ++counters_.published;
    }
    loop_->Post([this, room, record = std::move(record)]() mutable {
      records_[room] = {std::move(record), Clock::now()};
      TrySend(room);
    });
  }

  Counters counters() const {
    MutexLock lock(&counters_mu_);
    return counters_;
  }

 private:
  struct Pending {
    std::vector<uint8_t> record;
    Clock::time_point since;
  };
  struct Question {
    ucp_ep_h ep;
    Clock::time_point since;
  };
  // Owned by a send in flight: the header and data must live until it completes.
  struct SendState {
    Impl* self;
    uint64_t room;
    std::vector<uint8_t> record;
    Clock::time_point since;  // the send's start
  };

  static void OnConnection(ucp_conn_request_h request, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.conn_request = request;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Impl::OnEndpointError;
    params.err_handler.arg = self;
    ucp_ep_h ep = nullptr;
    if (ucp_ep_create(self->loop_->worker(), &params, &ep) == UCS_OK) {
      self->endpoints_.insert(ep);
    }
  }

  // A decode server went away: forget its questions and close its endpoint.
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t /*status*/) {
    auto* self = static_cast<Impl*>(arg);
    std::erase_if(self->questions_,
                  [ep](const auto& question) { return question.second.ep == ep; });
    if (self->endpoints_.erase(ep) > 0) ForceCloseEndpoint(ep);
  }

  static ucs_status_t OnWant(void* arg, const void* header, size_t header_length, void* /*data*/,
                             size_t /*length*/, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<Impl*>(arg);
    if (header_length != sizeof(uint64_t) ||
        (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) {
      return UCS_OK;  // not ours: ignored
    }
    uint64_t room = 0;
    std::memcpy(&room, header, sizeof(room));
    self->questions_[room] = {param->reply_ep, Clock::now()};
    self->TrySend(room);
    return UCS_OK;
  }

  void TrySend(uint64_t room) {
    auto record = records_.find(room);
    auto question = questions_.find(room);
    if (record == records_.end() || question == questions_.end()) return;
    auto* state = new SendState{this, room, std::move(record->second.record), Clock::now()};
    ucp_ep_h ep = question->second.ep;
    records_.erase(record);
    questions_.erase(question);

    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &Impl::OnSent;
    param.user_data = state;
    ucs_status_ptr_t request = ucp_am_send_nbx(ep, kAmRecord, &state->room, sizeof(state->room),
                                               state->record.data(), state->record.size(), &param);
    if (request == nullptr) {
      Finish(state, UCS_OK);
    } else if (UCS_PTR_IS_ERR(request)) {
      Finish(state, UCS_PTR_STATUS(request));
    }
  }

  static void OnSent(void* request, ucs_status_t status, void* user_data) {
    auto* state = static_cast<SendState*>(user_data);
    state->self->Finish(state, status);
    ucp_request_free(request);
  }

  void Finish(SendState* state, ucs_status_t status) {
    {
      MutexLock lock(&counters_mu_);
      if (status == UCS_OK) {
        ++counters_.sent;
        counters_.bytes_sent += static_cast<int64_t>(state->record.size());
        counters_.send_seconds +=
            std::chrono::duration<double>(Clock::now() - state->since).count();
      } else {
        ++counters_.send_errors;
      }
    }
    delete state;
  }

  void ExpireOld() {
    const auto cutoff = Clock::now() - options_.ttl;
    const auto expired = [&](const auto& entry) { return entry.second.since < cutoff; };
    const auto dropped =
        static_cast<int64_t>(std::erase_if(records_, expired) + std::erase_if(questions_, expired));
    MutexLock lock(&counters_mu_);
    counters_.expired += dropped;
    counters_.waiting_records = static_cast<int64_t>(records_.size());
    counters_.waiting_questions = static_cast<int64_t>(questions_.size());
  }

  const Options options_;
  std::unique_ptr<UcxWorkerLoop> loop_;
  ucp_listener_h listener_ = nullptr;
  int port_ = 0;
  std::set<ucp_ep_h> endpoints_;
  std::unordered_map<uint64_t, Pending> records_;
  std::unordered_map<uint64_t, Question> questions_;
  mutable Mutex counters_mu_;
  Counters counters_ GUARDED_BY(counters_mu_);
};

StatusOr<std::unique_ptr<KvSender>> KvSender::Listen(const Options& options) {
  auto impl = std::make_unique<Impl>(options);
  RADIXLM_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<KvSender>(new KvSender(std::move(impl)));
}

KvSender::KvSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvSender::~KvSender() = default;
int KvSender::port() const { return impl_->port(); }
void KvSender::Publish(uint64_t room, std::vector<uint8_t> record) {
  impl_->Publish(room, std::move(record));
}
KvSender::Counters KvSender::counters() const { return impl_->counters(); }

}  // namespace radixlm::disagg
