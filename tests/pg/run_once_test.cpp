// Run once (table run_once, docs/operations.md "Run once"): a request waits durably until the scan of its
// job's schedule partition writes it as a MANUAL fire, once, whichever admin scans; it can be cancelled until
// an admin claims its fire for sending.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "admin/catalog/job_service.hpp"
#include "admin/model/fire.hpp"
#include "admin/schedule/node_lease.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_lease_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using std::chrono::seconds;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class RunOncePg : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    store_ = std::make_unique<PgSchedulerStore>(*pool_);
    job_store_ = std::make_unique<PgJobStore>(clock_, *pool_);
    jobs_ = std::make_unique<JobService>(clock_, *job_store_);
    // A stopped job: only its run-once requests fire it.
    job_ = AddJob(AddGroup(), "0 0 0 1 1 ?", kT0 + 86'400'000);
    Exec(fmt::format("UPDATE job SET enabled = false, param = 'own', retry_count = 2 WHERE id = {}", job_));
    SetNextFire(job_, 0);
  }
  RunOnce Ask(std::int64_t at_ms, const std::optional<std::string>& param = std::nullopt) {
    auto r = jobs_->CreateRunOnce(job_, at_ms, param, "alice");
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : RunOnce{};
  }
  std::vector<CommittedFire> ScanAs(const std::string& node_id) {
    ScanPlanner planner;
    return store_->Scan(node_id, 100, clock_, planner).fires;
  }
  std::string LogText(std::int64_t log_id, const std::string& column) {
    return Exec(fmt::format("SELECT {}::text FROM job_log WHERE id = {}", column, log_id))[0][0]
        .as<std::string>();
  }

  cwtest::FakeClock clock_{kT0};
  std::unique_ptr<PgSchedulerStore> store_;
  std::unique_ptr<PgJobStore> job_store_;
  std::unique_ptr<JobService> jobs_;
  int job_ = 0;
};

TEST_F(RunOncePg, AScanWritesEachRequestDueWithinItsHorizonOnceAsAManualFireWithItsParameter) {
  const auto soon = Ask(kT0 + 3000, "p1");
  const auto later = Ask(kT0 + 60'000);  // the job's own parameter
  EXPECT_EQ(soon.State(), "WAITING");

  const auto first = ScanAs("admin-a");
  ASSERT_EQ(first.size(), 1u) << "only the request within pre_read (5 s) is written";
  EXPECT_EQ(first[0].job_id, job_);
  EXPECT_EQ(first[0].scheduled_ms, kT0 + 3000) << "at its instant: the time ring sends it at that second";
  EXPECT_EQ(first[0].type, TriggerType::kManual);
  EXPECT_EQ(first[0].param, "p1");
  EXPECT_EQ(LogText(first[0].log_id, "executor_param"), "p1");
  EXPECT_EQ(LogText(first[0].log_id, "retry_count"), "2") << "the job's retries";
  EXPECT_EQ(LogText(first[0].log_id, "trigger_msg"), fmt::format("Run once {}, asked by alice", soon.id));
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", first[0].log_id)), 1);
  auto listed = jobs_->ListRunOnce(job_, 10);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, later.id) << "latest instant first";
  EXPECT_EQ(listed[1].State(), "FIRED");
  EXPECT_EQ(listed[1].log_id, first[0].log_id);

  EXPECT_TRUE(ScanAs("admin-a").empty()) << "written once";
  clock_.Advance(seconds(57));
  const auto second = ScanAs("admin-a");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].param, "own") << "no parameter asked: the job's own when it fires";
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job_)), 2);
}

