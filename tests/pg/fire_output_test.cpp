// The fire output archive's SQL (sql/029_fire_output.sql, store/fire_log.hpp, store/log_partitions.hpp):
//  * a callback's log is stored in the callback's own statement, lz4-compressed once large, once: a repeated
//    callback changes nothing; a callback without one queues a pull, unless the log is archived already;
//    a killed fire's late callback (a repeat of its result) still brings its log;
//    a callback naming no fire, or repeating an ended fire's result, stores and queues nothing;
//  * pulls are claimed once (SKIP LOCKED, a lease), retried with their error, archived or failed for good;
//  * the archive reads as archived, pending, failed or nothing;
//  * fire_output's days are created and dropped with job_log's; deleting fires deletes their output;
//  * retention also deletes old ended alerts and old fired or cancelled run-once requests;
//  * the archive's size for /metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "admin/catalog/job_service.hpp"
#include "admin/model/model.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/store/fire_log.hpp"
#include "admin/store/log_partitions.hpp"
#include "admin/store/log_repository.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_result_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using ::testing::HasSubstr;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr std::int64_t kDay = log_partitions::kDayMs;

class FireOutputPg : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    store_ = std::make_unique<PgResultStore>(*pool_);
    auto conn = pool_->Acquire();
    log_partitions::Ensure(*conn, kT0);
    group_ = AddGroup();
    job_ = AddJob(group_, "* * * * * ?", 0);
  }
  std::int64_t Running(std::int64_t scheduled = kT0 + 5) {
    return AddFire(job_, group_, "CRON", scheduled, 200, 0, 0, "http://127.0.0.1:9999/", scheduled + 3);
  }
  CallbacksRecorded Record(std::vector<HandleResult> results) {
    std::sort(results.begin(), results.end(),
              [](const auto& a, const auto& b) { return a.log_id < b.log_id; });
    return store_->RecordCallbacks(results, "node-a", kT0 + 10'000);
  }
  static HandleResult Pushed(std::int64_t id, std::string content, int code = 200) {
    const auto bytes = static_cast<std::int64_t>(content.size());
    return {.log_id = id,
            .handle_code = code,
            .handle_msg = "done",
            .log = ArchivedLog{.content = std::move(content), .log_bytes = bytes}};
  }
  FireOutputArchive Read(std::int64_t id) {
    LogRepository logs(clock_, *pool_);
    return logs.GetOutput(*logs.GetLog(id));
  }

  cwtest::FakeClock clock_{kT0};
  std::unique_ptr<PgResultStore> store_;  // on the pool SetUp makes
  int group_ = 0;
  int job_ = 0;
};

