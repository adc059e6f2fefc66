#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "admin/catalog/calendar_service.hpp"
#include "admin/catalog/job_service.hpp"
#include "admin/schedule/node_lease.hpp"
#include "admin/store/fire_log.hpp"
#include "admin/store/pg_calendar_store.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_lease_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/process.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
// The lease threads never tick on their own within a test's fake time: the tests call Tick().
constexpr std::chrono::milliseconds kManual = std::chrono::hours(24);

class SchedulerStorePg : public cwtest::PgFixture {
 protected:
  // One enabled job in a new group, firing every second from kT0 + 1 s: a scan at kT0 writes its 5 fires.
  void AddEverySecondJob() { AddJob(AddGroup(), "* * * * * ?", kT0 + 1000); }
  // Waits (at most 10 s) until PostgreSQL has ended the session holding `node_id`'s advisory lock: closing
  // a connection returns before the server's backend has exited and released its session locks (seen
  // under ThreadSanitizer: a live admin looked before the lock was gone and rightly saw A alive).
  bool WaitForLockRelease(const std::string& node_id) {
    const auto sql = fmt::format(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = {} AND objid = {} AND "
        "objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        kNodeLockClass, NodeLease::LockKey(node_id));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Count(sql) > 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Admin `node_id`'s lease on `pool` (the test's database when null), started; the tests tick it.
  std::unique_ptr<NodeLease> StartLease(
      const std::string& node_id,
      NodeLease::OnRecovered on_recovered = [](const std::vector<ClaimedFire>&) {}, PgPool* pool = nullptr) {
    lease_stores_.push_back(std::make_unique<PgLeaseStore>(pool ? *pool : *pool_));
    // It judges its peers from its first round: these tests are about the SQL (NodeLeaseTest checks that a
    // node waits a lease first).
    auto lease = std::make_unique<NodeLease>(
        NodeLease::Settings{
            .node_id = node_id, .heartbeat = kManual, .judge_after = std::chrono::milliseconds(0)},
        clock_, *lease_stores_.back(), std::move(on_recovered));
    lease->Start();
    return lease;
  }
  // The fires one scan by `node_id` at the clock's instant writes (5 for AddEverySecondJob at kT0).
  std::vector<CommittedFire> ScanAs(const std::string& node_id) {
    PgSchedulerStore store(*pool_);
    ScanPlanner planner;
    return store.Scan(node_id, 10, clock_, planner).fires;
  }

  cwtest::FakeClock clock_{kT0};
  // The stores of the leases StartLease made (a lease releases its lock when it ends; its store outlives it).
  std::vector<std::unique_ptr<PgLeaseStore>> lease_stores_;
};

TEST_F(SchedulerStorePg, OneScanWritesExactlyThePlannedRowsAndNextTimes) {
  const int g = AddGroup();
  const int every = AddJob(g, "* * * * * ?", kT0 + 2000);
  const int later = AddJob(g, "0 0 * * * ?", kT0 + 3'600'000);  // not due within 5 s
  const int missed = AddJob(g, "* * * * * ?", kT0 - 60'000);    // a minute late: misfire
  const auto version = [&](int job) {
    return Exec("SELECT xmin::text FROM job WHERE id = " + std::to_string(job))[0][0].as<std::string>();
  };
  const auto every_version = version(every);
  cwtest::FakeClock clock(kT0 + 500);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto out = store.Scan("node-a", 100, clock, planner);
  EXPECT_EQ(version(every), every_version) << "the scan writes job_schedule, not the wide job row";
  EXPECT_EQ(out.now_ms, kT0 + 500);
  EXPECT_EQ(out.jobs_read, 2u);
  EXPECT_FALSE(out.full_batch);
  // Job `every`: T0+2..5 s (4 rows). Job `missed`: 1 skipped misfire row + T0-4.5s.. covered instants.
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(every) +
                  " AND trigger_type = 'CRON' AND status = 'PENDING' AND owner_node = 'node-a'"),
            4);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(missed) +
                  " AND status = 'SKIPPED'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(later)), 0);
  const auto next =
      Exec("SELECT next_fire_ms, last_fire_ms FROM job_schedule WHERE job_id = " + std::to_string(every));
  EXPECT_EQ(next[0][0].as<std::int64_t>(), kT0 + 6000);
  EXPECT_EQ(next[0][1].as<std::int64_t>(), kT0 + 5000);
  EXPECT_EQ(NextFire(later), kT0 + 3'600'000);
  // The returned fires are exactly the rows written.
  EXPECT_EQ(static_cast<int>(out.fires.size()), Count("SELECT count(*) FROM job_log"));
  // A second scan in the same second writes nothing new.
  const auto again = store.Scan("node-a", 100, clock, planner);
  EXPECT_TRUE(again.fires.empty());
}

// A stop wins every race with a scan (issue 48, item 0). The scan is held, deterministically, in the window
// that let a stop through: after it read the due jobs and while it inserts their fires, before its Advance
// (another session holds job B's row FOR UPDATE, and the insert's foreign-key check on B waits for it). A
// stop of job A in that window must wait for the scan's commit and then withdraw the fires it wrote; before
// the fix it committed at once, the scan's Advance then matched no row, and A's fires stayed to be sent.
TEST_F(SchedulerStorePg, AStopDuringAScanWaitsForItsCommitAndWithdrawsTheFiresItWrote) {
  const int g = AddGroup();
  const int a = AddJob(g, "* * * * * ?", kT0 + 1000);
  const int b = AddJob(g, "* * * * * ?", kT0 + 1000);
  pqxx::connection blocker(db_.dsn());
  pqxx::work hold(blocker);
  hold.exec_params("SELECT 1 FROM job WHERE id = $1 FOR UPDATE", b);
  const auto waiting_on_locks = [&](int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                 "current_database()") < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  auto scan = std::async(std::launch::async, [&] { return ScanAs("node-a").size(); });
  ASSERT_TRUE(waiting_on_locks(1)) << "the scan waits on job B's row";
  PgJobStore job_store(clock_, *pool_);
  JobService jobs(clock_, job_store);
  auto stop = std::async(std::launch::async, [&] { return static_cast<bool>(jobs.StopJob(a)); });
  ASSERT_TRUE(waiting_on_locks(2)) << "the stop waits for the scan's partition";
  hold.abort();
  EXPECT_EQ(scan.get(), 10u);  // 5 instants of each job
  EXPECT_TRUE(stop.get());
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(a)), 0)
      << "every fire of the stopped job was withdrawn";
  EXPECT_EQ(Count("SELECT count(*) FROM fire_open WHERE job_id = " + std::to_string(a)), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(b)), 5);
  EXPECT_EQ(NextFire(a), 0);
  // The other order: the stop holds the partition first; the scan skips it (SKIP LOCKED), and its next pass
  // reads the job stopped.
  const int c = AddJob(g, "* * * * * ?", kT0 + 1000);
  {
    pqxx::connection conn(db_.dsn());
    pqxx::work tx(conn);
    tx.exec_params(
        "SELECT id FROM schedule_partition WHERE id = $1 % (SELECT count(*) FROM schedule_partition) "
        "FOR UPDATE",
        c);
    const auto fires = ScanAs("node-b");
    EXPECT_TRUE(std::none_of(fires.begin(), fires.end(), [&](const auto& f) { return f.job_id == c; }));
    tx.exec_params("UPDATE job SET enabled = false WHERE id = $1", c);
    tx.exec_params("UPDATE job_schedule SET next_fire_ms = 0 WHERE job_id = $1", c);
    tx.commit();
  }
  ScanAs("node-b");
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(c)), 0);
}

