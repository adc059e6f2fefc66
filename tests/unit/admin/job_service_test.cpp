// The rules of jobs (catalog/job_service.hpp) on an in-memory store and a fake clock: what a save checks,
// when the first fire is computed, what a stop, change or delete withdraws, glue versions, run-once
// cancellation. The statements behind them are tested on PostgreSQL (tests/pg).
#include "admin/catalog/job_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cwtest/admin_errors.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_job_store.hpp"

namespace cronwheel::admin {
namespace {

using ::cwtest::Fields;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z, a minute boundary
constexpr std::int64_t kMinute = 60000;

class JobServiceTest : public ::testing::Test {
 protected:
  JobServiceTest() {
    store_.PutGroup(1);
    store_.PutGroup(2);
  }
  // An every-minute CRON job of group `group`, enabled or not.
  static Job Cron(int group = 1, bool enabled = true) {
    Job j;
    j.group_id = group;
    j.description = "every minute";
    j.schedule_type = "CRON";
    j.schedule_conf = "0 * * * * ?";
    j.handler = "demo";
    j.enabled = enabled;
    return j;
  }
  Job Create(Job j, const JobService::Visible& visible = {}) {
    auto created = jobs_.CreateJob(std::move(j), visible);
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    return created.ok() ? *created : Job{};
  }
  Result<Job> Edit(int id, const std::function<void(Job&)>& f, const JobService::Visible& visible = {}) {
    return jobs_.UpdateJob(
        id,
        [&](Job& j) -> Result<void> {
          f(j);
          return {};
        },
        visible);
  }
  std::int64_t NextFire(int id) { return jobs_.GetJob(id).value_or(Job{}).next_fire_ms; }

  cwtest::FakeClock clock_{kT0};
  cwtest::MemoryJobStore store_;
  JobService jobs_{clock_, store_, {.pre_read = std::chrono::milliseconds(5000)}};
};

TEST_F(JobServiceTest, AnEnabledJobGetsItsFirstFireAfterPreReadAndADisabledOneNone) {
  const auto enabled = Create(Cron());
  EXPECT_EQ(enabled.next_fire_ms, kT0 + kMinute) << "the first instant after now + 5 s";
  EXPECT_EQ(NextFire(enabled.id), kT0 + kMinute);
  clock_.Advance(std::chrono::seconds(56));  // 4 s before the next minute: within pre_read of it
  EXPECT_EQ(Create(Cron()).next_fire_ms, kT0 + 2 * kMinute) << "an instant within pre_read is skipped";
  EXPECT_EQ(Create(Cron(1, false)).next_fire_ms, 0);
}

TEST_F(JobServiceTest, ASaveNamesEveryMissingReferenceAndWritesNothing) {
  store_.PutAlertChannel(3);
  store_.PutCalendar(4);
  auto j = Cron(9);
  j.alert_channel_ids = {3, 7};
  j.calendar_ids = {8, 4};
  j.child_job_ids = {99};
  const auto refused = jobs_.CreateJob(j);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(Fields(refused.error()),
              ElementsAre("group_id", "alert_channel_ids", "calendar_ids", "child_job_ids"));
  EXPECT_EQ(refused.error().fields[0].message, "job group 9 does not exist");
  EXPECT_EQ(refused.error().fields[1].message, "alert channel 7 not found");
  EXPECT_EQ(refused.error().fields[2].message, "calendar 8 not found");
  EXPECT_EQ(refused.error().fields[3].message, "job 99 not found");
  EXPECT_EQ(refused.error().fields[3].code, "not_found");
  EXPECT_THAT(store_.Snapshot().jobs, IsEmpty());
  EXPECT_THAT(store_.Snapshot().schedules, IsEmpty());
}

TEST_F(JobServiceTest, AChildInAGroupTheCallerMayNotSeeIsNotFoundLikeOneThatDoesNotExist) {
  const auto hidden = Create(Cron(2));
  const auto only_group_1 = [](int group) { return group == 1; };
  auto j = Cron(1);
  j.child_job_ids = {hidden.id};
  const auto refused = jobs_.CreateJob(j, only_group_1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().fields.at(0).message, "job " + std::to_string(hidden.id) + " not found");
  // An admin links it; the user's later update keeps it without seeing it, but cannot add another.
  const auto parent = Create(j);
  const auto other_hidden = Create(Cron(2));
  EXPECT_TRUE(Edit(
                  parent.id, [](Job& p) { p.description = "renamed"; }, only_group_1)
                  .ok());
  const auto added = Edit(
      parent.id, [&](Job& p) { p.child_job_ids.push_back(other_hidden.id); }, only_group_1);
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(Fields(added.error()), ElementsAre("child_job_ids"));
}

TEST_F(JobServiceTest, AChildCycleIsRefusedNamingItsJobsButNotThroughGroupsTheCallerMayNotSee) {
  const auto a = Create(Cron(1));
  auto b_job = Cron(1);
  b_job.child_job_ids = {a.id};
  const auto b = Create(b_job);
  auto c_job = Cron(2);
  c_job.child_job_ids = {b.id};
  const auto c = Create(c_job);  // c -> b -> a
  const auto cycle = Edit(a.id, [&](Job& j) { j.child_job_ids = {c.id}; });
  ASSERT_FALSE(cycle.ok());
  EXPECT_EQ(cycle.error().fields.at(0).message,
            fmt::format("child jobs would form a cycle: {} -> {} -> {} -> {}", a.id, c.id, b.id, a.id));
  // A caller of group 1 naming b (of group 1) as a's child closes a -> b -> a: every job on it is visible,
  // so the cycle is named.
  const auto short_cycle = Edit(
      a.id, [&](Job& j) { j.child_job_ids = {b.id}; }, [](int g) { return g == 1; });
  ASSERT_FALSE(short_cycle.ok());
  EXPECT_EQ(short_cycle.error().fields.at(0).message,
            fmt::format("child jobs would form a cycle: {} -> {} -> {}", a.id, b.id, a.id));
  const auto own = Edit(a.id, [&](Job& j) { j.child_job_ids = {a.id}; });
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().fields.at(0).message, fmt::format("a job cannot be its own child (job {})", a.id));
  EXPECT_THAT(store_.Snapshot().jobs.at(a.id).child_job_ids, IsEmpty()) << "nothing saved";
}

TEST_F(JobServiceTest, ACycleThroughAJobTheCallerMayNotSeeIsRefusedWithoutNamingIt) {
  const auto a = Create(Cron(1));
  auto hidden_job = Cron(2);
  hidden_job.child_job_ids = {a.id};
  const auto hidden = Create(hidden_job);  // hidden -> a
  auto b_job = Cron(1);
  b_job.child_job_ids = {hidden.id};
  const auto b = Create(b_job);  // b -> hidden (linked by an admin)
  const auto refused = Edit(
      a.id, [&](Job& j) { j.child_job_ids = {b.id}; }, [](int g) { return g == 1; });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().fields.at(0).message,
            "child jobs would form a cycle through jobs of groups you may not see");
}

