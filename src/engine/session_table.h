// SessionTable: SGLang's streaming sessions (python/sglang/srt/managers/session_controller.py)
// as plain bookkeeping, owned by the engine's scheduler thread (engine_core.h) and touched by
// nothing else. It decides what prompt a session turn runs and which KV pins the engine must
// take or drop; it never touches the scheduler itself.
//
// A session is a tree of turns (requests), keyed by rid. A turn's prompt is an earlier turn's
// prompt + output (or prompt only, drop_previous_output), cut at `offset` (a Python slice end:
// negative counts from the end; absent or 0 keeps everything), followed by the turn's own ids
// (a leading BOS dropped). Which earlier turn:
//   * session_params.rid names it (it must have finished, unless replace);
//   * no rid, in a session opened with "streaming": true: the session's last complete turn;
//   * no rid otherwise (or with replace): none, the turn starts from its own ids.
// replace with a rid aborts that turn if it still runs and drops every turn after it; replace
// without a rid drops every turn of the session. A streaming session runs one turn at a time
// (SGLang: "Streaming session already has an active request."). A turn that ends with an abort
// stays in a non-streaming session (aborted: a later turn naming it continues from its partial
// output, as in SGLang's tree sessions); in a streaming session it is rolled back (removed) and
// the session continues from its last complete turn.
//
// KV: every complete turn of an open session is pinned (the engine gives each turn a pin id;
// the scheduler takes the pin on the turn's KV when it finishes, see RequestInput), so the
// next turn finds the whole history in the radix tree. The pins are reclaimable: the scheduler
// releases them, oldest first, when the pool needs the memory (scheduler_pins.cc), so session
// KV is the last cache evicted but never keeps a request waiting; a turn whose history was
// released re-prefills it. A streaming session keeps only its last complete turn (older turns'
// KV is a prefix of it); dropped turns and a closed session's turns hand their pins back (the
// `unpin` lists). The number of open sessions is bounded (--max-open-sessions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/api.h"
#include "util/status.h"

namespace radixlm {

class SessionTable {
 public:
  explicit SessionTable(int32_t max_sessions) : max_sessions_(max_sessions) {}

  // Opens a session named request.session_id, or `fresh_id` when that is unset, at time `now`
  // (seconds, the caller's monotonic clock). Returns its id. InvalidArgument when the id is
  // open already or max_sessions are open.
  StatusOr<std::string> Open(const OpenSessionRequest& request, std::string fresh_id,
                             double now = 0);

  // Closes a session: its turns are forgotten (running ones run on; their pins are handed back
  // when they end). Returns the pins to release. NotFound for an unknown id.
  StatusOr<std::vector<uint64_t>> Close(const std::string& id);

  // What turn `rid` of session params.id would run: its whole prompt and the turn it
  // continues ("" for none). InvalidArgument (naming the session, the rid) when the session is
  // not open, the rid is taken or unknown, the turn continued from is still running, a
  // streaming session already has a turn running, or a streaming session is asked to replace,
  // drop_previous_output or cut at a non-zero offset (SGLang refuses those: a streaming session
  // only continues its last turn).
  struct Plan {
    std::vector<int32_t> input_ids;
    std::string base_rid;
  };
  StatusOr<Plan> PlanTurn(const SessionParams& params, const std::string& rid,
                          std::span<const int32_t> own_ids, int32_t bos_id) const;

  // Records turn `rid` as running with `plan` (just returned by PlanTurn, nothing changed
  // since) and applies `replace`. The caller aborts the `abort_rids` (running turns replaced)
  // and releases the `unpin` pins.
  struct Commit {
    std::vector<std::string> abort_rids;
    std::vector<uint64_t> unpin;
  };
  Commit CommitTurn(const SessionParams& params, const std::string& rid, Plan plan, uint64_t pin);

  // Output ids of a running turn, as they are produced.
  void AddOutput(const std::string& session_id, const std::string& rid,
                 std::span<const int32_t> ids);

  // Turn `rid` (pin id `pin`) ended: complete (its KV is now pinned) or aborted (kept, or
  // rolled back in a streaming session). Returns the pins to release (older turns of a
  // streaming session; the turn's own pin when its session is closed or the turn was dropped
  // meanwhile).
  std::vector<uint64_t> EndTurn(const std::string& session_id, const std::string& rid, uint64_t pin,
                                bool complete);

  // Every pin held (Shutdown).
  std::vector<uint64_t> ReleaseAll();

  // Timeouts (SGLang's open_session timeout): a session with one is active when opened and
  // when a turn of it starts (Touch, after CommitTurn); TimedOut lists those whose timeout has
  // passed since (the caller closes them), NextTimeout the earliest time one may.
  void Touch(const std::string& id, double now);
  std::vector<std::string> TimedOut(double now) const;
  std::optional<double> NextTimeout() const;

  size_t open_sessions() const { return sessions_.size(); }
  // The turns a session remembers (tests); 0 for an unknown session.
  size_t turns(const std::string& id) const;
  // Its last complete turn's rid ("" for none or an unknown session).
  std::string last_complete(const std::string& id) const;

 private:
  enum class TurnState { kRunning, kComplete, kAborted };
  struct Turn {
    std::string parent;  // the turn this one continues; "" for none
    std::vector<std::string> children;
    std::vector<int32_t> input_ids;
    std::vector<int32_t> output_ids;
    TurnState state = TurnState::kRunning;
    uint64_t pin = 0;
    uint64_t completed_seq = 0;  // order of completion, for last_complete
  };
  struct Session {
    OpenSessionRequest options;
    std::map<std::string, Turn> turns;
    std::string last_complete;
    uint64_t completions = 0;
    double last_active = 0;
  };

  // Removes turn `rid` and everything after it: running ones go to *abort, complete ones'
  // pins to *unpin.
  static void DropSubtree(Session& session, const std::string& rid, Commit* out);
  static void RefreshLastComplete(Session& session);

  int32_t max_sessions_;
  std::unordered_map<std::string, Session> sessions_;
};

}  // namespace radixlm