// Issue 48, the claim window: an admin claims each second's fires 200 ms before the second. A stop committed
// after the claim and before the instant withdraws the claimed fire as it does the unclaimed ones of later
// instants, and names it in fire_withdrawn, which that admin reads at the instant before it sends; a fire
// whose instant passed before the stop is left to run.
TEST_F(SchedulerStorePg, AStopAfterTheClaimAndBeforeTheInstantNamesTheClaimedFireForItsAdmin) {
  const int g = AddGroup();
  const int a = AddJob(g, "* * * * * ?", kT0 + 1000);
  const auto fires = ScanAs("node-a");  // T0+1 s .. T0+5 s
  ASSERT_EQ(fires.size(), 5u);
  std::map<std::int64_t, std::int64_t> by_instant;
  for (const auto& f : fires)
    by_instant[f.scheduled_ms - kT0] = f.log_id;
  PgSchedulerStore store(*pool_);
  const std::vector<std::int64_t> claim{by_instant.at(1000), by_instant.at(2000)};
  ASSERT_EQ(store.ClaimForDispatch("node-a", claim, kT0 + 800, {}).size(), 2u);
  EXPECT_TRUE(store.WithdrawnAt(std::vector<std::int64_t>{kT0 + 1000, kT0 + 2000}).empty());
  clock_.Advance(std::chrono::milliseconds(1500));  // T0+1 s is past, T0+2 s to come
  PgJobStore job_store(clock_, *pool_);
  JobService jobs(clock_, job_store);
  ASSERT_TRUE(jobs.StopJob(a));
  EXPECT_EQ(store.WithdrawnAt(std::vector<std::int64_t>{kT0 + 2000}),
            std::vector<std::int64_t>{by_instant.at(2000)});
  EXPECT_TRUE(store.WithdrawnAt(std::vector<std::int64_t>{kT0 + 1000}).empty())
      << "the fire of T0+1 s was due before the stop";
  const auto rows =
      Exec(fmt::format("SELECT scheduled_ms - {}, status FROM job_log WHERE job_id = {} ORDER BY 1", kT0, a));
  ASSERT_EQ(rows.size(), 1u) << "the fires of T0+2..5 s are deleted";
  EXPECT_EQ(rows[0][0].as<std::int64_t>(), 1000);
  EXPECT_EQ(rows[0][1].as<std::string>(), "PENDING");
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE job_id = {}", a)), 1);
}

