#include "disagg/kv_receiver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <unordered_map>

#include "disagg/kv_sender.h"
#include "disagg/ucx_worker_loop.h"
#include "util/mutex.h"

namespace radixlm::disagg {

using Clock = std::chrono::steady_clock;

namespace {

// One fetch in flight; lives on the loop thread (and in a rendezvous receive's user data).
struct FetchState {
  uint64_t room = 0;
  std::string peer;  // "host:port", for messages
  Clock::time_point deadline;
  std::vector<uint8_t> buffer;     // a rendezvous receive lands here
  Clock::time_point record_since;  // when the record's first message arrived
  KvReceiver::FetchCallback done;
  bool completed = false;

  // First completion wins; later ones are ignored.
  void Complete(StatusOr<std::vector<uint8_t>> outcome) {
    if (completed) return;
    completed = true;
    done(std::move(outcome));
  }
};

StatusOr<sockaddr_in> Resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return IoError("KV transfer: cannot resolve the prefill host " + host + ": " +
                   gai_strerror(rc));
  }
  sockaddr_in addr{};
  std::memcpy(&addr, found->ai_addr, sizeof(addr));
  freeaddrinfo(found);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

// Endpoints and the room table live on the loop thread; counters_ is read from any thread.
class KvReceiver::Impl {
  // A rendezvous receive in flight keeps its fetch alive.
  struct RecordReceive {
    Impl* self;
    std::shared_ptr<FetchState> state;
  };

 public:
  explicit Impl(const Options& options) : options_(options) {}

  Status Init() {
    RADIXLM_ASSIGN_OR_RETURN(loop_, UcxWorkerLoop::Create());
    RADIXLM_RETURN_IF_ERROR(loop_->SetAmHandler(kAmRecord, &Impl::OnRecord, this));
    loop_->Start([this] { FailExpired(); });
    return Status::Ok();
  }

  ~Impl() {
    if (loop_ == nullptr) return;
    loop_->Stop([this] {
      stopping_ = true;
      for (auto& [room, state] : fetches_) {
        state->Complete(Aborted("KV transfer: the decode server is shutting down"));
      }
      fetches_.clear();
      for (auto& [peer, ep] : endpoints_) ForceCloseEndpoint(ep);
      endpoints_.clear();
    });
  }

  void FetchAsync(const std::string& host, int port, uint64_t room,
                  std::chrono::milliseconds timeout, FetchCallback done) {
    StatusOr<sockaddr_in> addr = Resolve(host, port);
    if (!addr.ok()) {
      done(addr.status());
      return;
    }
    auto state = std::make_shared<FetchState>();
    state->room = room;
    state->peer = host + ":" + std::to_string(port);
    state->deadline = Clock::now() + timeout;
    state->done = std::move(done);
    const sockaddr_in resolved = *addr;
    if (!loop_->Post([this, state, resolved] { Start(state, resolved); })) {
      state->Complete(Aborted("KV transfer: the decode server is shutting down"));
    }
  }

  Counters counters() const {
    MutexLock lock(&counters_mu_);
    return counters_;
  }

 private:
  void Start(const std::shared_ptr<FetchState>& state, const sockaddr_in& addr) {
    if (stopping_) {
      state->Complete(Aborted("KV transfer: the decode server is shutting down"));
      return;
    }
    if (fetches_.count(state->room) > 0) {
      state->Complete(InvalidArgument("KV transfer: bootstrap_room " + std::to_string(state->room) +
                                      " is already waiting"));
      return;
    }
    StatusOr<ucp_ep_h> ep = Connect(state->peer, addr);
    if (!ep.ok()) {
      state->Complete(ep.status());
      return;
    }
    fetches_[state->room] = state;
    fetch_peer_[state->room] = state->peer;
    // The header must live until the send completes, which may be after this fetch ended.
    auto* header = new uint64_t(state->room);
    ucp_request_param_t param{};
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.flags = UCP_AM_SEND_FLAG_REPLY;
    param.cb.send = [](void* request, ucs_status_t, void* user_data) {
      delete static_cast<uint64_t*>(user_data);
      ucp_request_free(request);
    };
    param.user_data = header;
    ucs_status_ptr_t request =
        ucp_am_send_nbx(*ep, kAmWant, header, sizeof(*header), nullptr, 0, &param);
    if (request == nullptr) {
      delete header;
    } else if (UCS_PTR_IS_ERR(request)) {
      delete header;
      Fail(state->room,
           UcxError("asking " + state->peer + " for bootstrap_room " + std::to_string(state->room),
                    UCS_PTR_STATUS(request)));
    }
  }

