#include "engine/session_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace radixlm {
namespace {

using Ids = std::vector<int32_t>;
constexpr int32_t kBos = 2;

SessionParams Params(std::string id, std::optional<std::string> rid = std::nullopt) {
  SessionParams p;
  p.id = std::move(id);
  p.rid = std::move(rid);
  return p;
}

OpenSessionRequest Options(bool streaming, std::optional<std::string> id = std::nullopt) {
  OpenSessionRequest r;
  r.streaming = streaming;
  r.session_id = std::move(id);
  return r;
}

// Plans, commits, outputs and completes one turn; returns its prompt.
Ids RunTurn(SessionTable& table, const SessionParams& params, const std::string& rid, Ids own,
            Ids output, uint64_t pin, std::vector<uint64_t>* unpinned = nullptr) {
  StatusOr<SessionTable::Plan> plan = table.PlanTurn(params, rid, own, kBos);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  Ids prompt = plan->input_ids;
  SessionTable::Commit commit = table.CommitTurn(params, rid, std::move(*plan), pin);
  EXPECT_TRUE(commit.abort_rids.empty());
  table.AddOutput(params.id, rid, output);
  std::vector<uint64_t> unpin = table.EndTurn(params.id, rid, pin, /*complete=*/true);
  if (unpinned != nullptr) unpinned->insert(unpinned->end(), unpin.begin(), unpin.end());
  return prompt;
}

TEST(SessionTableTest, OpenRefusesDuplicatesAndTooMany) {
  SessionTable table(2);
  EXPECT_EQ(*table.Open(Options(false), "fresh"), "fresh");
  const OpenSessionRequest named = Options(false, "mine");
  EXPECT_EQ(*table.Open(named, "unused"), "mine");
  StatusOr<std::string> again = table.Open(named, "x");
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(again.status().message().find("already open"), std::string::npos);
  StatusOr<std::string> full = table.Open(Options(false), "third");
  EXPECT_NE(full.status().message().find("at most 2 open sessions"), std::string::npos);
  EXPECT_TRUE(table.Close("mine").ok());
  EXPECT_EQ(table.Close("mine").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(table.Open(Options(false), "third").ok());
}

TEST(SessionTableTest, TurnsAppendToTheTurnTheyName) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(false), "s").ok());
  EXPECT_EQ(RunTurn(table, Params("s"), "t0", {kBos, 10, 11}, {20, 21}, 1), (Ids{kBos, 10, 11}));
  // The named turn's prompt + output, then the own ids with their BOS dropped.
  EXPECT_EQ(RunTurn(table, Params("s", "t0"), "t1", {kBos, 12}, {22}, 2),
            (Ids{kBos, 10, 11, 20, 21, 12}));
  SessionParams cut = Params("s", "t1");
  cut.offset = -1;  // Python's [:-1]: the last output token goes
  EXPECT_EQ(RunTurn(table, cut, "t2", {13}, {23}, 3), (Ids{kBos, 10, 11, 20, 21, 12, 13}));
  SessionParams dropped = Params("s", "t0");
  dropped.drop_previous_output = true;
  dropped.offset = 2;
  EXPECT_EQ(RunTurn(table, dropped, "t3", {14}, {}, 4), (Ids{kBos, 10, 14}));
  // Without a rid a non-streaming session's turn starts afresh (SGLang).
  EXPECT_EQ(RunTurn(table, Params("s"), "t4", {kBos, 15}, {}, 5), (Ids{kBos, 15}));
  EXPECT_EQ(table.turns("s"), 5u);
  EXPECT_EQ(table.last_complete("s"), "t4");
}

TEST(SessionTableTest, StreamingSessionsContinueTheLastTurnAndKeepOnlyIt) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(true, "s"), "").ok());
  std::vector<uint64_t> unpinned;
  EXPECT_EQ(RunTurn(table, Params("s"), "a", {kBos, 10}, {20}, 1, &unpinned), (Ids{kBos, 10}));
  EXPECT_TRUE(unpinned.empty());
  EXPECT_EQ(RunTurn(table, Params("s"), "b", {kBos, 11}, {21}, 2, &unpinned),
            (Ids{kBos, 10, 20, 11}));
  EXPECT_EQ(unpinned, (std::vector<uint64_t>{1}));  // a's KV is a prefix of b's
  EXPECT_EQ(RunTurn(table, Params("s"), "c", {12}, {22}, 3, &unpinned),
            (Ids{kBos, 10, 20, 11, 21, 12}));
  EXPECT_EQ(unpinned, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(table.turns("s"), 1u);
  EXPECT_EQ(table.last_complete("s"), "c");
  EXPECT_EQ(*table.Close("s"), (std::vector<uint64_t>{3}));
}

