// A job's concurrency limit across the cluster (job.concurrency_policy, job.max_concurrent;
// store/fire_log.hpp, ClaimForDispatch): the claim counts the job's fires claimed, being sent or running on
// any admin, skips what is over the limit naming a running fire, and two admins claiming at once agree.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "admin/store/pg_scheduler_store.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using ::testing::HasSubstr;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class ConcurrencyLimitPg : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    group_ = AddGroup();
  }
  // An every-second job with the given policy and maximum.
  int AddLimitedJob(const std::string& policy, int max_concurrent) {
    const int job = AddJob(group_, "* * * * * ?", kT0 + 1000);
    Exec(fmt::format("UPDATE job SET concurrency_policy = '{}', max_concurrent = {} WHERE id = {}", policy,
                     max_concurrent, job));
    return job;
  }
  // A pending fire of `job` at kT0 + `second` s, owned by `node` and not claimed.
  std::int64_t Pending(int job, int second, const std::string& node = "node-a") {
    return AddFire(job, group_, "CRON", kT0 + std::int64_t{second} * 1000, 0, 0, 0, "", 0, node);
  }
  // What the executor accepting /run leaves: the fire open, with its executor.
  void Accepted(std::int64_t log_id, const std::string& address) {
    Exec(fmt::format("UPDATE fire_open SET trigger_ms = {}, executor_address = '{}' WHERE log_id = {}", kT0,
                     address, log_id));
  }
  // What a callback leaves: the fire no longer open.
  void Finished(std::int64_t log_id) { Exec(fmt::format("DELETE FROM fire_open WHERE log_id = {}", log_id)); }
  std::string Status(std::int64_t log_id) {
    return Exec(fmt::format("SELECT status FROM job_log WHERE id = {}", log_id))[0][0].as<std::string>();
  }
  std::string TriggerMsg(std::int64_t log_id) {
    return Exec(fmt::format("SELECT trigger_msg FROM job_log WHERE id = {}", log_id))[0][0].as<std::string>();
  }
  // The ids ClaimForDispatch claimed (not held back).
  static std::vector<std::int64_t> ClaimedIds(const std::vector<ClaimedFire>& out) {
    std::vector<std::int64_t> ids;
    for (const auto& c : out)
      if (c.held_by_log_id == 0) ids.push_back(c.log_id);
    return ids;
  }

  int group_ = 0;
};

TEST_F(ConcurrencyLimitPg, AForbiddingJobGetsNoSecondFireWhileOneRunsAndItsInstantIsSkippedNamingIt) {
  const int forbid = AddLimitedJob("FORBID", 0);
  const int allow = AddJob(group_, "* * * * * ?", kT0 + 1000);
  PgSchedulerStore store(*pool_);

  const auto first = Pending(forbid, 1);
  const auto other1 = Pending(allow, 1);
  EXPECT_THAT(ClaimedIds(store.ClaimForDispatch("node-a", std::vector{first, other1}, kT0 + 800, {})),
              ::testing::UnorderedElementsAre(first, other1));
  Accepted(first, "http://10.0.0.7:9999/");
  Accepted(other1, "http://10.0.0.8:9999/");

  // The next instant comes while the first still runs: skipped, naming it and where it runs. The job
  // without a limit fires again beside its running fire.
  const auto second = Pending(forbid, 2);
  const auto other2 = Pending(allow, 2);
  const auto out = store.ClaimForDispatch("node-a", std::vector{second, other2}, kT0 + 1800, {});
  EXPECT_THAT(ClaimedIds(out), ::testing::ElementsAre(other2));
  ASSERT_EQ(out.size(), 2u);
  const auto& held = out[0].log_id == second ? out[0] : out[1];
  EXPECT_EQ(held.log_id, second);
  EXPECT_EQ(held.held_by_log_id, first);
  EXPECT_EQ(Status(second), "SKIPPED");
  EXPECT_THAT(TriggerMsg(second),
              HasSubstr(fmt::format("concurrency FORBID: fire {} of this job is still running (on "
                                    "http://10.0.0.7:9999/); this fire is skipped",
                                    first)));
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", second)), 0);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_alarm WHERE log_id = {}", second)), 1)
      << "queued for the failure monitor as a misfire is (alert, a fixed-delay job's next fire)";
  EXPECT_TRUE(store.ClaimForDispatch("node-a", std::vector{second}, kT0 + 1900, {}).empty())
      << "skipped once";

  // Once it has finished, the next instant fires.
  Finished(first);
  const auto third = Pending(forbid, 3);
  EXPECT_THAT(ClaimedIds(store.ClaimForDispatch("node-a", std::vector{third}, kT0 + 2800, {})),
              ::testing::ElementsAre(third));
  // A fire claimed but not yet accepted counts too (it is being sent).
  const auto fourth = Pending(forbid, 4);
  const auto out4 = store.ClaimForDispatch("node-a", std::vector{fourth}, kT0 + 3800, {});
  ASSERT_EQ(out4.size(), 1u);
  EXPECT_EQ(out4[0].held_by_log_id, third);
}