TEST_F(JobServiceTest, AJobWhoseWindowHasEndedOrWhoseScheduleNeverFiresCannotBeEnabled) {
  auto ended = Cron();
  ended.end_ms = kT0 - 1;
  const auto refused = jobs_.CreateJob(ended);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(Fields(refused.error()), ElementsAre("end_ms"));
  EXPECT_EQ(refused.error().fields[0].code, "range");
  auto past = Cron();
  past.schedule_conf = "0 0 0 1 1 ? 2020";  // only in 2020
  const auto never = jobs_.CreateJob(past);
  ASSERT_FALSE(never.ok());
  EXPECT_THAT(Fields(never.error()), ElementsAre("schedule_conf"));
  ended.enabled = false;
  EXPECT_TRUE(jobs_.CreateJob(ended).ok()) << "a stopped job may keep an ended window";
}

TEST_F(JobServiceTest, AScheduleChangeRecomputesTheNextFireAndWithdrawsTheUnsentFiresOtherEditsDoNot) {
  const auto j = Create(Cron());
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(Edit(j.id, [](Job& e) { e.description = "renamed"; }).ok());
  EXPECT_EQ(NextFire(j.id), kT0 + kMinute) << "unchanged";
  EXPECT_THAT(store_.Snapshot().withdrawals, IsEmpty());
  ASSERT_TRUE(Edit(j.id, [](Job& e) { e.schedule_conf = "0 0/5 * * * ?"; }).ok());
  EXPECT_EQ(NextFire(j.id), kT0 + 5 * kMinute);
  EXPECT_THAT(store_.Snapshot().withdrawals, ElementsAre(j.id));
  ASSERT_TRUE(Edit(j.id, [](Job& e) { e.time_zone = "Asia/Shanghai"; }).ok())
      << "the zone is the schedule too";
  EXPECT_THAT(store_.Snapshot().withdrawals, ElementsAre(j.id, j.id));
  EXPECT_EQ(store_.Snapshot().locked_schedules.back(), j.id) << "the partition is locked before the row";
}

TEST_F(JobServiceTest, DisablingThroughAnUpdateClearsTheNextFireAndWithdraws) {
  const auto j = Create(Cron());
  const auto updated = Edit(j.id, [](Job& e) { e.enabled = false; });
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->next_fire_ms, 0);
  EXPECT_EQ(NextFire(j.id), 0);
  EXPECT_THAT(store_.Snapshot().withdrawals, ElementsAre(j.id));
}