  StatusOr<ucp_ep_h> Connect(const std::string& peer, const sockaddr_in& addr) {
    auto it = endpoints_.find(peer);
    if (it != endpoints_.end()) return it->second;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&addr);
    params.sockaddr.addrlen = sizeof(addr);
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Impl::OnEndpointError;
    params.err_handler.arg = this;
    ucp_ep_h ep = nullptr;
    ucs_status_t status = ucp_ep_create(loop_->worker(), &params, &ep);
    if (status != UCS_OK) return UcxError("connecting to the prefill server " + peer, status);
    endpoints_[peer] = ep;
    return ep;
  }

  // The prefill server is unreachable or went away: every fetch from it fails.
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status) {
    auto* self = static_cast<Impl*>(arg);
    std::string peer;
    for (auto it = self->endpoints_.begin(); it != self->endpoints_.end(); ++it) {
      if (it->second == ep) {
        peer = it->first;
        self->endpoints_.erase(it);
        break;
      }
    }
    ForceCloseEndpoint(ep);
    if (peer.empty()) return;
    std::vector<uint64_t> rooms;
    for (const auto& [room, room_peer] : self->fetch_peer_) {
      if (room_peer == peer) rooms.push_back(room);
    }
    for (uint64_t room : rooms) {
      self->Fail(room, UcxError("connection to the prefill server " + peer +
                                    " failed (bootstrap_room " + std::to_string(room) + ")",
                                status));
    }
  }

  static ucs_status_t OnRecord(void* arg, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<Impl*>(arg);
    if (header_length != sizeof(uint64_t)) return UCS_OK;
    uint64_t room = 0;
    std::memcpy(&room, header, sizeof(room));
    auto it = self->fetches_.find(room);
    if (it == self->fetches_.end()) return UCS_OK;  // timed out meanwhile: dropped
    std::shared_ptr<FetchState> state = it->second;
    state->record_since = Clock::now();
    if (length > self->options_.max_record_bytes) {
      {
        MutexLock lock(&self->counters_mu_);
        ++self->counters_.refused;
      }
      // Returning without receiving declines a rendezvous record: nothing is allocated for it.
      self->Fail(room, InvalidArgument(
                           "KV transfer: the prefill server " + state->peer + " sent a " +
                           std::to_string(length) + "-byte record for bootstrap_room " +
                           std::to_string(room) + ", more than the " +
                           std::to_string(self->options_.max_record_bytes) +
                           " bytes this decode server's KV layout allows (its context length's "
                           "KV); the two servers must serve the same model"));
      return UCS_OK;
    }
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
      const auto* bytes = static_cast<const uint8_t*>(data);
      self->Succeed(room, std::vector<uint8_t>(bytes, bytes + length));
      return UCS_OK;
    }
    // Rendezvous: pull the data into the fetch's buffer; the state outlives the receive.
    state->buffer.resize(length);
    auto* holder = new RecordReceive{self, state};
    ucp_request_param_t recv{};
    recv.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    recv.cb.recv_am = &Impl::OnRecordData;
    recv.user_data = holder;
    ucs_status_ptr_t request =
        ucp_am_recv_data_nbx(self->loop_->worker(), data, state->buffer.data(), length, &recv);
    if (request == nullptr) {
      delete holder;
      self->Succeed(room, std::move(state->buffer));
    } else if (UCS_PTR_IS_ERR(request)) {
      delete holder;
      self->Fail(room, UcxError("receiving bootstrap_room " + std::to_string(room),
                                UCS_PTR_STATUS(request)));
    }
    return UCS_OK;
  }

  static void OnRecordData(void* request, ucs_status_t status, size_t /*length*/, void* user_data) {
    auto* receive = static_cast<RecordReceive*>(user_data);
    Impl* self = receive->self;
    std::shared_ptr<FetchState> state = std::move(receive->state);
    delete receive;
    ucp_request_free(request);
    auto it = self->fetches_.find(state->room);
    if (it == self->fetches_.end() || it->second != state) return;  // timed out meanwhile
    if (status == UCS_OK) {
      self->Succeed(state->room, std::move(state->buffer));
    } else {
      self->Fail(state->room,
                 UcxError("receiving bootstrap_room " + std::to_string(state->room), status));
    }
  }

  void Succeed(uint64_t room, std::vector<uint8_t> bytes) {
    auto it = fetches_.find(room);
    if (it == fetches_.end()) return;
    {
      MutexLock lock(&counters_mu_);
      ++counters_.received;
      counters_.bytes_received += static_cast<int64_t>(bytes.size());
      counters_.receive_seconds +=
          std::chrono::duration<double>(Clock::now() - it->second->record_since).count();
    }
    it->second->Complete(std::move(bytes));
    Forget(room);
  }

  void Fail(uint64_t room, Status status) {
    auto it = fetches_.find(room);
    if (it == fetches_.end()) return;
    it->second->Complete(std::move(status));
    Forget(room);
  }

  void Forget(uint64_t room) {
    fetches_.erase(room);
    fetch_peer_.erase(room);
  }

  void FailExpired() {
    const auto now = Clock::now();
    std::vector<uint64_t> expired;
    for (const auto& [room, state] : fetches_) {
      if (state->deadline <= now) expired.push_back(room);
    }
    for (uint64_t room : expired) {
      Fail(room, Aborted("KV transfer timed out: the prefill server " + fetch_peer_[room] +
                         " sent no KV for bootstrap_room " + std::to_string(room)));
    }
  }

  const Options options_;
  std::unique_ptr<UcxWorkerLoop> loop_;
  bool stopping_ = false;
  std::map<std::string, ucp_ep_h> endpoints_;  // "host:port" -> endpoint
  std::unordered_map<uint64_t, std::shared_ptr<FetchState>> fetches_;
  std::unordered_map<uint64_t, std::string> fetch_peer_;
  mutable Mutex counters_mu_;
  Counters counters_ GUARDED_BY(counters_mu_);
};