TEST_F(ConcurrencyLimitPg, InOneBatchTheEarliestInstantsFireUpToTheLimitAndABroadcastCountsOnce) {
  const int job = AddLimitedJob("ALLOW", 2);
  PgSchedulerStore store(*pool_);
  // A broadcast fire of three shards runs: one fire.
  const auto base = Pending(job, 1);
  ASSERT_EQ(ClaimedIds(store.ClaimForDispatch("node-a", std::vector{base}, kT0 + 800, {})).size(), 1u);
  ASSERT_EQ(store.CreateShards(base, 3, "node-a", kT0 + 900).size(), 3u);
  // Three more instants arrive together (the database was slow): one slot is left, the earliest takes it.
  const auto a = Pending(job, 2), b = Pending(job, 3), c = Pending(job, 4);
  const auto out = store.ClaimForDispatch("node-a", std::vector{c, a, b}, kT0 + 4800, {});
  EXPECT_THAT(ClaimedIds(out), ::testing::ElementsAre(a));
  EXPECT_EQ(Status(b), "SKIPPED");
  EXPECT_EQ(Status(c), "SKIPPED");
  EXPECT_THAT(TriggerMsg(b), HasSubstr("concurrency: 2 fire(s) of this job are running (max_concurrent 2)"));
}

TEST_F(ConcurrencyLimitPg, AFireOfAnotherAdminCountsAndTwoAdminsClaimingAtOnceSendOne) {
  const int job = AddLimitedJob("FORBID", 1);
  PgPool pool_b({.dsn = db_.dsn(), .size = 2});
  PgSchedulerStore a(*pool_), b(pool_b);
  // A fire node-b sent holds node-a's next one.
  const auto on_b = Pending(job, 1, "node-b");
  ASSERT_EQ(ClaimedIds(b.ClaimForDispatch("node-b", std::vector{on_b}, kT0 + 800, {})).size(), 1u);
  const auto on_a = Pending(job, 2, "node-a");
  EXPECT_TRUE(ClaimedIds(a.ClaimForDispatch("node-a", std::vector{on_a}, kT0 + 1800, {})).empty());
  Finished(on_b);

  // Rounds of two fires of the job, one owned by each admin, claimed at the same moment on two connections
  // (the instants of a job whose schedule partitions two admins hold, or a manual trigger beside a
  // scheduled fire): exactly one of each pair is claimed, whichever takes the job's lock first.
  for (int round = 0; round < 20; ++round) {
    const auto fa = Pending(job, 10 + 2 * round, "node-a");
    const auto fb = Pending(job, 11 + 2 * round, "node-b");
    auto ca = std::async(std::launch::async,
                         [&] { return a.ClaimForDispatch("node-a", std::vector{fa}, kT0, {}); });
    auto cb = std::async(std::launch::async,
                         [&] { return b.ClaimForDispatch("node-b", std::vector{fb}, kT0, {}); });
    const auto got_a = ClaimedIds(ca.get());
    const auto got_b = ClaimedIds(cb.get());
    ASSERT_EQ(got_a.size() + got_b.size(), 1u) << "round " << round;
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE id IN ({}, {}) AND status = 'SKIPPED'",
                                fa, fb)),
              1);
    Finished(got_a.empty() ? fb : fa);
  }
}

}  // namespace