TEST(SessionTableTest, StreamingSessionsRefuseReplaceDropAndOffsetAndKeepTheirHistory) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(true, "s"), "").ok());
  RunTurn(table, Params("s"), "a", {kBos, 10}, {20}, 1);
  SessionParams offset = Params("s");
  offset.offset = 1;
  SessionParams replace = Params("s", "a");
  replace.replace = true;
  SessionParams dropped = Params("s");
  dropped.drop_previous_output = true;
  for (const auto& [params, field] :
       {std::pair{offset, "session_params.offset"}, std::pair{replace, "session_params.replace"},
        std::pair{dropped, "session_params.drop_previous_output"}}) {
    StatusOr<SessionTable::Plan> refused = table.PlanTurn(params, "x", Ids{11}, kBos);
    ASSERT_FALSE(refused.ok()) << field;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find(field), std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("streaming"), std::string::npos);
  }
  SessionParams zero = Params("s");
  zero.offset = 0;  // 0 keeps everything: allowed
  EXPECT_EQ(RunTurn(table, zero, "b", {kBos, 11}, {21}, 2), (Ids{kBos, 10, 20, 11}));
  EXPECT_EQ(table.turns("s"), 1u);
  EXPECT_EQ(table.last_complete("s"), "b");
}

TEST(SessionTableTest, AnAbortedTurnIsRolledBack) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(true, "s"), "").ok());
  RunTurn(table, Params("s"), "a", {10}, {20}, 1);
  StatusOr<SessionTable::Plan> plan = table.PlanTurn(Params("s"), "b", Ids{11}, kBos);
  ASSERT_TRUE(plan.ok());
  table.CommitTurn(Params("s"), "b", std::move(*plan), 2);
  // While b runs, no other turn may start (SGLang: one active request per streaming session).
  for (const SessionParams& params : {Params("s"), Params("s", "a"), Params("s", "b")}) {
    StatusOr<SessionTable::Plan> early = table.PlanTurn(params, "c", Ids{12}, kBos);
    ASSERT_FALSE(early.ok());
    EXPECT_NE(
        early.status().message().find("Streaming session s already has an active request (turn b"),
        std::string::npos)
        << early.status().message();
  }
  table.AddOutput("s", "b", Ids{21, 22});
  EXPECT_TRUE(table.EndTurn("s", "b", 2, /*complete=*/false).empty());
  EXPECT_EQ(table.turns("s"), 1u);
  EXPECT_EQ(table.last_complete("s"), "a");
  // The next turn continues from a, as if b never ran.
  EXPECT_EQ(RunTurn(table, Params("s"), "c", {12}, {}, 3), (Ids{10, 20, 12}));
}

TEST(SessionTableTest, ANonStreamingSessionKeepsAnAbortedTurnToContinueFrom) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(false), "s").ok());
  RunTurn(table, Params("s"), "a", {10}, {20}, 1);
  StatusOr<SessionTable::Plan> plan = table.PlanTurn(Params("s", "a"), "b", Ids{11}, kBos);
  ASSERT_TRUE(plan.ok());
  table.CommitTurn(Params("s", "a"), "b", std::move(*plan), 2);
  // Other turns run meanwhile; continuing from b waits for it to end.
  StatusOr<SessionTable::Plan> early = table.PlanTurn(Params("s", "b"), "c", Ids{12}, kBos);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.status().message().find("has not finished"), std::string::npos);
  EXPECT_TRUE(table.PlanTurn(Params("s", "a"), "c", Ids{12}, kBos).ok());
  table.AddOutput("s", "b", Ids{21, 22});
  EXPECT_TRUE(table.EndTurn("s", "b", 2, /*complete=*/false).empty());  // no pin to release
  EXPECT_EQ(table.turns("s"), 2u);
  EXPECT_EQ(table.last_complete("s"), "a");
  // As SGLang's tree sessions: b's partial output is history a later turn may continue.
  EXPECT_EQ(RunTurn(table, Params("s", "b"), "c", {12}, {}, 3), (Ids{10, 20, 11, 21, 22, 12}));
  std::vector<uint64_t> unpin = *table.Close("s");
  std::sort(unpin.begin(), unpin.end());
  EXPECT_EQ(unpin, (std::vector<uint64_t>{1, 3}));  // the complete turns' pins only
}

