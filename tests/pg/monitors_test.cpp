#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "admin/results/callback_service.hpp"
#include "admin/results/failure_monitor.hpp"
#include "admin/results/lost_result_monitor.hpp"
#include "admin/results/registry_service.hpp"
#include "admin/results/report_monitor.hpp"
#include "admin/schedule/next_fire.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/store/fire_log.hpp"
#include "admin/store/pg_catalog_source.hpp"
#include "admin/store/pg_registry_store.hpp"
#include "admin/store/pg_result_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z, a UTC midnight

class RecordingAlarms final : public AlarmSender {
 public:
  AlarmOutcome Send(const AlarmEvent& e) override {
    events.push_back(e);
    if (e.alarm_email.empty() && e.alarm_webhook.empty() && e.channels.empty()) return {};
    return {.attempted = true, .ok = succeed, .message = succeed ? "sent" : "smtp down"};
  }
  bool succeed = true;
  std::vector<AlarmEvent> events;
};

// Answers beats from the addresses in `alive` only.
class BeatClient final : public cwtest::AnsweringExecutorClient {
 public:
  std::set<std::string> alive;
  xxljob::Envelope Beat(const std::string& a, const std::string&) override {
    return alive.contains(a) ? xxljob::Envelope::Success() : xxljob::Envelope::Fail("refused");
  }
};

class MonitorsPg : public cwtest::PgFixture {
 protected:
  // A fire row; returns its id.
  std::int64_t AddLog(int job, int group, const std::string& type, std::int64_t scheduled, int trigger_code,
                      int handle_code, int retry_count = 0, const std::string& address = "",
                      std::int64_t trigger_ms = 0) {
    return AddFire(job, group, type, scheduled, trigger_code, handle_code, retry_count, address, trigger_ms);
  }
  // What the admin records when a fire's trigger result and callback arrive (store/fire_log.hpp).
  void Record(std::int64_t log_id, int trigger_code, int handle_code) {
    auto conn = pool_->Acquire();
    pqxx::work tx(*conn);
    const auto row = tx.exec_params1(
        "SELECT scheduled_ms, retry_count, shard_index, shard_total FROM job_log WHERE id = $1", log_id);
    fire_log::RecordTriggerResults(tx, std::vector<TriggerResult>{{.log_id = log_id,
                                                                   .scheduled_ms = row[0].as<std::int64_t>(),
                                                                   .trigger_ms = clock_.NowMs(),
                                                                   .trigger_code = trigger_code,
                                                                   .shard_index = row[2].as<int>(),
                                                                   .shard_total = row[3].as<int>(),
                                                                   .retry_count = row[1].as<int>()}});
    if (handle_code != 0) {
      fire_log::RecordHandleResults(
          tx, std::vector<fire_log::HandleResult>{{.log_id = log_id, .handle_code = handle_code}},
          clock_.NowMs());
    }
    tx.commit();
  }
  cwtest::FakeClock clock_{kT0 + 3'600'000};
};

TEST_F(MonitorsPg, RegistrationsOlderThanNinetySecondsExpire) {
  PgRegistryStore registry_store(*pool_);
  RegistryService registry(clock_, registry_store);
  ASSERT_TRUE(registry.Register({"EXECUTOR", "app", "http://127.0.0.1:1/"}));
  clock_.Advance(std::chrono::seconds(60));
  ASSERT_TRUE(registry.Register({"EXECUTOR", "app", "http://127.0.0.1:2"}));
  clock_.Advance(std::chrono::seconds(31));
  EXPECT_EQ(registry.ExpireDead(), 1u);
  EXPECT_EQ(Exec("SELECT registry_value FROM executor_registry")[0][0].as<std::string>(),
            "http://127.0.0.1:2/");
}