TEST_F(JobServiceTest, AnEditsOwnErrorIsReturnedAndNothingChanges) {
  const auto j = Create(Cron());
  const auto before = store_.Snapshot();
  const auto refused = jobs_.UpdateJob(j.id, [](Job& e) -> Result<void> {
    e.description = "half-applied";
    return Error::Forbidden("scripts are changed by admins only");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(store_.Snapshot().jobs.at(j.id).description, before.jobs.at(j.id).description);
  EXPECT_EQ(jobs_.UpdateJob(99, [](Job&) -> Result<void> { return {}; }).error().kind, ErrorKind::kNotFound);
}

TEST_F(JobServiceTest, AGlueChangeGetsALaterVersionThanTheLastAndTheNewestThirtyAreKept) {
  auto script = Cron();
  script.glue_type = GlueType::kShell;
  script.glue_source = "echo 0";
  const auto j = Create(script);
  EXPECT_EQ(store_.Snapshot().glue_history.size(), 1U);
  std::int64_t last = j.glue_updated_ms;
  for (int i = 1; i <= 40; ++i) {  // the clock stands still: each version is still later than the last
    const auto u = Edit(j.id, [&](Job& e) { e.glue_source = "echo " + std::to_string(i); });
    ASSERT_TRUE(u.ok());
    EXPECT_GT(u->glue_updated_ms, last);
    last = u->glue_updated_ms;
  }
  const auto history = store_.Snapshot().glue_history;
  ASSERT_EQ(history.size(), static_cast<std::size_t>(JobService::kGlueHistoryKept));
  EXPECT_EQ(history.front().glue_source, "echo 11");
  EXPECT_EQ(history.back().glue_source, "echo 40");
  ASSERT_TRUE(Edit(j.id, [](Job& e) { e.param = "p"; }).ok());
  EXPECT_EQ(store_.Snapshot().glue_history.back().glue_source, "echo 40")
      << "no version without a glue change";
}

TEST_F(JobServiceTest, StartRefusesANoneJobAndStopDisablesClearsTheScheduleAndWithdraws) {
  auto manual = Cron(1, false);
  manual.schedule_type = "NONE";
  manual.schedule_conf = "";
  const auto m = Create(manual);
  const auto refused = jobs_.StartJob(m.id);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(Fields(refused.error()), ElementsAre("schedule_type"));
  EXPECT_EQ(jobs_.StartJob(99).error().kind, ErrorKind::kNotFound);

  const auto j = Create(Cron(1, false));
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(jobs_.StartJob(j.id).ok());
  EXPECT_EQ(NextFire(j.id), kT0 + kMinute);
  EXPECT_TRUE(jobs_.GetJob(j.id)->enabled);
  ASSERT_TRUE(jobs_.StopJob(j.id).ok());
  const auto s = store_.Snapshot();
  EXPECT_FALSE(s.jobs.at(j.id).enabled);
  EXPECT_EQ(s.schedules.at(j.id).next_fire_ms, 0);
  EXPECT_THAT(s.withdrawals, ElementsAre(j.id));
  EXPECT_EQ(jobs_.StopJob(99).error().kind, ErrorKind::kNotFound);
  EXPECT_THAT(store_.Snapshot().withdrawals, ElementsAre(j.id)) << "a refused stop withdraws nothing";
}

TEST_F(JobServiceTest, ADeleteIsRefusedWhileAWorkflowNamesTheJobAndOtherwiseTakesItsLinksAndFires) {
  const auto child = Create(Cron());
  auto parent_job = Cron();
  parent_job.child_job_ids = {child.id};
  const auto parent = Create(parent_job);
  store_.NameInWorkflow(child.id, 7, "nightly");
  const auto refused = jobs_.DeleteJob(child.id);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(refused.error().message, HasSubstr("workflow 7 'nightly'"));
  EXPECT_TRUE(store_.Snapshot().jobs.contains(child.id));
  EXPECT_THAT(store_.DeletedFiresOf(), IsEmpty());

  ASSERT_TRUE(jobs_.DeleteJob(parent.id).ok());
  EXPECT_FALSE(store_.Snapshot().jobs.contains(parent.id));
  EXPECT_THAT(store_.Snapshot().withdrawals, ElementsAre(parent.id));
  EXPECT_THAT(store_.DeletedFiresOf(), ElementsAre(parent.id)) << "its fires, after the job";

  auto grandparent_job = Cron();
  const auto other = Create(Cron());
  grandparent_job.child_job_ids = {other.id};
  const auto gp = Create(grandparent_job);
  ASSERT_TRUE(jobs_.DeleteJob(other.id).ok());
  EXPECT_THAT(store_.Snapshot().jobs.at(gp.id).child_job_ids, IsEmpty())
      << "no job points at a missing child";
  EXPECT_EQ(jobs_.DeleteJob(99).error().kind, ErrorKind::kNotFound);
}

TEST_F(JobServiceTest, ARunOnceIsCancelledOnceAndNotAfterItsFireWasClaimed) {
  const auto j = Create(Cron());
  store_.PutRunOnce({.id = 1, .job_id = j.id, .fire_at_ms = kT0 + kMinute});
  store_.PutRunOnce({.id = 2, .job_id = j.id, .fire_at_ms = kT0 + kMinute, .log_id = 500});
  store_.PutRunOnce({.id = 3, .job_id = j.id, .fire_at_ms = kT0 + kMinute, .log_id = 501});
  store_.ClaimFire(501);
  clock_.Advance(std::chrono::seconds(1));
  const auto cancelled = jobs_.CancelRunOnce(j.id, 1, "ana");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->cancelled_ms, kT0 + 1000);
  EXPECT_EQ(cancelled->cancelled_by, "ana");
  const auto again = jobs_.CancelRunOnce(j.id, 1, "bo");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(again.error().message, "run once 1 was cancelled already, by ana");

  ASSERT_TRUE(jobs_.CancelRunOnce(j.id, 2, "ana").ok()) << "its fire is written but unclaimed";
  EXPECT_THAT(store_.Snapshot().withdrawn_fires, ElementsAre(500));
  EXPECT_EQ(store_.Snapshot().run_once.at(2).log_id, 0);

  const auto sent = jobs_.CancelRunOnce(j.id, 3, "ana");
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().message, "run once 3 has fired already: fire 501 is being sent or was sent");
  EXPECT_EQ(store_.Snapshot().run_once.at(3).cancelled_ms, 0);
  EXPECT_EQ(jobs_.CancelRunOnce(j.id + 1, 1, "ana").error().kind, ErrorKind::kNotFound) << "another job's id";
}

