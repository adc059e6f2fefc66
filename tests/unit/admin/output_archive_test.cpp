// The fire output archive's rules on fakes (admin/results/output_puller.hpp, results/callback_service.hpp):
//  * a log is kept within the admin's cap as its head and tail, counting what the executor left out, and
//    made storable (no NUL byte);
//  * a callback with the fire's log hands it to the store with the result; one without queues a pull, due a
//    moment after the callback; with the archive off, neither;
//  * a pull reads the executor's /log page after page until it says the end or a page brings nothing new,
//    keeping head and tail, reading at most a bound, and says which executor failed and how;
//  * a failed pull is tried again after 10 s, 30 s, 90 s, then recorded as failed for good (at once when the
//    executor answers that it has no such log); pulls run on at most `concurrency` threads at once; a full
//    batch is followed by another round.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "admin/results/callback_service.hpp"
#include "admin/results/output_puller.hpp"
#include "cronwheel/head_tail.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::admin;
using cronwheel::xxljob::Envelope;
using cronwheel::xxljob::LogParam;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

// A ResultStore that keeps what the archive's rules hand it: the results recorded, and a queue of pulls.
class FakeResultStore final : public ResultStore {
 public:
  std::vector<std::pair<std::int64_t, std::optional<std::string>>> GroupTokensOf(
      std::span<const std::int64_t> ids) override {
    std::vector<std::pair<std::int64_t, std::optional<std::string>>> out;
    for (const auto id : ids)
      out.emplace_back(id, std::nullopt);
    return out;
  }
  CallbacksRecorded RecordCallbacks(std::span<const HandleResult> results, const std::string&,
                                    std::int64_t) override {
    std::lock_guard lock(mu);
    CallbacksRecorded out;
    for (const auto& r : results) {
      recorded.push_back(r);
      out.recorded.push_back({.log_id = r.log_id});
    }
    return out;
  }
  std::vector<OutputPull> ClaimOutputPulls(std::int64_t now_ms, std::int64_t lease_ms, int limit) override {
    std::lock_guard lock(mu);
    std::vector<OutputPull> out;
    for (auto& [id, q] : queue) {
      if (q.due_ms > now_ms || static_cast<int>(out.size()) >= limit) continue;
      q.due_ms = now_ms + lease_ms;
      ++q.pull.attempts;
      out.push_back(q.pull);
    }
    ++claims;
    return out;
  }
  void FinishOutputPulls(std::span<const PulledOutput> pulled, std::int64_t) override {
    std::lock_guard lock(mu);
    for (const auto& p : pulled) {
      if (p.retry_at_ms > 0) {
        queue.at(p.log_id).due_ms = p.retry_at_ms;
        queue.at(p.log_id).error = p.error;
      } else {
        queue.erase(p.log_id);
        archived[p.log_id] = p;
      }
    }
  }
  void Queue(std::int64_t log_id, std::int64_t due_ms, std::string address = "http://10.0.0.5:9999/") {
    std::lock_guard lock(mu);
    queue[log_id] = {.pull = {.log_id = log_id,
                              .scheduled_ms = kT0,
                              .executor_address = std::move(address),
                              .log_date_ms = kT0 + 5},
                     .due_ms = due_ms};
  }

  FailuresClaimed ClaimFailures(const std::string&, std::int64_t, int, std::int64_t,
                                const PlanRetries&) override {
    return {};
  }
  void SetAlarmStatus(std::span<const AlarmStatus>) override {}
  std::vector<AlertPlan> PlanAlerts(const FailedFire&, std::string_view, const nlohmann::json&,
                                    std::int64_t) override {
    return {};
  }
  void FinishAlerts(std::span<const AlertDelivery>, std::int64_t) override {}
  std::vector<PendingAlert> ClaimAlertRetries(std::int64_t, int) override { return {}; }
  std::vector<PendingAlert> ClaimRecoveries(std::int64_t, int) override { return {}; }
  std::vector<RunningFire> RunningSince(std::int64_t, int) override { return {}; }
  void MarkLost(std::span<const std::int64_t>, std::int64_t, const std::string&) override {}
  void EnsurePartitions(std::int64_t) override {}
  void UpdateReport(std::int64_t, int) override {}
  RetentionOutcome DropFiresBefore(std::int64_t, int) override { return {}; }

  struct Queued {
    OutputPull pull;
    std::int64_t due_ms = 0;
    std::string error;
  };
  std::mutex mu;
  std::vector<HandleResult> recorded;
  std::map<std::int64_t, Queued> queue;
  std::map<std::int64_t, PulledOutput> archived;
  int claims = 0;
};