// An edit of a calendar a job follows wins the same race: the job's fires written under the old days for
// coming instants are withdrawn (the claimed one named for its admin), the job's walk starts again from the
// earliest of them, and the next scan plans those instants with the new days. A job that does not follow
// the calendar keeps its fires.
TEST_F(SchedulerStorePg, ACalendarEditWithdrawsTheFiresWrittenUnderTheOldDaysAndTheNextScanUsesTheNew) {
  const int g = AddGroup();
  const int follower = AddJob(g, "* * * * * ?", kT0 + 1000);
  const int other = AddJob(g, "* * * * * ?", kT0 + 1000);
  PgCalendarStore calendar_store(clock_, *pool_);
  CalendarService calendars(clock_, calendar_store);
  JobCalendar holidays{.name = "holidays", .days = {{.day = 20455, .name = "the 2nd"}}};  // 2026-01-02
  const auto created = calendars.Create(holidays);
  ASSERT_TRUE(created);
  Exec(fmt::format("UPDATE job SET calendar_ids = '{{{}}}' WHERE id = {}", created->id, follower));
  const auto rows = [&](int job) {
    return Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job));
  };
  // The fire of T0+1 s, claimed by node-a for its second.
  const auto claim_first = [&] {
    const auto id = Exec(fmt::format("SELECT id FROM job_log WHERE job_id = {} AND scheduled_ms = {}",
                                     follower, kT0 + 1000))[0][0]
                        .as<std::int64_t>();
    PgSchedulerStore store(*pool_);
    EXPECT_EQ(store.ClaimForDispatch("node-a", std::vector<std::int64_t>{id}, clock_.NowMs(), {}).size(), 1u);
    return id;
  };
  const auto set_days = [&](std::vector<CalendarDay> days) {
    ASSERT_TRUE(calendars.Update(created->id, [&](JobCalendar& c) -> Result<void> {
      c.days = days;
      return {};
    }));
  };
  ASSERT_EQ(ScanAs("node-a").size(), 10u);
  PgSchedulerStore store(*pool_);

  // An edit that still allows today: every fire of the follower written for a coming instant is withdrawn
  // (the claimed one named for node-a), and the next scan writes them again.
  const auto claimed = claim_first();
  clock_.Advance(std::chrono::milliseconds(100));
  set_days({{.day = 20455, .name = "the 2nd"}, {.day = 20456, .name = "the 3rd"}});
  EXPECT_EQ(store.WithdrawnAt(std::vector<std::int64_t>{kT0 + 1000}), std::vector<std::int64_t>{claimed});
  EXPECT_EQ(rows(follower), 0);
  EXPECT_EQ(NextFire(follower), kT0 + 1000) << "the walk starts again from the earliest withdrawn instant";
  EXPECT_EQ(rows(other), 5) << "a job that does not follow the calendar keeps its fires";
  ScanAs("node-a");
  EXPECT_EQ(rows(follower), 5) << "T0+1..5 s planned again: nothing lost";

  // An edit that excludes today: the next scan writes nothing for it and waits for tomorrow.
  const auto claimed_again = claim_first();
  clock_.Advance(std::chrono::milliseconds(100));
  set_days({{.day = 20454, .name = "New Year"}});
  const auto withdrawn = store.WithdrawnAt(std::vector<std::int64_t>{kT0 + 1000});
  EXPECT_THAT(withdrawn, ::testing::UnorderedElementsAre(claimed, claimed_again));
  ScanAs("node-a");
  EXPECT_EQ(rows(follower), 0) << "today is excluded now: no fire written";
  EXPECT_EQ(NextFire(follower), kT0 + 86'400'000) << "tomorrow's first second";
}

