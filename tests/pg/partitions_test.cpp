// Schedule partitions on a real PostgreSQL (admin/include/admin/schedule/partitions.hpp): admins scan their
// share in parallel, never the same partition at once, and a dead admin's share is taken over.
#include "admin/schedule/partitions.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using namespace std::chrono_literals;
constexpr std::int64_t kT0 = 1767225600000;

class PartitionsPg : public cwtest::PgFixture {
 protected:
  // An admin_node row as NodeLease writes it, alive as of `now_ms`.
  void Beat(const std::string& node, std::int64_t now_ms) {
    Exec(
        fmt::format("INSERT INTO admin_node (node_id, lock_key, started_ms, heartbeat_ms, lease_until_ms) "
                    "VALUES ('{0}', 1, {1},"
                    " {1}, {2}) ON CONFLICT (node_id) DO UPDATE SET heartbeat_ms = {1}, lease_until_ms = {2}",
                    node, now_ms, now_ms + 10'000));
  }
  // The jobs of the fires `out` wrote, by partition.
  static std::set<int> PartitionsOf(const ScanOutcome& out) {
    std::set<int> parts;
    for (const auto& f : out.fires)
      parts.insert(PartitionOf(f.job_id, out.partitions_total));
    return parts;
  }
  // Every partition scanned at `now_ms` (a running cluster; a new one starts with all of them stale, and the
  // first scan takes them all).
  void Scanned(std::int64_t now_ms) {
    Exec(fmt::format("UPDATE schedule_partition SET scanned_ms = {}", now_ms));
  }
  void AddJobs(int n, std::int64_t next_ms) {
    const int g = AddGroup();
    for (int i = 0; i < n; ++i)
      AddJob(g, "* * * * * ?", next_ms);
  }
};

TEST_F(PartitionsPg, OneLiveAdminHoldsEveryPartition) {
  AddJobs(120, kT0 + 1000);
  cwtest::FakeClock clock(kT0);
  Beat("node-a", clock.NowMs());
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto out = store.Scan("node-a", 1000, clock, planner);
  EXPECT_EQ(out.partitions_total, kDefaultSchedulePartitions);
  EXPECT_EQ(out.partitions_held, kDefaultSchedulePartitions);
  EXPECT_EQ(out.jobs_read, 120U);
  EXPECT_EQ(Count("SELECT count(*) FROM schedule_partition WHERE owner_node = 'node-a' AND scanned_ms = " +
                  std::to_string(kT0)),
            kDefaultSchedulePartitions);
}

TEST_F(PartitionsPg, TwoLiveAdminsScanDisjointHalvesThatTogetherCoverAll) {
  AddJobs(120, kT0 + 1000);
  cwtest::FakeClock clock(kT0);
  Beat("node-a", clock.NowMs());
  Beat("node-b", clock.NowMs());
  Scanned(clock.NowMs());
  PgPool pool_b({.dsn = db_.dsn(), .size = 4});
  PgSchedulerStore a(*pool_), b(pool_b);
  ScanPlanner pa, pb;
  auto fa = std::async(std::launch::async, [&] { return a.Scan("node-a", 1000, clock, pa); });
  auto fb = std::async(std::launch::async, [&] { return b.Scan("node-b", 1000, clock, pb); });
  const auto oa = fa.get();
  const auto ob = fb.get();
  EXPECT_EQ(oa.partitions_held, 30);
  EXPECT_EQ(ob.partitions_held, 30);
  EXPECT_EQ(oa.jobs_read + ob.jobs_read, 120U);
  EXPECT_EQ(oa.jobs_read, 60U) << "jobs 1..120 spread evenly over 60 partitions";
  std::set<int> both = PartitionsOf(oa);
  for (const int p : PartitionsOf(ob))
    EXPECT_TRUE(both.insert(p).second) << "partition " << p << " scanned by both admins";
  EXPECT_EQ(both.size(), 60U);
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT job_id, scheduled_ms FROM job_log GROUP BY 1, 2 HAVING "
                  "count(*) > 1) d"),
            0);
}

TEST_F(PartitionsPg, APartitionAnotherAdminIsScanningIsSkippedNotWaitedFor) {
  AddJobs(120, kT0 + 1000);
  cwtest::FakeClock clock(kT0);
  // Another admin is in the middle of a scan of partitions 0..29: it holds their rows.
  auto busy = pool_->Acquire();
  pqxx::work holder(*busy);
  holder.exec("SELECT id FROM schedule_partition WHERE id < 30 FOR UPDATE");
  PgPool pool_b({.dsn = db_.dsn(), .size = 2});
  PgSchedulerStore b(pool_b);
  ScanPlanner planner;
  // Alone, node-b is assigned all 60. The scan returns while the other admin still holds its 30: it skipped
  // them (a wait would last until the scan's lock timeout and fail).
  const auto out = b.Scan("node-b", 1000, clock, planner);
  EXPECT_EQ(out.partitions_held, 30);
  for (const int p : PartitionsOf(out))
    EXPECT_GE(p, 30) << "wrote a fire of partition " << p << ", which another admin was scanning";
  holder.commit();
}

TEST_F(PartitionsPg, ADeadAdminsPartitionsAreTakenOverWithinTheTakeoverTime) {
  AddJobs(60, kT0 + 1000);
  cwtest::FakeClock clock(kT0);
  Beat("node-a", clock.NowMs());
  Beat("node-b", clock.NowMs());
  Scanned(clock.NowMs());
  PgSchedulerStore a(*pool_);
  ScanPlanner pa, pb;
  EXPECT_EQ(a.Scan("node-a", 1000, clock, pa).partitions_held, 30);
  EXPECT_EQ(a.Scan("node-b", 1000, clock, pb).partitions_held, 30);
  // node-b dies: no heartbeat from now on. node-a keeps beating and scanning every second.
  int held = 0;
  std::int64_t taken_after_ms = -1;
  for (int s = 1; s <= 5 && taken_after_ms < 0; ++s) {
    clock.Advance(1s);
    Beat("node-a", clock.NowMs());
    held = a.Scan("node-a", 1000, clock, pa).partitions_held;
    if (held == 60) taken_after_ms = std::int64_t{s} * 1000;
  }
  ASSERT_GT(taken_after_ms, 0) << "node-a never took node-b's partitions (held " << held << ")";
  // The takeover of a partition nobody scans (1.5 s) comes before the liveness grace (2.5 s) ends.
  EXPECT_LE(taken_after_ms, 2000);
  // No instant of a job was written twice across the two admins.
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT job_id, scheduled_ms FROM job_log GROUP BY 1, 2 HAVING "
                  "count(*) > 1) d"),
            0);
}

TEST_F(PartitionsPg, ResizingChangesTheNumberOfPartitionsAndScansFollow) {
  AddJobs(10, kT0 + 1000);
  {
    auto conn = pool_->Acquire();
    EXPECT_EQ(ResizeSchedulePartitions(*conn, 4), kDefaultSchedulePartitions);
    EXPECT_EQ(ResizeSchedulePartitions(*conn, 4), 4);
  }
  cwtest::FakeClock clock(kT0);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto out = store.Scan("node-a", 1000, clock, planner);
  EXPECT_EQ(out.partitions_total, 4);
  EXPECT_EQ(out.partitions_held, 4);
  EXPECT_EQ(out.jobs_read, 10U);
}

}  // namespace