TEST_F(MonitorsPg, ReportCountsEachUtcDay) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  const std::int64_t day = 86'400'000;
  AddLog(j, g, "CRON", kT0 + 10, 200, 200);           // today: success
  AddLog(j, g, "CRON", kT0 + 20, 200, 200);           // today: success
  AddLog(j, g, "CRON", kT0 + 30, 200, 0);             // today: running
  AddLog(j, g, "CRON", kT0 + 40, 0, 0);               // today: pending (counted running)
  AddLog(j, g, "CRON", kT0 + 50, 500, 0);             // today: failed
  AddLog(j, g, "CRON", kT0 - 5, 200, 502);            // yesterday: failed (timeout)
  AddLog(j, g, "CRON", kT0 - 2 * day + 1, 200, 200);  // two days ago
  AddLog(j, g, "CRON", kT0 - 3 * day + 1, 200, 200);  // three days ago: not recomputed
  PgResultStore store(*pool_);
  store.UpdateReport(clock_.NowMs(), 3);
  const auto rows =
      Exec("SELECT day::text, running_count, success_count, failed_count FROM log_report ORDER BY day");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0].as<std::string>(), "2025-12-30");
  EXPECT_EQ(rows[0][2].as<int>(), 1);
  EXPECT_EQ(rows[1][0].as<std::string>(), "2025-12-31");
  EXPECT_EQ(rows[1][3].as<int>(), 1);
  EXPECT_EQ(rows[2][0].as<std::string>(), "2026-01-01");
  EXPECT_EQ(rows[2][1].as<int>(), 2);
  EXPECT_EQ(rows[2][2].as<int>(), 2);
  EXPECT_EQ(rows[2][3].as<int>(), 1);
}

TEST_F(MonitorsPg, RetentionDeletesOldFiresInBatchesAndIsOffBelowThreeDays) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  for (int i = 0; i < 2500; ++i)
    AddLog(j, g, "MANUAL", kT0 - 10LL * 86'400'000 + i, 200, 200);
  AddLog(j, g, "MANUAL", kT0 - 86'400'000, 200, 200);
  PgResultStore store(*pool_);
  EXPECT_EQ(ReportMonitor(clock_, store, 2).ApplyRetention(clock_.NowMs()).default_rows, 0);
  EXPECT_EQ(ReportMonitor(clock_, store, 7).ApplyRetention(clock_.NowMs()).default_rows, 2500);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log"), 1);
}