TEST_F(JobServiceTest, AManualFireIsWrittenAtNowForAJobThatExists) {
  const auto j = Create(Cron());
  clock_.Advance(std::chrono::milliseconds(1234));
  const auto fire = jobs_.CreateManualFire(j.id, TriggerType::kManual, std::string("p"), "node-a");
  ASSERT_TRUE(fire.ok());
  EXPECT_EQ(fire->scheduled_ms, kT0 + 1234) << "its instant locates its row";
  EXPECT_EQ(fire->job_id, j.id);
  EXPECT_EQ(fire->param, std::optional<std::string>("p"));
  EXPECT_EQ(jobs_.CreateManualFire(99, TriggerType::kManual, std::nullopt, "node-a").error().kind,
            ErrorKind::kNotFound);
  EXPECT_EQ(jobs_.CreateRunOnce(99, kT0 + kMinute, std::nullopt, "ana").error().kind, ErrorKind::kNotFound);
}

// The reads a REST route passes through (list, tags, fires held ahead) give what the store holds, filtered
// by the caller's groups.
TEST_F(JobServiceTest, TheListTheTagsAndTheFiresHeldAheadAreTheStoresFilteredByGroup) {
  auto a = Cron(1);
  a.description = "Nightly export";
  a.tags = {"etl", "daily"};
  auto b = Cron(2);
  b.tags = {"etl"};
  const auto ja = Create(a);
  Create(b);
  JobQuery q;
  q.text = "NIGHTLY";
  EXPECT_EQ(jobs_.ListJobs(q).total, 1);
  q = {};
  q.tags = {"etl"};
  q.group_ids = std::vector<int>{2};
  const auto page = jobs_.ListJobs(q);
  ASSERT_EQ(page.total, 1);
  EXPECT_EQ(page.items.at(0).group_id, 2);
  const auto all = jobs_.ListTags(std::nullopt);
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[1].tag, "etl");
  EXPECT_EQ(all[1].jobs, 2);
  EXPECT_EQ(jobs_.ListTags(std::vector<int>{1}).size(), 2U);
  EXPECT_EQ(jobs_.ListTags(std::vector<int>{2}).size(), 1U);
  store_.SetSentAhead(ja.id, {{.log_id = 7, .address = "http://10.0.0.1:9999/", .scheduled_ms = kT0 + 1000}});
  store_.SetWithdrawnClaims(ja.id, {8});
  ASSERT_EQ(jobs_.SentAhead(ja.id).size(), 1U);
  EXPECT_EQ(jobs_.WithdrawnClaims(ja.id), std::vector<std::int64_t>{8});
  EXPECT_TRUE(jobs_.SentAhead(ja.id + 1).empty());
  const std::vector<std::int64_t> dropped{7};
  jobs_.MarkWithdrawnAhead(dropped, "stopped");
  EXPECT_EQ(store_.MarkedAhead(), (std::vector<std::pair<std::int64_t, std::string>>{{7, "stopped"}}));
}

}  // namespace
}  // namespace cronwheel::admin