// An executor whose /log serves scripted logs (by log id) in pages of `page_lines` lines, as cronwheel's and
// XXL-JOB's do: toLineNum the last line returned (0 when none); isEnd never for a log that exists. Records
// every request and the most requests in flight at once.
class LogServingExecutor final : public cwtest::AnsweringExecutorClient {
 public:
  Envelope Log(const std::string& address, const std::string& token, const LogParam& p) override {
    {
      // The first `gate` requests wait for one another (at most 5 s), so that concurrent pulls overlap.
      std::unique_lock lock(mu);
      const int now = ++in_flight;
      most_in_flight = std::max(most_in_flight, now);
      if (++arrivals <= gate) {
        gate_cv.notify_all();
        gate_cv.wait_for(lock, 5s, [this] { return arrivals >= gate; });
      }
      --in_flight;
    }
    std::lock_guard lock(mu);
    requests.push_back({address, token, p});
    if (down) return Envelope::Fail("the executor could not be reached (connection refused)");
    const auto it = logs.find(p.log_id);
    if (it == logs.end()) {
      return Envelope::Success({{"fromLineNum", p.from_line_num},
                                {"toLineNum", 0},
                                {"logContent", "readLog fail, logFile not exists"},
                                {"isEnd", true}});
    }
    std::string content;
    int line = 0;
    int last = 0;
    std::size_t at = 0;
    while (at < it->second.size()) {
      const auto nl = it->second.find('\n', at);
      const auto next = nl == std::string::npos ? it->second.size() : nl + 1;
      ++line;
      if (line >= p.from_line_num && line < p.from_line_num + page_lines) {
        content += it->second.substr(at, next - at);
        last = line;
      }
      at = next;
    }
    return Envelope::Success(
        {{"fromLineNum", p.from_line_num}, {"toLineNum", last}, {"logContent", content}, {"isEnd", false}});
  }
  struct Request {
    std::string address;
    std::string token;
    LogParam param;
  };
  std::mutex mu;
  std::map<std::int64_t, std::string> logs;
  std::vector<Request> requests;
  bool down = false;
  int page_lines = 1000;
  int gate = 0;
  int arrivals = 0;
  int in_flight = 0;
  int most_in_flight = 0;
  std::condition_variable gate_cv;
};

std::string Lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i)
    out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(OutputArchive, ALogIsKeptWithinTheCapCountingWhatTheExecutorLeftOutAndStorableAsText) {
  const auto small = KeepLog("a\nb\n", 4, 0, 1024);
  EXPECT_EQ(small.content, "a\nb\n");
  EXPECT_EQ(small.log_bytes, 4);
  EXPECT_EQ(small.left_out, 0);

  const auto text = Lines(1, 1000);
  const auto cut = KeepLog(text, static_cast<std::int64_t>(text.size()), 0, 2048);
  EXPECT_EQ(cut.content, cronwheel::KeepHeadAndTail(text, 2048).text);
  EXPECT_EQ(cut.left_out, static_cast<std::int64_t>(cronwheel::KeepHeadAndTail(text, 2048).left_out));
  // The executor kept 2048 of 9000 bytes already (its marker line beyond them): not cut again here.
  const auto pushed = KeepLog(cut.content, 9000, 7000, 2048);
  EXPECT_EQ(pushed.content, cut.content);
  EXPECT_EQ(pushed.left_out, 7000);
  EXPECT_EQ(pushed.log_bytes, 9000);
  // ... but cut again under a smaller cap of the admin's, both counts added.
  const auto smaller = KeepLog(cut.content, 9000, 7000, 1024);
  EXPECT_LT(smaller.content.size(), 1024U + cronwheel::kMarkerBytes);
  EXPECT_GT(smaller.left_out, 7000);

  const auto nul = KeepLog(std::string("a\0b\n", 4), 4, 0, 1024);
  EXPECT_EQ(nul.content,
            "a\xEF\xBF\xBD"
            "b\n")
      << "a NUL byte, which PostgreSQL's text refuses, becomes U+FFFD";
}