// An admin that dies loses no request: one still waiting is written by whichever admin scans the partition
// next (a dead admin's partitions are taken after 1.5 s); one already written as a fire is re-owned by a
// live admin's recovery and sent once with its parameter, like any fire.
TEST_F(RunOncePg, RequestsOfAnAdminThatDiedAreFiredOnceByAnother) {
  Ask(kT0 + 30'000, "w");  // still waiting when A dies
  Ask(kT0 + 2000, "x");    // written as a fire by A, not sent
  auto lease_store_a = std::make_unique<PgLeaseStore>(*pool_);
  auto a = std::make_unique<NodeLease>(NodeLease::Settings{.node_id = "admin-a",
                                                           .heartbeat = std::chrono::hours(24),
                                                           .judge_after = std::chrono::milliseconds(0)},
                                       clock_, *lease_store_a, [](const std::vector<ClaimedFire>&) {});
  a->Start();
  const auto by_a = ScanAs("admin-a");
  ASSERT_EQ(by_a.size(), 1u);
  a->Stop();
  a.reset();  // A dies before sending it: its advisory lock goes with its connection

  std::vector<ClaimedFire> b_took;
  PgLeaseStore lease_store_b(*pool_);
  NodeLease b(NodeLease::Settings{.node_id = "admin-b",
                                  .heartbeat = std::chrono::hours(24),
                                  .judge_after = std::chrono::milliseconds(0)},
              clock_, lease_store_b, [&](const std::vector<ClaimedFire>& f) { b_took = f; });
  b.Start();
  // Wait (at most 10 s of real time) for PostgreSQL to end A's session, then let A's heartbeat go stale.
  for (int i = 0; i < 1000 && b_took.empty(); ++i) {
    clock_.Advance(std::chrono::milliseconds(100));
    b.Tick();
    if (b_took.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(b_took.size(), 1u);
  EXPECT_EQ(b_took[0].log_id, by_a[0].log_id);
  const auto recovered = FireFromRecovered(b_took[0]);
  EXPECT_EQ(recovered.param, "x") << "the request's parameter travels with the fire";
  EXPECT_EQ(recovered.type, TriggerType::kManual);

  clock_.AdvanceToWallMs(std::max(clock_.NowMs(), kT0 + 26'000));
  const auto by_b = ScanAs("admin-b");
  ASSERT_EQ(by_b.size(), 1u) << "the waiting request, in a partition A no longer scans";
  EXPECT_EQ(by_b[0].param, "w");
  EXPECT_TRUE(ScanAs("admin-b").empty());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job_)), 2) << "each once";
  EXPECT_EQ(Count("SELECT count(*) FROM run_once WHERE log_id = 0"), 0);
  b.Stop();
}

TEST_F(RunOncePg, CancellingWithdrawsAWaitingRequestOrItsUnclaimedFireButNeverOneBeingSent) {
  const auto waiting = Ask(kT0 + 60'000);
  const auto unclaimed = Ask(kT0 + 3000);
  const auto claimed = Ask(kT0 + 4000);

  const auto c1 = jobs_->CancelRunOnce(job_, waiting.id, "bob");
  ASSERT_TRUE(c1.ok());
  EXPECT_EQ(c1->State(), "CANCELLED");
  EXPECT_EQ(c1->cancelled_by, "bob");
  EXPECT_EQ(c1->cancelled_ms, kT0);

  const auto fires = ScanAs("admin-a");
  ASSERT_EQ(fires.size(), 2u);
  const auto log_of = [&](std::int64_t run_id) {
    return Exec(fmt::format("SELECT log_id FROM run_once WHERE id = {}", run_id))[0][0].as<std::int64_t>();
  };
  const auto unclaimed_log = log_of(unclaimed.id);
  const auto claimed_log = log_of(claimed.id);
  ASSERT_EQ(
      store_->ClaimForDispatch("admin-a", std::vector<std::int64_t>{claimed_log}, kT0 + 3900, {}).size(), 1u);

  const auto c2 = jobs_->CancelRunOnce(job_, unclaimed.id, "bob");
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->State(), "CANCELLED");
  EXPECT_EQ(c2->log_id, 0);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE id = {}", unclaimed_log)), 0)
      << "its fire is withdrawn";
  EXPECT_TRUE(
      store_->ClaimForDispatch("admin-a", std::vector<std::int64_t>{unclaimed_log}, kT0 + 2900, {}).empty())
      << "the admin holding it in its time ring can no longer claim it";

  const auto c3 = jobs_->CancelRunOnce(job_, claimed.id, "bob");
  ASSERT_FALSE(c3.ok());
  EXPECT_EQ(c3.error().kind, ErrorKind::kConflict);
  EXPECT_NE(c3.error().message.find(std::to_string(claimed_log)), std::string::npos) << c3.error().message;
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE id = {}", claimed_log)), 1);

  const auto again = jobs_->CancelRunOnce(job_, waiting.id, "carol");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(jobs_->CancelRunOnce(job_ + 1, waiting.id, "bob").error().kind, ErrorKind::kNotFound)
      << "a request is cancelled through its own job only";
  EXPECT_EQ(jobs_->CreateRunOnce(job_ + 1000, kT0, std::nullopt, "bob").error().kind, ErrorKind::kNotFound);

  clock_.Advance(seconds(60));
  EXPECT_TRUE(ScanAs("admin-a").empty()) << "a cancelled request is never written";
}

TEST_F(RunOncePg, DeletingTheJobDeletesItsRequests) {
  Ask(kT0 + 60'000);
  Exec(fmt::format("DELETE FROM job WHERE id = {}", job_));
  EXPECT_EQ(Count("SELECT count(*) FROM run_once"), 0);
}

}  // namespace