StatusOr<std::unique_ptr<KvReceiver>> KvReceiver::Create() { return Create(Options{}); }

StatusOr<std::unique_ptr<KvReceiver>> KvReceiver::Create(const Options& options) {
  auto impl = std::make_unique<Impl>(options);
  RADIXLM_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<KvReceiver>(new KvReceiver(std::move(impl)));
}

KvReceiver::KvReceiver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvReceiver::~KvReceiver() = default;

StatusOr<std::vector<uint8_t>> KvReceiver::Fetch(const std::string& host, int port, uint64_t room,
                                                 std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<StatusOr<std::vector<uint8_t>>>>();
  std::future<StatusOr<std::vector<uint8_t>>> result = promise->get_future();
  FetchAsync(host, port, room, timeout, [promise](StatusOr<std::vector<uint8_t>> outcome) {
    promise->set_value(std::move(outcome));
  });
  // The loop ends every fetch by its deadline; the extra second guards against a stopped loop.
  if (result.wait_for(timeout + std::chrono::seconds(1)) != std::future_status::ready) {
    return Aborted("KV transfer: the receiver stopped while bootstrap_room " +
                   std::to_string(room) + " was waiting");
  }
  return result.get();
}

void KvReceiver::FetchAsync(const std::string& host, int port, uint64_t room,
                            std::chrono::milliseconds timeout, FetchCallback done) {
  impl_->FetchAsync(host, port, room, timeout, std::move(done));
}

KvReceiver::Counters KvReceiver::counters() const { return impl_->counters(); }

}  // namespace radixlm::disagg