TEST_F(MonitorsPg, ResultsLostOnGoneExecutorsAreFailedButNotOnLiveOnes) {
  const int autog = AddGroup("auto-app");
  const int manualg = AddGroup("manual-app", ", address_type, addresses",
                               ", 'MANUAL', '{http://127.0.0.1:7001/,http://127.0.0.1:7002/}'");
  const int ja = AddJob(autog, "* * * * * ?", 0);
  const int jm = AddJob(manualg, "* * * * * ?", 0);
  const auto old = clock_.NowMs() - std::int64_t{11} * 60'000;
  const auto gone_auto = AddLog(ja, autog, "MANUAL", old, 200, 0, 0, "http://127.0.0.1:7000/");
  const auto live_auto = AddLog(ja, autog, "MANUAL", old, 200, 0, 0, "http://127.0.0.1:7003/");
  const auto gone_manual = AddLog(jm, manualg, "MANUAL", old, 200, 0, 0, "http://127.0.0.1:7001/");
  const auto live_manual = AddLog(jm, manualg, "MANUAL", old, 200, 0, 0, "http://127.0.0.1:7002/");
  const auto recent =
      AddLog(ja, autog, "MANUAL", clock_.NowMs() - 60'000, 200, 0, 0, "http://127.0.0.1:7000/");
  PgRegistryStore registry_store(*pool_);
  RegistryService registry(clock_, registry_store);
  ASSERT_TRUE(registry.Register({"EXECUTOR", "auto-app", "http://127.0.0.1:7003/"}));
  PgCatalogSource catalog_source(*pool_);
  JobCatalog catalog({.listen = false}, clock_, catalog_source);
  catalog.RefreshRegistry();
  BeatClient client;
  client.alive = {"http://127.0.0.1:7002/"};  // the manual group's second executor answers /beat
  PgResultStore store(*pool_);
  LostResultMonitor monitor(clock_, store, catalog, client, "token");
  EXPECT_EQ(monitor.RunOnce(), 2);
  auto status = [&](std::int64_t id) {
    return Exec(fmt::format("SELECT status FROM job_log WHERE id = {}", id))[0][0].as<std::string>();
  };
  EXPECT_EQ(status(gone_auto), "FAILED");
  EXPECT_EQ(status(gone_manual), "FAILED");
  EXPECT_EQ(status(live_auto), "RUNNING");
  EXPECT_EQ(status(live_manual), "RUNNING")
      << "a manual group's executor is judged by /beat, not the registry";
  EXPECT_EQ(status(recent), "RUNNING");
  EXPECT_THAT(
      Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", gone_auto))[0][0].as<std::string>(),
      HasSubstr("Job result lost"));
}

TEST_F(MonitorsPg, FailuresAreRetriedWithBackoffThenAlarmed) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  Exec(fmt::format(
      "UPDATE job SET retry_count = 2, retry_backoff_s = 10, alarm_email = 'ops@example.com' WHERE id = {}",
      j));
  RecordingAlarms alarms;
  std::vector<std::pair<Fire, std::chrono::milliseconds>> scheduled;
  PgResultStore store(*pool_);
  FailureMonitor monitor(
      {.node_id = "node-a"}, clock_, store, alarms,
      [&](Fire f, std::chrono::milliseconds d) { scheduled.emplace_back(std::move(f), d); });
  const auto first = AddLog(j, g, "CRON", clock_.NowMs(), 200, 500, 2);
  auto round = monitor.RunOnce();
  EXPECT_EQ(round.claimed, 1);
  EXPECT_EQ(round.retries, 1);
  EXPECT_EQ(round.alarms_sent, 0) << "a retry follows: no alarm yet";
  ASSERT_EQ(scheduled.size(), 1u);
  EXPECT_EQ(scheduled[0].second, std::chrono::seconds(10));
  EXPECT_EQ(scheduled[0].first.type, TriggerType::kRetry);
  EXPECT_EQ(scheduled[0].first.retry_count, 1);
  const auto retry1 = scheduled[0].first.log_id;
  EXPECT_EQ(Exec(fmt::format("SELECT parent_log_id, scheduled_ms, owner_node FROM job_log WHERE id = {}",
                             retry1))[0][0]
                .as<std::int64_t>(),
            first);
  EXPECT_EQ(Exec(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", first))[0][0].as<int>(), 1);
  EXPECT_EQ(monitor.RunOnce().claimed, 0) << "a failure is handled once";
  // The retry fails too: the second back-off doubles; the last retry has none left.
  Record(retry1, 200, 500);
  monitor.RunOnce();
  ASSERT_EQ(scheduled.size(), 2u);
  EXPECT_EQ(scheduled[1].second, std::chrono::seconds(20));
  EXPECT_EQ(scheduled[1].first.retry_count, 0);
  Record(scheduled[1].first.log_id, 500, 0);
  alarms.succeed = false;
  round = monitor.RunOnce();
  EXPECT_EQ(round.retries, 0);
  EXPECT_EQ(round.alarms_failed, 1) << "the final failure is alarmed";
  ASSERT_EQ(alarms.events.size(), 1u);
  EXPECT_EQ(alarms.events[0].log_id, scheduled[1].first.log_id);
  EXPECT_EQ(
      Exec(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", scheduled[1].first.log_id))[0][0]
          .as<int>(),
      3);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE trigger_type = 'RETRY'"), 2);
}

TEST_F(MonitorsPg, AFailureAlertsTheChannelsOfItsJobAndOfItsGroupEachOnce) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  const auto channel = [&](const std::string& name) {
    return Count(
        fmt::format("INSERT INTO alert_channel (name, kind, target, created_ms, updated_ms)"
                    " VALUES ('{}', 'EMAIL', '{}@example.com', 0, 0) RETURNING id",
                    name, name));
  };
  const int team = channel("team");
  const int shared = channel("shared");
  const int unused = channel("unused");
  Exec(fmt::format("UPDATE job SET alert_channel_ids = '{{{},{}}}' WHERE id = {}", team, shared, j));
  Exec(fmt::format("UPDATE job_group SET alert_channel_ids = '{{{}}}' WHERE id = {}", shared, g));
  (void)unused;
  RecordingAlarms alarms;
  PgResultStore store(*pool_);
  FailureMonitor monitor({.node_id = "node-a"}, clock_, store, alarms,
                         [](const Fire&, std::chrono::milliseconds) {});
  const auto id = AddLog(j, g, "CRON", clock_.NowMs(), 200, 500);
  const auto round = monitor.RunOnce();
  EXPECT_EQ(round.alarms_sent, 1);
  std::vector<std::string> names;
  for (const auto& e : alarms.events) {
    for (const auto& c : e.channels)
      names.push_back(c.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"team", "shared"})) << "each once, by id";
  ASSERT_EQ(alarms.events.size(), 3u) << "the job's own alarm settings (none), then a send per channel";
  EXPECT_EQ(alarms.events[1].channels[0].target, "team@example.com");
  EXPECT_EQ(Exec(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", id))[0][0].as<int>(), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'SENT'"), 2);
}

TEST_F(MonitorsPg, ASilenceWindowHoldsAlertsBackAndAFailedDeliveryIsSentAgainAfterABackOff) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  const int ch = Count(
      "INSERT INTO alert_channel (name, kind, target, threshold, silence_s, created_ms, updated_ms)"
      " VALUES ('ops', 'EMAIL', 'ops@example.com', 2, 60, 0, 0) RETURNING id");
  Exec(fmt::format("UPDATE job SET alert_channel_ids = '{{{}}}' WHERE id = {}", ch, j));
  RecordingAlarms alarms;
  PgResultStore store(*pool_);
  FailureMonitor monitor({.node_id = "node-a"}, clock_, store, alarms,
                         [](const Fire&, std::chrono::milliseconds) {});
  const auto sends = [&] {
    return std::count_if(alarms.events.begin(), alarms.events.end(),
                         [](const AlarmEvent& e) { return !e.channels.empty(); });
  };
  // A job failing every second: the first failure is below the threshold of 2, the second alerts, the next
  // ones are held back for a minute, and the alert after the minute says how many.
  for (int s = 0; s < 65; ++s) {
    AddLog(j, g, "CRON", clock_.NowMs(), 200, 500);
    monitor.RunOnce();
    clock_.Advance(std::chrono::seconds(1));
  }
  EXPECT_EQ(sends(), 2);
  const auto last_alert = std::find_if(alarms.events.rbegin(), alarms.events.rend(),
                                       [](const AlarmEvent& e) { return !e.channels.empty(); });
  ASSERT_NE(last_alert, alarms.events.rend());
  EXPECT_EQ(last_alert->suppressed, 59) << "the second alert counts what the window held back";
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'BELOW_THRESHOLD'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'SUPPRESSED'"), 62);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'SENT'"), 2);
  // After a success the count starts again: the next failure is below the threshold, the one after alerts.
  AddLog(j, g, "CRON", clock_.NowMs(), 200, 200);
  clock_.Advance(std::chrono::seconds(61));
  alarms.succeed = false;  // the SMTP server is down
  AddLog(j, g, "CRON", clock_.NowMs(), 200, 500);
  monitor.RunOnce();
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'BELOW_THRESHOLD'"), 2);
  AddLog(j, g, "CRON", clock_.NowMs() + 1, 200, 500);
  monitor.RunOnce();
  // The delivery failed: recorded RETRYING, sent again after 10 s, then after 20 s more.
  ASSERT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'RETRYING'"), 1);
  const auto before = sends();
  clock_.Advance(std::chrono::seconds(9));
  EXPECT_EQ(monitor.RunOnce().alerts_retried, 0) << "not before its back-off";
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(monitor.RunOnce().alerts_retried, 1);
  EXPECT_EQ(sends(), before + 1);
  EXPECT_EQ(Count("SELECT attempts FROM alert_log WHERE outcome = 'RETRYING'"), 2);
  alarms.succeed = true;
  clock_.Advance(std::chrono::seconds(20));
  EXPECT_EQ(monitor.RunOnce().alerts_retried, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'RETRYING'"), 0);
  EXPECT_EQ(Count("SELECT attempts FROM alert_log ORDER BY id DESC LIMIT 1"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'SENT'"), 3);
}

TEST_F(MonitorsPg, AJobThatSucceedsAgainAfterAnAlertIsAnnouncedRecoveredOnceOnTheChannelsThatAskForIt) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  const int told = Count(
      "INSERT INTO alert_channel (name, kind, target, created_ms, updated_ms)"
      " VALUES ('told', 'EMAIL', 'ops@example.com', 0, 0) RETURNING id");
  const int quiet = Count(
      "INSERT INTO alert_channel (name, kind, target, events, created_ms, updated_ms)"
      " VALUES ('quiet', 'EMAIL', 'dba@example.com', '{FAILED}', 0, 0) RETURNING id");
  Exec(fmt::format("UPDATE job SET alert_channel_ids = '{{{},{}}}' WHERE id = {}", told, quiet, j));
  RecordingAlarms alarms;
  PgResultStore store(*pool_);
  FailureMonitor monitor({.node_id = "node-a"}, clock_, store, alarms,
                         [](const Fire&, std::chrono::milliseconds) {});
  AddLog(j, g, "CRON", clock_.NowMs(), 200, 500);
  AddLog(j, g, "CRON", clock_.NowMs() + 1000, 500, 0);
  monitor.RunOnce();
  EXPECT_EQ(Count("SELECT count(*) FROM alert_state WHERE alerted"), 2);
  EXPECT_EQ(monitor.RunOnce().recoveries, 0) << "no success yet";
  const auto ok = AddLog(j, g, "CRON", clock_.NowMs() + 2000, 200, 200);
  alarms.events.clear();
  EXPECT_EQ(monitor.RunOnce().recoveries, 1) << "the channel that asks for RECOVERED only";
  ASSERT_EQ(alarms.events.size(), 1u);
  const auto& e = alarms.events[0];
  EXPECT_EQ(e.event, "job_recovered");
  EXPECT_EQ(e.log_id, ok);
  EXPECT_EQ(e.streak, 2);
  EXPECT_EQ(e.channels.at(0).name, "told");
  EXPECT_EQ(Count("SELECT count(*) FROM alert_state WHERE alerted OR streak > 0"), 0) << "both states reset";
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE event = 'RECOVERED' AND outcome = 'SENT'"), 1);
  EXPECT_EQ(monitor.RunOnce().recoveries, 0) << "said once";
}

// Issue 25's misfire alert. An instant the scan skips (DO_NOTHING, a minute late) and one skipped when it was
// claimed late (the ring's path) are each alerted as MISFIRE to the channel that asks for it and no other,
// never retried, and not sent to the job's own alarm address (XXL-JOB's alarm is for failures). A FIX_DELAY
// job waiting for the fire that was skipped gets its next fire.
TEST_F(MonitorsPg, ASkippedInstantIsAlertedAsAMisfireAndAFixedDelayJobWaitingForItResumes) {
  const int g = AddGroup();
  const int late = AddJob(g, "* * * * * ?", clock_.NowMs() - 60'000);
  const int fixed = AddJob(g, "30", kAwaitingCompletion, "DO_NOTHING", "FIX_DELAY");
  const int misfires = Count(
      "INSERT INTO alert_channel (name, kind, target, created_ms, updated_ms)"
      " VALUES ('misfires', 'EMAIL', 'ops@example.com', 0, 0) RETURNING id");
  const int failures = Count(
      "INSERT INTO alert_channel (name, kind, target, events, created_ms, updated_ms)"
      " VALUES ('failures', 'EMAIL', 'dba@example.com', '{FAILED,RECOVERED}', 0, 0) RETURNING id");
  Exec(
      fmt::format("UPDATE job SET alert_channel_ids = '{{{},{}}}', alarm_email = 'legacy@example.com',"
                  " retry_count = 3 WHERE id IN ({}, {})",
                  misfires, failures, late, fixed));
  PgSchedulerStore scheduler(*pool_);
  ScanPlanner planner;
  scheduler.Scan("node-a", 100, clock_, planner);
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND status = 'SKIPPED'", late)),
            1);
  const auto pending = AddLog(fixed, g, "CRON", clock_.NowMs() - 10'000, 0, 0);
  scheduler.MarkSkipped(std::vector<std::int64_t>{pending}, "misfire: claimed for sending late; skipped");

  RecordingAlarms alarms;
  PgResultStore store(*pool_);
  int retried = 0;
  FailureMonitor monitor({.node_id = "node-a"}, clock_, store, alarms,
                         [&](const Fire&, std::chrono::milliseconds) { ++retried; });
  const auto round = monitor.RunOnce();
  EXPECT_EQ(round.claimed, 2);
  EXPECT_EQ(round.retries, 0);
  EXPECT_EQ(retried, 0) << "a skipped instant is not retried";
  EXPECT_EQ(round.alarms_sent, 2);
  int sent = 0;
  for (const auto& e : alarms.events) {
    EXPECT_EQ(e.event, "fire_skipped");
    EXPECT_TRUE(e.alarm_email.empty()) << "the job's own alarm address is for failures";
    EXPECT_THAT(e.trigger_msg, HasSubstr("misfire"));
    if (e.channels.empty()) continue;
    ++sent;
    ASSERT_EQ(e.channels.size(), 1u);
    EXPECT_EQ(e.channels[0].name, "misfires");
  }
  EXPECT_EQ(sent, 2);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM alert_log WHERE event = 'MISFIRE' AND outcome = 'SENT'"
                              " AND channel_id = {}",
                              misfires)),
            2);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM alert_log WHERE channel_id = {}", failures)), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE status = 'SKIPPED' AND alarm_status = 2"), 2);
  const auto next = NextFire(fixed);
  EXPECT_EQ(next, clock_.NowMs() + 30'000) << "the fixed delay counts from the skip";
  EXPECT_EQ(monitor.RunOnce().claimed, 0) << "each skipped instant is alerted once";
}

