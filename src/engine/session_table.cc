#include "engine/session_table.h"

#include <algorithm>

namespace radixlm {
namespace {

// The end of Python's tokens[:offset].
size_t SliceEnd(size_t size, int64_t offset) {
  const auto n = static_cast<int64_t>(size);
  if (offset < 0) return static_cast<size_t>(std::max<int64_t>(n + offset, 0));
  return static_cast<size_t>(std::min<int64_t>(offset, n));
}

// The session_params field SGLang's streaming sessions refuse, or nullptr.
const char* FieldStreamingRefuses(const SessionParams& params) {
  if (params.replace) return "replace";
  if (params.drop_previous_output) return "drop_previous_output";
  if (params.offset.value_or(0) != 0) return "offset";
  return nullptr;
}

}  // namespace

StatusOr<std::string> SessionTable::Open(const OpenSessionRequest& request, std::string fresh_id,
                                         double now) {
  std::string id = request.session_id.value_or(std::move(fresh_id));
  if (sessions_.count(id) != 0) {
    return InvalidArgument("session " + id + " is already open");
  }
  if (static_cast<int64_t>(sessions_.size()) >= max_sessions_) {
    return InvalidArgument("this server allows at most " + std::to_string(max_sessions_) +
                           " open sessions (--max-open-sessions); close one with /close_session");
  }
  Session& session = sessions_[id];
  session.options = request;
  session.last_active = now;
  return id;
}

StatusOr<std::vector<uint64_t>> SessionTable::Close(const std::string& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return NotFound("session " + id + " is not open");
  std::vector<uint64_t> unpin;
  for (const auto& [rid, turn] : it->second.turns) {
    if (turn.state == TurnState::kComplete) unpin.push_back(turn.pin);
  }
  sessions_.erase(it);
  return unpin;
}

StatusOr<SessionTable::Plan> SessionTable::PlanTurn(const SessionParams& params,
                                                    const std::string& rid,
                                                    std::span<const int32_t> own_ids,
                                                    int32_t bos_id) const {
  auto it = sessions_.find(params.id);
  if (it == sessions_.end()) {
    return InvalidArgument("session_params.id: session " + params.id +
                           " is not open (open one with /open_session)");
  }
  const Session& session = it->second;
  if (session.options.streaming) {
    // SGLang's rule, checked first as there: one turn at a time in a streaming session.
    for (const auto& [turn_rid, turn] : session.turns) {
      if (turn.state != TurnState::kRunning) continue;
      return InvalidArgument("session_params.id: Streaming session " + params.id +
                             " already has an active request (turn " + turn_rid +
                             " is running; a streaming session runs one turn at a time: send "
                             "the next once it has finished, or abort it)");
    }
  }
  if (const char* field = FieldStreamingRefuses(params);
      field != nullptr && session.options.streaming) {
    return InvalidArgument(std::string("session_params.") + field + ": session " + params.id +
                           " is streaming, and streaming sessions do not support " + field +
                           " (SGLang's rule: they only continue their last turn; open the "
                           "session without \"streaming\" to use it)");
  }
  if (session.turns.count(rid) != 0) {
    return InvalidArgument("rid " + rid + " is already a turn of session " + params.id);
  }
  Plan plan;
  if (params.rid.has_value()) {
    auto base = session.turns.find(*params.rid);
    if (base == session.turns.end()) {
      return InvalidArgument("session_params.rid: " + *params.rid + " is not a turn of session " +
                             params.id);
    }
    if (!params.replace && base->second.state == TurnState::kRunning) {
      return InvalidArgument("session_params.rid: turn " + *params.rid + " of session " +
                             params.id +
                             " has not finished (continue from it once it has, or set replace "
                             "to abort it)");
    }
    plan.base_rid = *params.rid;
  } else if (!params.replace && session.options.streaming) {
    plan.base_rid = session.last_complete;
  }
  if (plan.base_rid.empty()) {
    plan.input_ids.assign(own_ids.begin(), own_ids.end());
    return plan;
  }
  const Turn& base = session.turns.at(plan.base_rid);
  plan.input_ids = base.input_ids;
  if (!params.drop_previous_output) {
    plan.input_ids.insert(plan.input_ids.end(), base.output_ids.begin(), base.output_ids.end());
  }
  if (params.offset.has_value() && *params.offset != 0) {
    plan.input_ids.resize(SliceEnd(plan.input_ids.size(), *params.offset));
  }
  if (!own_ids.empty() && bos_id >= 0 && own_ids.front() == bos_id) own_ids = own_ids.subspan(1);
  plan.input_ids.insert(plan.input_ids.end(), own_ids.begin(), own_ids.end());
  return plan;
}

void SessionTable::DropSubtree(Session& session, const std::string& rid, Commit* out) {
  auto it = session.turns.find(rid);
  if (it == session.turns.end()) return;
  const std::vector<std::string> children = std::move(it->second.children);
  for (const std::string& child : children) DropSubtree(session, child, out);
  it = session.turns.find(rid);  // (the recursion erased other entries only)
  if (it->second.state == TurnState::kRunning) out->abort_rids.push_back(rid);
  if (it->second.state == TurnState::kComplete) out->unpin.push_back(it->second.pin);
  session.turns.erase(it);
}

void SessionTable::RefreshLastComplete(Session& session) {
  session.last_complete.clear();
  uint64_t best = 0;
  for (const auto& [rid, turn] : session.turns) {
    if (turn.state == TurnState::kComplete && turn.completed_seq > best) {
      best = turn.completed_seq;
      session.last_complete = rid;
    }
  }
}

SessionTable::Commit SessionTable::CommitTurn(const SessionParams& params, const std::string& rid,
                                              Plan plan, uint64_t pin) {
  Commit out;
  Session& session = sessions_.at(params.id);
  if (params.replace) {
    if (params.rid.has_value()) {
      Turn& base = session.turns.at(*params.rid);
      if (base.state == TurnState::kRunning) out.abort_rids.push_back(*params.rid);
      const std::vector<std::string> children = std::move(base.children);
      base.children.clear();
      for (const std::string& child : children) DropSubtree(session, child, &out);
    } else {
      std::vector<std::string> roots;
      for (const auto& [turn_rid, turn] : session.turns) {
        if (turn.parent.empty() || session.turns.count(turn.parent) == 0) {
          roots.push_back(turn_rid);
        }
      }
      for (const std::string& root : roots) DropSubtree(session, root, &out);
    }
    RefreshLastComplete(session);
  }
  Turn turn;
  turn.parent = plan.base_rid;
  turn.input_ids = std::move(plan.input_ids);
  turn.pin = pin;
  if (!turn.parent.empty()) session.turns.at(turn.parent).children.push_back(rid);
  session.turns.emplace(rid, std::move(turn));
  return out;
}

void SessionTable::AddOutput(const std::string& session_id, const std::string& rid,
                             std::span<const int32_t> ids) {
  auto s = sessions_.find(session_id);
  if (s == sessions_.end()) return;
  auto t = s->second.turns.find(rid);
  if (t == s->second.turns.end()) return;
  t->second.output_ids.insert(t->second.output_ids.end(), ids.begin(), ids.end());
}

std::vector<uint64_t> SessionTable::EndTurn(const std::string& session_id, const std::string& rid,
                                            uint64_t pin, bool complete) {
  std::vector<uint64_t> unpin;
  auto s = sessions_.find(session_id);
  if (s == sessions_.end()) {
    if (complete) unpin.push_back(pin);  // its session is closed: nobody continues from it
    return unpin;
  }
  Session& session = s->second;
  auto t = session.turns.find(rid);
  if (t == session.turns.end() || t->second.pin != pin) {
    if (complete) unpin.push_back(pin);  // dropped by a replace meanwhile
    return unpin;
  }
  Turn& turn = t->second;
  if (!complete) {
    // As SGLang: a tree session keeps an aborted turn (a later turn may continue from its
    // partial output); a streaming session rolls back to its last complete turn.
    if (!turn.children.empty() || !session.options.streaming) {
      turn.state = TurnState::kAborted;  // its KV is in the tree, unpinned
      return unpin;
    }
    if (auto parent = session.turns.find(turn.parent); parent != session.turns.end()) {
      std::erase(parent->second.children, rid);
    }
    session.turns.erase(t);  // rolled back: the session is as before this turn
    return unpin;
  }
  turn.state = TurnState::kComplete;
  turn.completed_seq = ++session.completions;
  session.last_complete = rid;
  if (session.options.streaming) {
    // Only the last complete turn is kept: its KV covers the history a next turn continues.
    for (auto it = session.turns.begin(); it != session.turns.end();) {
      if (it->first == rid || it->second.state == TurnState::kRunning) {
        ++it;
        continue;
      }
      if (it->second.state == TurnState::kComplete) unpin.push_back(it->second.pin);
      it = session.turns.erase(it);
    }
    for (auto& [turn_rid, other] : session.turns) {
      std::erase_if(other.children,
                    [&](const std::string& c) { return session.turns.count(c) == 0; });
    }
  }
  return unpin;
}

std::vector<uint64_t> SessionTable::ReleaseAll() {
  std::vector<uint64_t> unpin;
  for (const auto& [id, session] : sessions_) {
    for (const auto& [rid, turn] : session.turns) {
      if (turn.state == TurnState::kComplete) unpin.push_back(turn.pin);
    }
  }
  sessions_.clear();
  return unpin;
}

void SessionTable::Touch(const std::string& id, double now) {
  if (auto it = sessions_.find(id); it != sessions_.end()) it->second.last_active = now;
}

std::vector<std::string> SessionTable::TimedOut(double now) const {
  std::vector<std::string> ids;
  for (const auto& [id, session] : sessions_) {
    const std::optional<double>& timeout = session.options.timeout;
    if (timeout.has_value() && now - session.last_active > *timeout) ids.push_back(id);
  }
  return ids;
}

std::optional<double> SessionTable::NextTimeout() const {
  std::optional<double> next;
  for (const auto& [id, session] : sessions_) {
    if (!session.options.timeout.has_value()) continue;
    const double at = session.last_active + *session.options.timeout;
    if (!next.has_value() || at < *next) next = at;
  }
  return next;
}

size_t SessionTable::turns(const std::string& id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? 0 : it->second.turns.size();
}

std::string SessionTable::last_complete(const std::string& id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? "" : it->second.last_complete;
}

}  // namespace radixlm