// Calendars and windows in the scan (issue 25): an every-second job whose calendar excludes today writes no
// fire and waits for tomorrow's first second; one whose window starts later waits for its start; one whose
// window has ended is stopped with the reason. No row is written for an excluded instant.
TEST_F(SchedulerStorePg, TheScanWritesNoFireOnAnExcludedDayOrOutsideTheWindow) {
  const int g = AddGroup();
  // kT0 is 2026-01-01T00:00:00Z, a Thursday; the calendar excludes that day in UTC.
  const int holiday =
      Exec(
          "INSERT INTO calendar (name, kind, time_zone, days, created_ms, updated_ms) VALUES ('new year', "
          "'EXCLUDE_DATES', 'UTC', '[{\"date\": \"2026-01-01\", \"name\": \"New Year\"}]', 0, 0) RETURNING "
          "id")[0][0]
          .as<int>();
  const int excluded = AddJob(g, "* * * * * ?", kT0 + 1000);
  const int later = AddJob(g, "* * * * * ?", kT0 + 1000);
  const int ended = AddJob(g, "* * * * * ?", kT0 + 1000);
  const int free = AddJob(g, "* * * * * ?", kT0 + 1000);
  Exec(fmt::format("UPDATE job SET calendar_ids = '{{{}}}' WHERE id = {}", holiday, excluded));
  Exec(fmt::format("UPDATE job SET start_ms = {} WHERE id = {}", kT0 + 3'600'000, later));
  Exec(fmt::format("UPDATE job SET end_ms = {} WHERE id = {}", kT0 + 500, ended));
  cwtest::FakeClock clock(kT0 + 500);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  store.Scan("node-a", 100, clock, planner);
  const auto rows = [&](int job) {
    return Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job));
  };
  const auto next = [&](int job) { return NextFire(job); };
  EXPECT_EQ(rows(free), 5) << "T0+1 s to T0+5 s";
  EXPECT_EQ(rows(excluded), 0);
  EXPECT_EQ(next(excluded), kT0 + 86'400'000) << "tomorrow's first second";
  EXPECT_EQ(rows(later), 0);
  EXPECT_EQ(next(later), kT0 + 3'600'000) << "its start";
  EXPECT_EQ(rows(ended), 0);
  const auto stopped = Exec(fmt::format("SELECT enabled, stop_reason FROM job WHERE id = {}", ended));
  EXPECT_FALSE(stopped[0][0].as<bool>());
  EXPECT_THAT(stopped[0][1].as<std::string>(), ::testing::HasSubstr("window and calendars"));
  EXPECT_EQ(next(ended), 0) << "a stopped job leaves the due index";
  // The next day, the excluded job's fires are written as any other's.
  cwtest::FakeClock tomorrow(kT0 + 86'400'000 - 2000);
  ScanPlanner again;
  store.Scan("node-a", 100, tomorrow, again);
  EXPECT_EQ(rows(excluded), 4) << "T0+1 d to T0+1 d+3 s: nothing of the excluded day";
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND scheduled_ms < {}",
                              excluded, kT0 + 86'400'000)),
            0);
}