TEST(OutputArchive, ACallbacksLogGoesWithItsResultAndOneWithoutIsQueuedForAPull) {
  cwtest::FakeClock clock{kT0};
  FakeResultStore store;
  CallbackService callbacks(clock, store, "node-a", [](const std::vector<Fire>&) {},
                            {.max_bytes = 1024, .pull_delay = 1500ms});
  cronwheel::xxljob::HandleCallbackParam pushed{.log_id = 1, .handle_code = 200};
  pushed.job_log = cronwheel::xxljob::HandleCallbackParam::JobLog{.content = "x\n", .bytes = 2};
  cronwheel::xxljob::HandleCallbackParam big{.log_id = 2, .handle_code = 200};
  big.job_log = cronwheel::xxljob::HandleCallbackParam::JobLog{.content = Lines(1, 500), .bytes = 2892};
  const cronwheel::xxljob::HandleCallbackParam plain{
      .log_id = 3, .handle_code = 500, .handle_msg = std::string("bad\0byte", 8)};
  const std::vector<cronwheel::xxljob::HandleCallbackParam> batch{pushed, big, plain};
  const auto outcome = callbacks.Handle(batch);
  EXPECT_EQ(outcome.logs_archived, 1);
  EXPECT_EQ(outcome.logs_truncated, 1);
  ASSERT_EQ(store.recorded.size(), 3U);
  ASSERT_TRUE(store.recorded[0].log);
  EXPECT_EQ(store.recorded[0].log->content, "x\n");
  EXPECT_EQ(store.recorded[0].pull_log_at_ms, 0);
  ASSERT_TRUE(store.recorded[1].log);
  EXPECT_GT(store.recorded[1].log->left_out, 0);
  EXPECT_FALSE(store.recorded[2].log);
  EXPECT_EQ(store.recorded[2].pull_log_at_ms, kT0 + 1500) << "pulled a moment after its callback";
  EXPECT_EQ(store.recorded[2].handle_msg,
            "bad\xEF\xBF\xBD"
            "byte")
      << "a NUL in a message would fail the batch's statement (PostgreSQL's text holds none)";

  FakeResultStore off_store;
  CallbackService off(clock, off_store, "node-a", [](const std::vector<Fire>&) {}, {.max_bytes = 0});
  off.Handle(batch);
  for (const auto& r : off_store.recorded) {
    EXPECT_FALSE(r.log) << "the archive is off";
    EXPECT_EQ(r.pull_log_at_ms, 0);
  }
}

