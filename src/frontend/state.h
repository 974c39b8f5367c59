// State: a running frontend program's state — its text, variables, open role, backend — and
// the interpreter that executes what the program appends to it.
//
//   void Qa(State& s, const std::string& q) {
//     s += user("Q: " + q);
//     s += assistant(gen("answer", {.max_tokens = 64, .stop = {"\n"}}));
//   }
//   ... s["answer"] ...
//
// Execution is eager and asynchronous, as in SGLang: `s += expr` records expr's IR nodes at
// once and queues their execution on the state's own worker thread, then returns. Reading
// (s["x"], text(), status()) waits for the queued work. So branches of a fork, each with its
// own worker, run concurrently even when the program fills them in a plain loop.
//
// fork(n) waits for the state, commits its text as a prefix (prefilled once, pinned while the
// branches are alive) and returns n copies. join(branches) waits for them and releases the
// prefix; with JoinMode::kConcatenate it also appends each branch's new text to the parent,
// in branch order.
//
// Errors: the first failing operation of a state sets its status(); later operations of that
// state are skipped. A branch's error becomes its parent's at join.
//
// Thread safety: one program thread drives a state (and its branches); the workers are
// internal. A state must outlive the VarRefs taken from it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "frontend/backend.h"
#include "frontend/ir.h"
#include "frontend/language.h"
#include "frontend/select_methods.h"

namespace radixlm::frontend {

class State;

// What a run's states share.
struct Runtime {
  Backend* backend = nullptr;        // null: tracing (no model; see tracer.h)
  const ChatRoles* roles = nullptr;  // how roles render; never null
  GenOptions default_gen;            // under each gen's own options
  std::atomic<int64_t> next_fork_id{1};
  // Tracing: the state's text at the first operation that needs the model (gen, select, fork).
  std::mutex trace_mu;
  std::optional<std::string> constant_prefix;  // guarded by trace_mu
};

// A variable of a state, read when converted (waits for the state's queued work).
class VarRef {
 public:
  VarRef(State* state, std::string name) : state_(state), name_(std::move(name)) {}
  std::string value() const;                        // "" if the variable is not set
  operator std::string() const { return value(); }  // NOLINT(google-explicit-constructor)
  const std::string& name() const { return name_; }
  State* state() const { return state_; }

 private:
  State* state_;
  std::string name_;
};
std::ostream& operator<<(std::ostream& out, const VarRef& var);
std::string operator+(const std::string& a, const VarRef& b);
std::string operator+(const VarRef& a, const std::string& b);

class ForkGroup;

enum class JoinMode { kGatherVariables, kConcatenate };
void join(ForkGroup& branches, JoinMode mode = JoinMode::kGatherVariables);

class State {
 public:
  explicit State(std::shared_ptr<Runtime> runtime);
  ~State();  // waits for the queued work
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  State& operator+=(const Expr& expr);
  // Appends a variable: this state's own (Variable node) or a fork branch's (GetForkItem;
  // waits for that branch).
  State& operator+=(const VarRef& var);

  VarRef operator[](const std::string& name) { return VarRef(this, name); }

  ForkGroup fork(int n);

  // These wait for the queued work.
  void Sync();
  std::string text();
  std::map<std::string, std::string> variables();
  Status status();
  // How select `name` decided / what gen `name` reported (nullopt if none).
  std::optional<SelectDecision> select_decision(const std::string& name);
  std::optional<GenerateReply> gen_reply(const std::string& name);

  const std::shared_ptr<ProgramIr>& ir() const { return ir_; }
  const std::shared_ptr<Runtime>& runtime() const { return runtime_; }

 private:
  friend class ForkGroup;
  friend void join(ForkGroup& branches, JoinMode mode);

  struct Data {
    std::string text;
    std::map<std::string, std::string> vars;
    std::vector<std::string> role_stack;
    std::string last_ended_role;
    Status status;
    std::map<std::string, SelectDecision> decisions;
    std::map<std::string, GenerateReply> replies;
    std::vector<ImageBytes> images;  // one per kImageMarker in text, in order
  };

  // Queues fn on the worker (or runs it now when tracing).
  void Enqueue(std::function<void()> fn);
  void WorkerLoop();
  // Executes one node (on the worker), updating data_. Returns the node's error, if any.
  Status Execute(const Node& node);
  // The text so far into *prompt (and its images into *images when given), and the backend to
  // run `node` on; nullptr when tracing (then the constant prefix is recorded and the node's
  // variable set to "").
  Backend* PromptOrTrace(const Node& node, std::string* prompt,
                         std::vector<ImageBytes>* images = nullptr);
  Status ExecuteGen(const Node& node);
  Status ExecuteSelect(const Node& node);
  Status ExecuteRole(const Node& node);
  Status ExecuteImage(const Node& node);
  void Fail(Status status);  // sets status if none yet
  void AppendText(const std::string& text);

  std::shared_ptr<Runtime> runtime_;
  std::shared_ptr<ProgramIr> ir_ = std::make_shared<ProgramIr>();
  // Fork branch identity (fork_id -1: not a branch) and what it inherited.
  int64_t fork_id_ = -1;
  int32_t fork_index_ = 0;
  size_t fork_point_ = 0;      // text length at the fork
  size_t fork_images_ = 0;     // images at the fork
  std::shared_ptr<void> pin_;  // the fork prefix's pin, released when the last holder goes

  std::mutex mu_;
  std::condition_variable cv_;
  Data data_;                                // guarded by mu_ (written by the worker)
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool busy_ = false;                        // guarded by mu_: the worker runs an item
  bool stopping_ = false;                    // guarded by mu_
  std::thread worker_;                       // started on the first queued item
};

// The branches of one fork; iterating yields State&.
class ForkGroup {
 public:
  ForkGroup(ForkGroup&&) = default;
  ~ForkGroup();  // waits for the branches and releases the prefix

  State& operator[](size_t i) { return *branches_[i]; }
  size_t size() const { return branches_.size(); }
  int64_t fork_id() const { return fork_id_; }

  class iterator {
   public:
    explicit iterator(std::vector<std::unique_ptr<State>>::iterator it) : it_(it) {}
    State& operator*() const { return **it_; }
    iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return it_ != o.it_; }

   private:
    std::vector<std::unique_ptr<State>>::iterator it_;
  };
  iterator begin() { return iterator(branches_.begin()); }
  iterator end() { return iterator(branches_.end()); }

 private:
  friend class State;
  friend void join(ForkGroup& branches, JoinMode mode);
  ForkGroup(State* parent, int64_t fork_id) : parent_(parent), fork_id_(fork_id) {}

  State* parent_;
  int64_t fork_id_;
  std::vector<std::unique_ptr<State>> branches_;
  std::shared_ptr<void> pin_;
  bool joined_ = false;
};

}  // namespace radixlm::frontend