TEST_F(SchedulerStorePg, TwoAdminsScanningConcurrentlyNeverWriteAnInstantTwice) {
  const int g = AddGroup();
  for (int i = 0; i < 50; ++i)
    AddJob(g, "* * * * * ?", kT0 + 1000);
  PgPool pool_b({.dsn = db_.dsn(), .size = 4});
  PgSchedulerStore a(*pool_), b(pool_b);
  cwtest::FakeClock clock(kT0);
  // Both admins scan each second for 20 seconds, at the same moments, on separate connections.
  for (int second = 0; second < 20; ++second) {
    ScanPlanner pa, pb;
    // As the schedule thread does, a full batch is followed by another scan at once.
    const auto scan = [&clock](PgSchedulerStore& store, const char* node, ScanPlanner& planner) {
      while (store.Scan(node, 30, clock, planner).full_batch) {
      }
    };
    auto fa = std::async(std::launch::async, [&] { scan(a, "node-a", pa); });
    auto fb = std::async(std::launch::async, [&] { scan(b, "node-b", pb); });
    fa.get();
    fb.get();
    clock.Advance(std::chrono::seconds(1));
  }
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT job_id, scheduled_ms FROM job_log GROUP BY 1, 2 HAVING "
                  "count(*) > 1) d"),
            0);
  // Every instant from T0+1 s to T0+24 s of every job is written exactly once.
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE trigger_type = 'CRON'"), 50 * 24);
}

TEST_F(SchedulerStorePg, MissingPartitionRowsStopScanning) {
  Exec("DELETE FROM schedule_partition");
  cwtest::FakeClock clock(kT0);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  EXPECT_THROW(store.Scan("node-a", 10, clock, planner), std::runtime_error);
}

// The admin's connections run without JIT (its statements are short; one planned over jit_above_cost spent
// 76 ms a call compiling) and with PostgreSQL checking every second that the admin is still there.
TEST_F(SchedulerStorePg, TheAdminsConnectionsRunWithoutJitAndCheckTheirClientEverySecond) {
  auto conn = pool_->Acquire();
  pqxx::nontransaction tx(*conn);
  EXPECT_EQ(tx.exec1("SHOW jit")[0].as<std::string>(), "off");
  EXPECT_EQ(tx.exec1("SHOW client_connection_check_interval")[0].as<std::string>(), "1s");
}

TEST_F(SchedulerStorePg, ClaimReturnsOnlyRowsThisNodeStillOwns) {
  AddEverySecondJob();
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto out = store.Scan("node-a", 10, clock_, planner);
  ASSERT_GE(out.fires.size(), 2u);
  std::vector<std::int64_t> ids{out.fires[0].log_id, out.fires[1].log_id};
  Exec("UPDATE fire_open SET owner_node = 'node-b' WHERE log_id = " + std::to_string(ids[1]));
  const auto claimed = store.ClaimForDispatch("node-a", ids, kT0 + 900, {});
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].log_id, ids[0]);
  EXPECT_TRUE(store.ClaimForDispatch("node-a", ids, kT0 + 900, {}).empty()) << "a claim is taken once";
  store.MarkSkipped(std::vector<std::int64_t>{ids[1]}, "misfire: test");
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE status = 'SKIPPED'"), 1);
}