TEST_F(MonitorsPg, NoAlarmConfiguredMeansStatusOneAndStuckClaimsAreReleased) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  RecordingAlarms alarms;
  PgResultStore store(*pool_);
  FailureMonitor monitor({.node_id = "node-a"}, clock_, store, alarms,
                         [](const Fire&, std::chrono::milliseconds) {});
  const auto id = AddLog(j, g, "CRON", clock_.NowMs(), 500, 0);
  monitor.RunOnce();
  EXPECT_EQ(Exec(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", id))[0][0].as<int>(), 1);
  // Claimed an hour ago by an admin that stopped before it finished.
  const auto stuck = AddLog(j, g, "CRON", clock_.NowMs() - 3'600'000, 500, 0);
  Exec(fmt::format("UPDATE fire_alarm SET claimed_by = 'node-gone', claimed_ms = {} WHERE log_id = {}",
                   clock_.NowMs() - 3'600'000, stuck));
  monitor.RunOnce();
  EXPECT_EQ(Exec(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", stuck))[0][0].as<int>(), 3);
}

TEST_F(MonitorsPg, ABroadcastExpandsIntoOneRowPerShardOnce) {
  const int g = AddGroup();
  const int j = AddJob(g, "* * * * * ?", 0);
  const auto base = AddLog(j, g, "CRON", kT0, 0, 0);
  PgSchedulerStore store(*pool_);
  const auto ids = store.CreateShards(base, 3, "node-a", kT0);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], base);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE shard_total = 3"), 3);
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job_log WHERE id = {} AND shard_index = 2 AND dispatch_ms > 0",
                        ids[2])),
      1);
  EXPECT_EQ(store.CreateShards(base, 3, "node-a", kT0).size(), 1u)
      << "a recovered fire is not expanded twice";
  EXPECT_EQ(Count("SELECT count(*) FROM job_log"), 3);
}