TEST_F(FireOutputPg, ACallbacksLogIsStoredCompressedWithItsResultOnceAndOneWithoutQueuesAPull) {
  const auto a = Running();
  const auto b = Running(kT0 + 1005);
  std::string big;  // 200 KB of a repetitive log: stored lz4-compressed
  for (int i = 0; i < 5000; ++i)
    big += "2026-01-01 00:00:00.000 processing record " + std::to_string(i % 50) + "\n";
  const auto done =
      Record({Pushed(a, big), {.log_id = b, .handle_code = 200, .pull_log_at_ms = kT0 + 11'000}});
  ASSERT_EQ(done.recorded.size(), 2U);
  auto row = Exec(fmt::format(
      "SELECT via, archived_ms, log_bytes, left_out_bytes, content = '{}', pg_column_compression(content), "
      "pg_column_size(content) FROM fire_output WHERE log_id = {}",
      big, a));
  ASSERT_EQ(row.size(), 1U);
  EXPECT_EQ(row[0][0].as<std::string>(), "push");
  EXPECT_EQ(row[0][1].as<std::int64_t>(), kT0 + 10'000);
  EXPECT_EQ(row[0][2].as<std::int64_t>(), static_cast<std::int64_t>(big.size()));
  EXPECT_TRUE(row[0][4].as<bool>());
  EXPECT_EQ(row[0][5].as<std::string>(), "lz4");
  EXPECT_LT(row[0][6].as<std::int64_t>(), static_cast<std::int64_t>(big.size()) / 5) << "compressed";
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_p20260101"), 1) << "in its day's partition";
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_output_pull WHERE log_id = {} AND due_ms = {}", b,
                              kT0 + 11'000)),
            1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_output_pull WHERE log_id = {}", a)), 0);

  // A repeated callback (another log, even): nothing changes, and no pull of an archived log is queued.
  Record({{.log_id = a, .handle_code = 200, .pull_log_at_ms = kT0}});
  Record({Pushed(a, "other\n")});
  EXPECT_EQ(Exec(fmt::format("SELECT content FROM fire_output WHERE log_id = {}", a))[0][0].as<std::string>(),
            big);
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output"), 1);

  // A fire killed from the console first: its executor's callback is a repeat of its result, and still
  // brings its log.
  const auto killed = Running(kT0 + 2005);
  {
    auto conn = pool_->Acquire();
    pqxx::work tx(*conn);
    ASSERT_TRUE(fire_log::MarkKilled(tx, killed, kT0 + 9000, "by admin"));
    tx.commit();
  }
  EXPECT_TRUE(Record({Pushed(killed, "killed while working\n", 500)}).recorded.empty()) << "a repeat";
  EXPECT_EQ(Read(killed).content, "killed while working\n");
  EXPECT_THAT(
      Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", killed))[0][0].as<std::string>(),
      HasSubstr("Manual operation, kill job"))
      << "its result stays the kill's";
}

// A NUL byte in a callback's message or log failed the whole batch's statement (PostgreSQL's text refuses
// \u0000), so the executor sent the batch again for ever: now it is recorded, each NUL as U+FFFD.
TEST_F(FireOutputPg, ACallbackWithNulBytesInItsMessageAndLogIsRecorded) {
  const auto id = Running();
  CallbackService callbacks(clock_, *store_, "node-a", [](const std::vector<Fire>&) {});
  cronwheel::xxljob::HandleCallbackParam cb{
      .log_id = id, .handle_code = 200, .handle_msg = std::string("a\0b", 3)};
  cb.job_log =
      cronwheel::xxljob::HandleCallbackParam::JobLog{.content = std::string("x\0y\n", 4), .bytes = 4};
  const auto outcome = callbacks.Handle(std::vector<cronwheel::xxljob::HandleCallbackParam>{cb});
  EXPECT_EQ(outcome.recorded, 1);
  EXPECT_EQ(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", id))[0][0].as<std::string>(),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(Read(id).content,
            "x\xEF\xBF\xBD"
            "y\n");
}

TEST_F(FireOutputPg, ACallbackNamingNoFireOrRepeatingAnEndedFiresResultArchivesAndQueuesNothing) {
  // Bad input changes no state: a log id of no fire, with a log and without one; and a repeat, without a
  // log, of the result of a fire that has ended (XXL-JOB's executors repeat callbacks).
  const auto ended = AddFire(job_, group_, "CRON", kT0 + 5, 200, 200, 0, "http://127.0.0.1:9999/", kT0 + 8);
  const auto done = Record({Pushed(987'654, "a log of no fire\n"),
                            {.log_id = 987'655, .handle_code = 200, .pull_log_at_ms = kT0 + 11'000},
                            {.log_id = ended, .handle_code = 200, .pull_log_at_ms = kT0 + 11'000}});
  EXPECT_TRUE(done.recorded.empty());
  EXPECT_EQ(Exec("SELECT count(*) FROM fire_output")[0][0].as<int>(), 0);
  EXPECT_EQ(Exec("SELECT count(*) FROM fire_output_pull")[0][0].as<int>(), 0);
}

TEST_F(FireOutputPg, PullsAreClaimedOnceRetriedWithTheirErrorThenArchivedOrFailedForGood) {
  const auto a = Running();
  const auto b = Running(kT0 + 1005);
  const auto c = Running(kT0 + 2005);
  Record({{.log_id = a, .handle_code = 200, .pull_log_at_ms = kT0 + 11'000},
          {.log_id = b, .handle_code = 500, .pull_log_at_ms = kT0 + 11'000},
          {.log_id = c, .handle_code = 200, .pull_log_at_ms = kT0 + 60'000}});
  EXPECT_TRUE(store_->ClaimOutputPulls(kT0 + 10'999, 300'000, 10).empty()) << "not due yet";
  auto claimed = store_->ClaimOutputPulls(kT0 + 11'000, 300'000, 10);
  ASSERT_EQ(claimed.size(), 2U);
  EXPECT_EQ(claimed[0].log_id, a);
  EXPECT_EQ(claimed[0].attempts, 1);
  EXPECT_EQ(claimed[0].executor_address, "http://127.0.0.1:9999/");
  EXPECT_EQ(claimed[0].log_date_ms, kT0 + 8) << "its trigger_ms";
  EXPECT_FALSE(claimed[0].group_token) << "the group has no token of its own";
  EXPECT_EQ(Read(a).state, FireOutputArchive::State::kPending);
  EXPECT_TRUE(store_->ClaimOutputPulls(kT0 + 12'000, 300'000, 10).empty()) << "claimed: leased for 5 minutes";

  // a is archived; b failed and is retried in 10 s.
  const std::vector<PulledOutput> first{
      {.log_id = a, .scheduled_ms = kT0 + 5, .log = ArchivedLog{.content = "pulled\n", .log_bytes = 7}},
      {.log_id = b, .scheduled_ms = kT0 + 1005, .error = "connection refused", .retry_at_ms = kT0 + 21'000}};
  store_->FinishOutputPulls(first, kT0 + 11'500);
  auto archived = Read(a);
  EXPECT_EQ(archived.state, FireOutputArchive::State::kArchived);
  EXPECT_EQ(archived.via, "pull");
  EXPECT_EQ(archived.content, "pulled\n");
  EXPECT_EQ(archived.archived_ms, kT0 + 11'500);
  auto pending = Read(b);
  EXPECT_EQ(pending.state, FireOutputArchive::State::kPending);
  EXPECT_EQ(pending.attempts, 1);
  EXPECT_EQ(pending.error, "connection refused");
  claimed = store_->ClaimOutputPulls(kT0 + 21'000, 300'000, 10);
  ASSERT_EQ(claimed.size(), 1U);
  EXPECT_EQ(claimed[0].log_id, b);
  EXPECT_EQ(claimed[0].attempts, 2);
  const std::vector<PulledOutput> last{
      {.log_id = b, .scheduled_ms = kT0 + 1005, .error = "connection refused (after 2 attempt(s))"}};
  store_->FinishOutputPulls(last, kT0 + 21'500);
  const auto failed = Read(b);
  EXPECT_EQ(failed.state, FireOutputArchive::State::kFailed);
  EXPECT_EQ(failed.error, "connection refused (after 2 attempt(s))");
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_pull"), 1) << "c waits for its instant";
  EXPECT_EQ(Read(Running(kT0 + 3005)).state, FireOutputArchive::State::kNone);

  // A claim an admin never finished is taken again once its lease is over.
  EXPECT_EQ(store_->ClaimOutputPulls(kT0 + 60'000, 1'000, 10).size(), 1U);
  EXPECT_TRUE(store_->ClaimOutputPulls(kT0 + 60'500, 1'000, 10).empty());
  EXPECT_EQ(store_->ClaimOutputPulls(kT0 + 61'000, 1'000, 10).size(), 1U);
}

TEST_F(FireOutputPg, TheArchivesDaysGoWithTheFiresDaysAndDeletedFiresTakeTheirOutput) {
  auto conn = pool_->Acquire();
  {
    pqxx::read_transaction tx(*conn);
    const auto parts = log_partitions::List(tx, "fire_output");
    ASSERT_EQ(parts.size(), 3U);
    EXPECT_EQ(parts[0].name, "fire_output_p20260101");
    EXPECT_EQ(parts[2].to_ms, kT0 + 3 * kDay);
  }
  // An output of 5 January (no partition yet: the default one) moves into its day when it is created.
  const auto later = Running(kT0 + 4 * kDay + 5);
  Record({Pushed(later, "later\n")});
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_default"), 1);
  EXPECT_EQ(log_partitions::Ensure(*conn, kT0 + 4 * kDay), 3) << "5, 6 and 7 January";
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_default"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_p20260105"), 1);

  const auto old = Running();
  const auto old_pull = Running(kT0 + 1005);
  Record({Pushed(old, "old\n"), {.log_id = old_pull, .handle_code = 200, .pull_log_at_ms = kT0 + 1}});
  const auto dropped = log_partitions::DropBefore(*conn, kT0 + 2 * kDay);
  EXPECT_EQ(dropped.partitions, 2) << "job_log's days";
  EXPECT_EQ(Count("SELECT count(*) FROM pg_class WHERE relname IN ('fire_output_p20260101', "
                  "'fire_output_p20260102')"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output_pull"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output"), 1) << "5 January's stays";

  // Deleting a job, or clearing its finished fires, deletes their archived output too.
  PgJobStore job_store(clock_, *pool_);
  JobService jobs(clock_, job_store);
  const int other = AddJob(group_, "* * * * * ?", 0);
  const auto cleared =
      AddFire(other, group_, "CRON", kT0 + 2 * kDay + 5, 200, 0, 0, "http://127.0.0.1:9999/");
  Record({Pushed(cleared, "cleared\n")});
  LogRepository logs(clock_, *pool_);
  EXPECT_EQ(logs.ClearLogs(LogClear{.job_id = other, .keep_last = 0}), 1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_output WHERE log_id = {}", cleared)), 0);
  ASSERT_TRUE(jobs.DeleteJob(job_));
  EXPECT_EQ(Count("SELECT count(*) FROM fire_output"), 0);
}

TEST_F(FireOutputPg, RetentionAlsoDeletesOldEndedAlertsFiredOrCancelledRunOnceRequestsAndWithdrawals) {
  for (const char* outcome : {"SENT", "FAILED", "RETRYING"}) {
    Exec(fmt::format(
        "INSERT INTO alert_log (job_id, channel_id, channel_name, log_id, event, outcome, created_ms, "
        "updated_ms) VALUES ({}, 1, 'c', 1, 'FAILED', '{}', {}, {})",
        job_, outcome, kT0, kT0));
  }
  Exec(fmt::format(
      "INSERT INTO alert_log (job_id, channel_id, channel_name, log_id, event, outcome, created_ms, "
      "updated_ms) VALUES ({}, 1, 'c', 1, 'FAILED', 'SENT', {}, {})",
      job_, kT0 + 3 * kDay, kT0 + 3 * kDay));
  const auto once = [&](std::int64_t at, std::int64_t log_id, std::int64_t cancelled) {
    Exec(fmt::format(
        "INSERT INTO run_once (job_id, fire_at_ms, log_id, cancelled_ms, created_ms) VALUES ({}, {}, "
        "{}, {}, {})",
        job_, at, log_id, cancelled, at));
  };
  once(kT0, 7, 0);             // fired, old: goes
  once(kT0, 0, kT0);           // cancelled, old: goes
  once(kT0, 0, 0);             // still waiting: stays
  once(kT0 + 3 * kDay, 8, 0);  // fired, recent: stays
  Exec(
      fmt::format("INSERT INTO fire_withdrawn (log_id, scheduled_ms, job_id, withdrawn_ms) VALUES "
                  "(1, {0}, {2}, {0}), (2, {1}, {2}, {1})",
                  kT0, kT0 + 3 * kDay, job_));
  const auto removed = store_->DropFiresBefore(kT0 + 2 * kDay, 1);  // one row a transaction
  EXPECT_EQ(removed.alerts, 2);
  EXPECT_EQ(removed.run_onces, 2);
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log WHERE outcome = 'RETRYING'"), 1) << "still being delivered";
  EXPECT_EQ(Count("SELECT count(*) FROM alert_log"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM run_once"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM run_once WHERE log_id = 0 AND cancelled_ms = 0"), 1);
  EXPECT_EQ(removed.withdrawals, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM fire_withdrawn"), 1) << "the recent withdrawal stays";
}

TEST_F(FireOutputPg, TheArchivesSizeCountsItsBytesRowsAndQueuedPulls) {
  Record({Pushed(Running(), std::string(50'000, 'x') + "\n"),
          {.log_id = Running(kT0 + 1005), .handle_code = 200, .pull_log_at_ms = kT0}});
  auto conn = pool_->Acquire();
  pqxx::read_transaction tx(*conn);
  const auto size = fire_log::MeasureArchive(tx);
  EXPECT_GT(size.bytes, 0);
  EXPECT_EQ(size.rows, 1) << "counted: its partition was never analyzed";
  EXPECT_EQ(size.pulls_queued, 1);
}

}  // namespace