TEST_F(SchedulerStorePg, ADeadAdminsPendingFiresAreReOwnedByALiveOne) {
  AddEverySecondJob();
  // Admin A registers, scans (writes pending rows), and dies: its lock connection goes away.
  auto a = StartLease("admin-a");
  const auto written = ScanAs("admin-a").size();
  ASSERT_EQ(written, 5u);
  a->Stop();
  a.reset();  // closes the connection holding A's advisory lock, as kill -9 would
  ASSERT_TRUE(WaitForLockRelease("admin-a"));

  std::vector<ClaimedFire> b_took;
  auto b = StartLease("admin-b", [&](std::vector<ClaimedFire> f) {
    std::move(f.begin(), f.end(), std::back_inserter(b_took));
  });
  b->Tick();
  EXPECT_TRUE(b_took.empty()) << "A's heartbeat is still fresh: within the grace it is not declared dead";
  clock_.Advance(std::chrono::seconds(3));
  b->Tick();
  EXPECT_EQ(b_took.size(), written);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log WHERE owner_node = 'admin-b'"), static_cast<int>(written));
  b->Tick();
  EXPECT_EQ(b_took.size(), written) << "taken once";
}

// Advisory locks belong to one database, and pg_locks lists those of every database on the server: an
// admin of the same name alive in another cronwheel database on the server does not keep a dead one alive
// here (two clusters on one server, or pg tests running in parallel, each in a database of its own).
TEST_F(SchedulerStorePg, AnAdminOfTheSameNameAliveInAnotherDatabaseKeepsNoDeadOneAlive) {
  AddEverySecondJob();
  auto a = StartLease("admin-a");
  ASSERT_EQ(ScanAs("admin-a").size(), 5u);
  a.reset();  // as kill -9
  ASSERT_TRUE(WaitForLockRelease("admin-a"));

  cwtest::TestDatabase other_db;
  PgPool other_pool({.dsn = other_db.dsn(), .size = 2});
  {
    auto conn = other_pool.Acquire();
    ApplyMigrations(*conn, BuiltInMigrations(), 1);
  }
  auto elsewhere = StartLease(
      "admin-a", [](const std::vector<ClaimedFire>&) {}, &other_pool);

  std::size_t b_took = 0;
  auto b = StartLease("admin-b", [&](const std::vector<ClaimedFire>& f) { b_took += f.size(); });
  clock_.Advance(std::chrono::seconds(3));
  b->Tick();
  EXPECT_EQ(b_took, 5u) << "admin-a's lock in " << other_db.name() << " says nothing of admin-a here";
}

// A fire with a trigger result, or with a callback that came before its batched trigger result, was
// delivered: recovery never sends it again (an executor that does not de-duplicate log ids would run it
// twice). A fire claimed for sending with neither is re-sent: its admin died sending it.
TEST_F(SchedulerStorePg, RecoveryNeverTakesAFireWithATriggerResultOrACallback) {
  AddEverySecondJob();
  auto a = StartLease("admin-a");
  const auto fires = ScanAs("admin-a");
  ASSERT_EQ(fires.size(), 5u);
  const auto ids = LogIds(fires);
  PgSchedulerStore store(*pool_);
  ASSERT_EQ(store.ClaimForDispatch("admin-a", ids, kT0 + 900, {}).size(), 5u);
  {
    // The trigger result of the first; callbacks of the next two that came before their trigger results.
    auto conn = pool_->Acquire();
    pqxx::work tx(*conn);
    fire_log::RecordTriggerResults(tx, std::vector<TriggerResult>{{.log_id = ids[0],
                                                                   .scheduled_ms = fires[0].scheduled_ms,
                                                                   .trigger_ms = kT0 + 900,
                                                                   .trigger_code = 200}});
    fire_log::RecordHandleResults(tx,
                                  std::vector<fire_log::HandleResult>{{.log_id = ids[1], .handle_code = 200},
                                                                      {.log_id = ids[2], .handle_code = 500}},
                                  kT0 + 950);
    tx.commit();
  }
  a->Stop();
  a.reset();  // as kill -9
  ASSERT_TRUE(WaitForLockRelease("admin-a"));

  std::vector<std::int64_t> b_took;
  auto b = StartLease("admin-b", [&](const std::vector<ClaimedFire>& f) {
    for (const auto& c : f)
      b_took.push_back(c.log_id);
  });
  clock_.Advance(std::chrono::seconds(3));
  b->Tick();
  std::sort(b_took.begin(), b_took.end());
  EXPECT_EQ(b_took, (std::vector<std::int64_t>{ids[3], ids[4]}));
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job_log WHERE owner_node = 'admin-a' AND id IN ({}, {}, {})",
                        ids[0], ids[1], ids[2])),
      3);
}