TEST(OutputArchive, WhichFiresWithoutALogArePulledFollowsTheSettingFailedOnesByDefaultInTheAdmin) {
  cwtest::FakeClock clock{kT0};
  const std::vector<cronwheel::xxljob::HandleCallbackParam> batch{{.log_id = 1, .handle_code = 200},
                                                                  {.log_id = 2, .handle_code = 500},
                                                                  {.log_id = 3, .handle_code = 502}};
  const auto pulled = [&](CallbackOutputSettings::Pull pull) {
    FakeResultStore store;
    CallbackService callbacks(clock, store, "node-a", [](const std::vector<Fire>&) {},
                              {.max_bytes = 1024, .pull = pull});
    callbacks.Handle(batch);
    std::vector<std::int64_t> ids;
    for (const auto& r : store.recorded) {
      if (r.pull_log_at_ms > 0) ids.push_back(r.log_id);
    }
    return ids;
  };
  using Pull = CallbackOutputSettings::Pull;
  EXPECT_EQ(pulled(Pull::kAll), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(pulled(Pull::kFailed), (std::vector<std::int64_t>{2, 3})) << "a success is not read back";
  EXPECT_TRUE(pulled(Pull::kNone).empty());
}

TEST(OutputArchive, APullReadsEveryPageUntilNothingNewComesAndKeepsHeadAndTail) {
  LogServingExecutor executor;
  executor.logs[7] = Lines(1, 250);
  executor.page_lines = 100;
  const OutputPull pull{
      .log_id = 7, .scheduled_ms = kT0, .executor_address = "http://e:9999/", .log_date_ms = 5};
  const auto r = PullLog(executor, "tok", pull, 1 << 20, 4 << 20);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.log.content, Lines(1, 250));
  EXPECT_EQ(r.log.left_out, 0);
  ASSERT_EQ(executor.requests.size(), 4U) << "lines 1, 101, 201, then 251 brings nothing";
  EXPECT_EQ(executor.requests[0].param.from_line_num, 1);
  EXPECT_EQ(executor.requests[1].param.from_line_num, 101);
  EXPECT_EQ(executor.requests[3].param.from_line_num, 251);
  EXPECT_EQ(executor.requests[0].param.log_date_tim, 5) << "the fire's trigger_ms";
  EXPECT_EQ(executor.requests[0].token, "tok");

  executor.logs[8] = Lines(1, 20'000);  // 208,894 bytes
  const auto big = PullLog(executor, "", {.log_id = 8, .executor_address = "http://e:9999/"}, 4096, 1 << 20);
  ASSERT_TRUE(big.ok);
  EXPECT_THAT(big.log.content, HasSubstr("line 1\n"));
  EXPECT_THAT(big.log.content, HasSubstr("line 20000\n"));
  EXPECT_EQ(big.log.content, cronwheel::KeepHeadAndTail(Lines(1, 20'000), 4096).text);

  // At most max_transfer bytes are read: the rest is said to be left unread.
  const auto bounded =
      PullLog(executor, "", {.log_id = 8, .executor_address = "http://e:9999/"}, 4096, 50'000);
  ASSERT_TRUE(bounded.ok);
  EXPECT_THAT(bounded.log.content, HasSubstr("the rest of this log was not read"));
  EXPECT_THAT(bounded.log.content, Not(HasSubstr("line 20000\n")));
}

TEST(OutputArchive, APullThatFailsSaysWhichExecutorAndWhy) {
  LogServingExecutor executor;
  const auto missing =
      PullLog(executor, "", {.log_id = 9, .executor_address = "http://e:9999/"}, 4096, 1 << 20);
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.error,
            "the executor http://e:9999/ has no log of this fire: readLog fail, logFile not exists");
  EXPECT_TRUE(missing.final) << "the executor answered: asking again cannot help";
  executor.down = true;
  const auto down = PullLog(executor, "", {.log_id = 9, .executor_address = "http://e:9999/"}, 4096, 1 << 20);
  EXPECT_THAT(down.error,
              HasSubstr("the executor http://e:9999/ did not return the log: the executor could not be "
                        "reached (connection refused)"));
  EXPECT_FALSE(down.final) << "it may answer later";
  const auto nowhere = PullLog(executor, "", {.log_id = 9}, 4096, 1 << 20);
  EXPECT_THAT(nowhere.error, HasSubstr("no executor address"));
  EXPECT_EQ(executor.requests.size(), 2U) << "nothing is asked of no address";
}

TEST(OutputArchive, AFailedPullIsTriedAgainAfterTenThirtyAndNinetySecondsThenRecordedAsFailed) {
  cwtest::FakeClock clock{kT0};
  FakeResultStore store;
  LogServingExecutor executor;
  executor.down = true;
  OutputPuller puller({}, clock, store, executor, "global");
  store.Queue(1, kT0);
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_EQ(store.queue.at(1).due_ms, kT0 + 10'000);
  EXPECT_THAT(store.queue.at(1).error, HasSubstr("did not return the log"));
  EXPECT_EQ(puller.RunOnce(), 0) << "not due yet";
  clock.Advance(10s);
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_EQ(store.queue.at(1).due_ms, kT0 + 10'000 + 30'000);
  clock.Advance(30s);
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_EQ(store.queue.at(1).due_ms, kT0 + 40'000 + 90'000);
  clock.Advance(90s);
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_TRUE(store.queue.empty());
  ASSERT_TRUE(store.archived.contains(1));
  EXPECT_FALSE(store.archived.at(1).log);
  EXPECT_THAT(store.archived.at(1).error, HasSubstr("(after 4 attempt(s))"));
  EXPECT_EQ(puller.stats().retried, 3U);
  EXPECT_EQ(puller.stats().failed, 1U);
  EXPECT_EQ(executor.requests.back().token, "global") << "the group has no token of its own";

  // An executor that answers that it has no log of the fire: recorded at once, not tried again.
  executor.down = false;
  store.Queue(3, clock.NowMs());
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_THAT(store.archived.at(3).error, HasSubstr("has no log of this fire"));
  EXPECT_EQ(puller.stats().failed, 2U);
  EXPECT_EQ(puller.stats().retried, 3U);

  // Back up: the next one is archived at its first attempt.
  executor.logs[2] = "ok\n";
  store.Queue(2, clock.NowMs());
  EXPECT_EQ(puller.RunOnce(), 1);
  EXPECT_EQ(store.archived.at(2).log->content, "ok\n");
  EXPECT_EQ(puller.stats().archived, 1U);
}

TEST(OutputArchive, PullsRunOnAtMostTheirConcurrencyAndAFullBatchIsFollowedByAnother) {
  cwtest::FakeClock clock{kT0};
  FakeResultStore store;
  LogServingExecutor executor;
  executor.gate = 3;  // the first three requests are held until three are in flight
  for (int id = 1; id <= 10; ++id) {
    executor.logs[id] = "fire " + std::to_string(id) + "\n";
    store.Queue(id, kT0);
  }
  OutputPuller puller({.concurrency = 3, .batch = 4}, clock, store, executor, "");
  EXPECT_EQ(puller.RunOnce(), 10);
  EXPECT_EQ(store.claims, 3) << "4 + 4 + 2: a short batch ends the round";
  EXPECT_EQ(executor.most_in_flight, 3) << "three at once, never more";
  ASSERT_EQ(store.archived.size(), 10U);
  EXPECT_EQ(store.archived.at(7).log->content, "fire 7\n");
}

}  // namespace