TEST(SessionTableTest, ReplaceAbortsTheNamedTurnAndDropsWhatFollows) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(false), "s").ok());
  RunTurn(table, Params("s"), "a", {10}, {20}, 1);
  RunTurn(table, Params("s", "a"), "b", {11}, {21}, 2);
  RunTurn(table, Params("s", "b"), "c", {12}, {22}, 3);
  // Running d continues from c; replacing from a drops b, c (pins 2, 3) and aborts d.
  StatusOr<SessionTable::Plan> d = table.PlanTurn(Params("s", "c"), "d", Ids{13}, kBos);
  ASSERT_TRUE(d.ok());
  table.CommitTurn(Params("s", "c"), "d", std::move(*d), 4);
  SessionParams replace = Params("s", "a");
  replace.replace = true;
  StatusOr<SessionTable::Plan> e = table.PlanTurn(replace, "e", Ids{14}, kBos);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->input_ids, (Ids{10, 20, 14}));
  SessionTable::Commit commit = table.CommitTurn(replace, "e", std::move(*e), 5);
  EXPECT_EQ(commit.abort_rids, (std::vector<std::string>{"d"}));
  std::sort(commit.unpin.begin(), commit.unpin.end());
  EXPECT_EQ(commit.unpin, (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(table.EndTurn("s", "d", 4, /*complete=*/false).empty());
  EXPECT_EQ(table.turns("s"), 2u);                                          // a and e
  EXPECT_FALSE(table.PlanTurn(Params("s", "c"), "f", Ids{15}, kBos).ok());  // c is gone
  // Replace without a rid drops everything.
  table.EndTurn("s", "e", 5, true);
  SessionParams all;
  all.id = "s";
  all.replace = true;
  StatusOr<SessionTable::Plan> g = table.PlanTurn(all, "g", Ids{16}, kBos);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->input_ids, (Ids{16}));
  commit = table.CommitTurn(all, "g", std::move(*g), 6);
  std::sort(commit.unpin.begin(), commit.unpin.end());
  EXPECT_EQ(commit.unpin, (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(table.turns("s"), 1u);
}

TEST(SessionTableTest, ErrorsNameTheSessionAndTheTurn) {
  SessionTable table(4);
  StatusOr<SessionTable::Plan> none = table.PlanTurn(Params("nope"), "r", Ids{1}, kBos);
  EXPECT_NE(none.status().message().find("session nope is not open"), std::string::npos);
  ASSERT_TRUE(table.Open(Options(false), "s").ok());
  StatusOr<SessionTable::Plan> unknown = table.PlanTurn(Params("s", "ghost"), "r", Ids{1}, kBos);
  EXPECT_NE(unknown.status().message().find("ghost is not a turn of session s"), std::string::npos);
  RunTurn(table, Params("s"), "a", {10}, {20}, 1);
  StatusOr<SessionTable::Plan> taken = table.PlanTurn(Params("s", "a"), "a", Ids{1}, kBos);
  EXPECT_NE(taken.status().message().find("already a turn"), std::string::npos);
}

TEST(SessionTableTest, SessionsWithATimeoutTimeOutAfterTheirLastTurnStarted) {
  SessionTable table(4);
  OpenSessionRequest timed = Options(false, "timed");
  timed.timeout = 10;
  ASSERT_TRUE(table.Open(timed, "", /*now=*/100).ok());
  ASSERT_TRUE(table.Open(Options(false, "forever"), "", 100).ok());
  EXPECT_EQ(table.NextTimeout(), std::optional<double>(110));
  EXPECT_TRUE(table.TimedOut(110).empty());
  table.Touch("timed", 105);  // a turn started
  EXPECT_EQ(table.NextTimeout(), std::optional<double>(115));
  EXPECT_TRUE(table.TimedOut(112).empty());
  EXPECT_EQ(table.TimedOut(115.5), (std::vector<std::string>{"timed"}));
  ASSERT_TRUE(table.Close("timed").ok());
  EXPECT_EQ(table.NextTimeout(), std::nullopt);
  EXPECT_TRUE(table.TimedOut(1e9).empty());
}

TEST(SessionTableTest, TurnsEndingAfterTheirSessionClosedHandBackTheirPins) {
  SessionTable table(4);
  ASSERT_TRUE(table.Open(Options(false), "s").ok());
  StatusOr<SessionTable::Plan> plan = table.PlanTurn(Params("s"), "a", Ids{10}, kBos);
  ASSERT_TRUE(plan.ok());
  table.CommitTurn(Params("s"), "a", std::move(*plan), 7);
  EXPECT_TRUE(table.Close("s")->empty());  // a still runs: no pin yet
  EXPECT_EQ(table.EndTurn("s", "a", 7, /*complete=*/true), (std::vector<uint64_t>{7}));
  EXPECT_EQ(table.open_sessions(), 0u);
}

}  // namespace
}  // namespace radixlm