// The child jobs of a broadcast fire run once, after all its shards: not after each successful shard
// (XXL-JOB), not while a shard has failed, and after a retry of the failed shard succeeds. Two callbacks
// recording the last two shards at the same moment fire the children exactly once.
TEST_F(MonitorsPg, ABroadcastsChildJobsFireOnceAfterAllItsShardsSucceedCountingARetriedShard) {
  const int g = AddGroup();
  const int parent = AddJob(g, "* * * * * ?", 0);
  const int child = AddJob(g, "0 0 0 1 1 ? 2099", 0);
  Exec(fmt::format(
      "UPDATE job SET child_job_ids = '{{{}}}', retry_count = 1, retry_backoff_s = 10 WHERE id = {}", child,
      parent));
  PgSchedulerStore scheduler(*pool_);
  PgResultStore results(*pool_);
  const auto children_of = [&](std::int64_t base) {
    return Count(
        fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND parent_log_id = {}", child, base));
  };
  // Each shard returns its index as output, which the child's parameter takes whole (data passing: a JSON
  // parameter takes the array as a value and the message as a string, admin/model/parent_refs.hpp).
  Exec(fmt::format("UPDATE job SET param = '{}' WHERE id = {}",
                   R"({"outputs": {{parent.output}}, "first": "{{parent.handle_msg}}"})", child));
  const auto callback = [&](std::int64_t log_id, int code) {
    const auto shard = Count(fmt::format("SELECT shard_index FROM job_log WHERE id = {}", log_id));
    return results.RecordCallbacks(
        std::vector<HandleResult>{{.log_id = log_id,
                                   .handle_code = code,
                                   .handle_msg = fmt::format("shard {}", shard),
                                   .output = fmt::format(R"({{"shard":{}}})", shard)}},
        "node-a", clock_.NowMs());
  };

  const auto base = AddLog(parent, g, "CRON", kT0, 0, 0, 1);
  const auto shards = scheduler.CreateShards(base, 3, "node-a", kT0);
  ASSERT_EQ(shards.size(), 3u);
  for (const auto id : shards)
    Record(id, 200, 0);
  EXPECT_TRUE(callback(shards[0], 200).children.empty()) << "shard 0 of 3";
  EXPECT_TRUE(callback(shards[1], 500).children.empty()) << "shard 1 failed";
  EXPECT_TRUE(callback(shards[2], 200).children.empty()) << "the last one, but shard 1 failed";
  EXPECT_EQ(children_of(base), 0);

  // The failed shard is retried (its own shard index, in the same broadcast) and succeeds: now all have.
  RecordingAlarms alarms;
  std::vector<Fire> retries;
  FailureMonitor monitor({.node_id = "node-a"}, clock_, results, alarms,
                         [&](Fire f, std::chrono::milliseconds) { retries.push_back(std::move(f)); });
  ASSERT_EQ(monitor.RunOnce().retries, 1);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].shard_index, 1);
  Record(retries[0].log_id, 200, 0);
  const auto done = callback(retries[0].log_id, 200);
  ASSERT_EQ(done.children.size(), 1u);
  EXPECT_EQ(children_of(base), 1);
  EXPECT_EQ(done.children[0].param, R"({"outputs":[{"shard":0},{"shard":1},{"shard":2}],"first":"shard 0"})")
      << "the broadcast's output is its shards' by index, the retried shard's from its retry";
  EXPECT_THAT(
      Exec(fmt::format("SELECT trigger_msg FROM job_log WHERE id = {}", done.children[0].log_id))[0][0]
          .as<std::string>(),
      HasSubstr(fmt::format("all 3 shards of broadcast fire {} succeeded", base)));
  EXPECT_THAT(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", base))[0][0].as<std::string>(),
              HasSubstr(fmt::format("child job {}: fire {}", child, done.children[0].log_id)));

  // The last two shards' callbacks at once, on two connections: one of them fires the child.
  for (int round = 1; round <= 10; ++round) {
    const auto b = AddLog(parent, g, "CRON", kT0 + round * 1000LL, 0, 0);
    const auto ids = scheduler.CreateShards(b, 3, "node-a", kT0);
    for (const auto id : ids)
      Record(id, 200, 0);
    ASSERT_TRUE(callback(ids[0], 200).children.empty());
    auto one = std::async(std::launch::async, [&] { return callback(ids[1], 200).children.size(); });
    auto two = std::async(std::launch::async, [&] { return callback(ids[2], 200).children.size(); });
    EXPECT_EQ(one.get() + two.get(), 1u) << "round " << round;
    EXPECT_EQ(children_of(b), 1) << "round " << round;
  }
}

}  // namespace
