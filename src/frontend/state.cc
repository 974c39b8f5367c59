// State: the API side — queueing, waiting, fork and join. Node execution is state_exec.cc.
#include "frontend/state.h"

namespace radixlm::frontend {

std::string VarRef::value() const {
  const std::map<std::string, std::string> vars = state_->variables();
  auto it = vars.find(name_);
  return it == vars.end() ? "" : it->second;
}

std::ostream& operator<<(std::ostream& out, const VarRef& var) { return out << var.value(); }
std::string operator+(const std::string& a, const VarRef& b) { return a + b.value(); }
std::string operator+(const VarRef& a, const std::string& b) { return a.value() + b; }

State::State(std::shared_ptr<Runtime> runtime) : runtime_(std::move(runtime)) {}

State::~State() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void State::Enqueue(std::function<void()> fn) {
  if (runtime_->backend == nullptr) {  // tracing: no model calls, nothing to overlap
    fn();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
    if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  }
  cv_.notify_all();
}

void State::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    fn();
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

void State::Sync() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

std::string State::text() {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  return data_.text;
}

std::map<std::string, std::string> State::variables() {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  return data_.vars;
}

Status State::status() {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  return data_.status;
}

std::optional<SelectDecision> State::select_decision(const std::string& name) {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.decisions.find(name);
  if (it == data_.decisions.end()) return std::nullopt;
  return it->second;
}

std::optional<GenerateReply> State::gen_reply(const std::string& name) {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.replies.find(name);
  if (it == data_.replies.end()) return std::nullopt;
  return it->second;
}

void State::Fail(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (data_.status.ok()) data_.status = std::move(status);
}

State& State::operator+=(const Expr& expr) {
  for (const Node& node : expr.nodes()) ir_->Append(node);
  Enqueue([this, nodes = expr.nodes()] {
    for (const Node& node : nodes) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!data_.status.ok()) return;
      }
      Status s = Execute(node);
      if (!s.ok()) {
        Fail(std::move(s));
        return;
      }
    }
  });
  return *this;
}

State& State::operator+=(const VarRef& var) {
  State* owner = var.state();
  Node node;
  node.name = var.name();
  if (owner == this) {
    node.kind = NodeKind::kVariable;
    ir_->Append(node);
    Enqueue([this, node] {
      Status s = Execute(node);
      if (!s.ok()) Fail(std::move(s));
    });
    return *this;
  }
  // Another state's variable (normally a fork branch's): read it now, so the branch may go
  // away before this state's queue reaches the append.
  node.kind = NodeKind::kGetForkItem;
  node.fork_id = owner->fork_id_;
  node.fork_index = owner->fork_index_;
  ir_->Append(node);
  const std::map<std::string, std::string> vars = owner->variables();
  auto it = vars.find(var.name());
  const bool found = it != vars.end();
  const std::string value = found ? it->second : std::string();
  const Status owner_status = owner->status();
  Enqueue([this, found, value, owner_status, name = var.name()] {
    std::lock_guard<std::mutex> lock(mu_);
    if (!data_.status.ok()) return;
    if (!owner_status.ok()) {
      data_.status = owner_status;
    } else if (!found && runtime_->backend != nullptr) {
      data_.status = NotFound("the fork branch has no variable '" + name + "'");
    } else {
      data_.text += value;
    }
  });
  return *this;
}

ForkGroup State::fork(int n) {
  const int64_t id = runtime_->next_fork_id++;
  ForkGroup group(this, id);
  Sync();
  Node commit;
  commit.kind = NodeKind::kCommitLazy;
  ir_->Append(commit);
  Node fork_node;
  fork_node.kind = NodeKind::kFork;
  fork_node.fork_id = id;
  fork_node.fork_size = n;
  Data copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    copy = data_;
  }
  if (n < 1) Fail(InvalidArgument("fork needs at least one branch, got " + std::to_string(n)));
  Backend* backend = runtime_->backend;
  if (backend == nullptr) {
    std::lock_guard<std::mutex> lock(runtime_->trace_mu);
    if (!runtime_->constant_prefix.has_value()) runtime_->constant_prefix = copy.text;
  } else if (copy.status.ok() && n >= 1 && backend->caches_prefixes() && copy.images.empty()) {
    // (A prefix with images is not committed: a commit carries text only. The branches still
    // share it through the radix tree, which keys each image's span by the image's content.)
    StatusOr<PrefixCommit> c = backend->CommitPrefix(copy.text, /*pin=*/true);
    if (!c.ok()) {
      Fail(c.status());
      copy.status = c.status();
    } else if (c->pin != 0) {
      const uint64_t pin = c->pin;
      group.pin_ =
          std::shared_ptr<void>(nullptr, [backend, pin](void*) { backend->ReleasePrefix(pin); });
    }
  }
  for (int i = 0; i < n; ++i) {
    auto branch = std::make_unique<State>(runtime_);
    branch->fork_id_ = id;
    branch->fork_index_ = i;
    branch->fork_point_ = copy.text.size();
    branch->fork_images_ = copy.images.size();
    branch->pin_ = group.pin_;
    branch->data_ = copy;
    branch->data_.decisions.clear();
    branch->data_.replies.clear();
    fork_node.branches.push_back(branch->ir_);
    group.branches_.push_back(std::move(branch));
  }
  ir_->Append(std::move(fork_node));
  return group;
}

ForkGroup::~ForkGroup() {
  for (auto& b : branches_) b->Sync();
}

void join(ForkGroup& group, JoinMode mode) {
  State* parent = group.parent_;
  std::vector<std::string> texts;
  std::vector<ImageBytes> images;  // the branches' new images, in the order of their texts
  Status first_error;
  for (auto& b : group.branches_) {
    b->Sync();
    std::lock_guard<std::mutex> lock(b->mu_);
    if (first_error.ok() && !b->data_.status.ok()) first_error = b->data_.status;
    texts.push_back(b->data_.text.substr(std::min(b->fork_point_, b->data_.text.size())));
    for (size_t i = b->fork_images_; i < b->data_.images.size(); ++i) {
      images.push_back(b->data_.images[i]);
    }
    b->pin_.reset();
  }
  group.pin_.reset();  // the prefix is unpinned once no branch runs
  group.joined_ = true;
  if (mode == JoinMode::kConcatenate) {
    Node node;
    node.kind = NodeKind::kConcatenateAndAppend;
    node.fork_id = group.fork_id_;
    parent->ir_->Append(node);
  }
  parent->Enqueue(
      [parent, mode, texts = std::move(texts), images = std::move(images), first_error] {
        std::lock_guard<std::mutex> lock(parent->mu_);
        if (!parent->data_.status.ok()) return;
        if (!first_error.ok()) {
          parent->data_.status = first_error;
          return;
        }
        if (mode == JoinMode::kConcatenate) {
          for (const std::string& t : texts) parent->data_.text += t;
          parent->data_.images.insert(parent->data_.images.end(), images.begin(), images.end());
        }
      });
}

}  // namespace radixlm::frontend