TEST_F(SchedulerStorePg, ALiveAdminIsNotDeclaredDeadAndARestartTakesBackItsOwnRows) {
  AddEverySecondJob();
  std::vector<ClaimedFire> took_a, took_b;
  const auto into = [](std::vector<ClaimedFire>& took) {
    return [&took](std::vector<ClaimedFire> f) { took = std::move(f); };
  };
  auto a = StartLease("admin-a", into(took_a));
  auto b = StartLease("admin-b", into(took_b));
  ScanAs("admin-a");
  clock_.Advance(std::chrono::seconds(5));
  b->Tick();
  EXPECT_TRUE(took_b.empty()) << "A holds its lock: alive even with a stale heartbeat";
  // Two processes with one node id: the second is refused.
  PgLeaseStore twin_store(*pool_);
  NodeLease twin({.node_id = "admin-a", .heartbeat = kManual}, clock_, twin_store,
                 [](const std::vector<ClaimedFire>&) {});
  EXPECT_THROW(twin.Start(), NodeConflict);
  // A restarts (same node id): it takes its pending rows back at once.
  a.reset();
  auto a2 = StartLease("admin-a", into(took_a));
  EXPECT_EQ(took_a.size(), 5u);
}

TEST_F(SchedulerStorePg, ARestartTakesBackItsRowsEvenWhenADeadTransactionStillLocksSome) {
  AddEverySecondJob();
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  ASSERT_EQ(store.Scan("admin-a", 10, clock_, planner).fires.size(), 5u);
  // A transaction of the dead run (its log writer, say) still holds a lock on one of the rows.
  pqxx::connection blocker_conn(db_.dsn());
  auto blocker = std::make_unique<pqxx::work>(blocker_conn);
  blocker->exec("SELECT id FROM job_log ORDER BY id LIMIT 1 FOR UPDATE");
  std::vector<ClaimedFire> took;
  PgLeaseStore a_store(*pool_);
  NodeLease a({.node_id = "admin-a", .heartbeat = kManual}, clock_, a_store,
              [&](std::vector<ClaimedFire> f) { took = std::move(f); });
  auto started = std::async(std::launch::async, [&] { a.Start(); });
  // The restart waits for the lock (it does not skip the row)...
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        return Count(
                   "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                   "current_database()") > 0;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20)));
  // ...and takes every row once the dead transaction is gone.
  blocker->abort();
  started.get();
  EXPECT_EQ(took.size(), 5u);
}

TEST_F(SchedulerStorePg, HandOverGivesPendingRowsToTheOtherAdmins) {
  AddEverySecondJob();
  auto a = StartLease("admin-a");
  std::vector<ClaimedFire> took_b;
  auto b = StartLease("admin-b", [&](std::vector<ClaimedFire> f) { took_b = std::move(f); });
  EXPECT_TRUE(a->AnotherNodeAlive());
  ScanAs("admin-a");
  EXPECT_EQ(a->HandOver({}), 5u);
  b->Tick();
  EXPECT_EQ(took_b.size(), 5u);
  EXPECT_EQ(Count("SELECT count(*) FROM admin_node WHERE node_id = 'admin-a'"), 0);
}

}  // namespace
