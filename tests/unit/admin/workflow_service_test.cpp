// The rules of workflows (catalog/workflow_service.hpp) on an in-memory store and a fake clock: what a save
// checks, when the first fire is computed, which edits withdraw the runs written ahead and in which order
// the locks come, what a trigger of a workflow that does not exist answers, and that the run operations
// (kill, re-run, list) come back through the service with their refusals unchanged and rolled back. The
// statements, and a run's fires, are tested on PostgreSQL (tests/pg/workflow_test.cpp).
#include "admin/catalog/workflow_service.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "cwtest/admin_errors.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_workflow_store.hpp"

namespace cronwheel::admin {
namespace {

using ::cwtest::Fields;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z, a minute boundary
constexpr std::int64_t kMinute = 60000;

class WorkflowServiceTest : public ::testing::Test {
 protected:
  WorkflowServiceTest() {
    store_.PutGroup(1);
    store_.PutJob(10);
    store_.PutJob(11);
  }
  // An every-minute workflow of group 1 whose nodes fire `jobs` one after the other, enabled or not.
  static Workflow EveryMinute(const std::vector<int>& jobs, bool enabled = true) {
    Workflow w{.group_id = 1, .name = "nightly", .schedule_type = "CRON", .schedule_conf = "0 * * * * ?"};
    w.enabled = enabled;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      w.graph.nodes.push_back({.key = "n" + std::to_string(i), .job_id = jobs[i]});
      if (i > 0)
        w.graph.edges.push_back({.from = "n" + std::to_string(i - 1), .to = "n" + std::to_string(i)});
    }
    return w;
  }
  Workflow Create(Workflow w) {
    auto created = workflows_.Create(std::move(w));
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    return created.ok() ? *created : Workflow{};
  }
  Result<Workflow> Edit(int id, const std::function<void(Workflow&)>& f) {
    return workflows_.Update(id, [&](Workflow& w) -> Result<void> {
      f(w);
      return {};
    });
  }
  // The steps the store recorded since the last call.
  std::vector<std::string> Steps() {
    const auto all = store_.Snapshot().steps;
    std::vector<std::string> out(all.begin() + static_cast<std::ptrdiff_t>(seen_), all.end());
    seen_ = all.size();
    return out;
  }

  cwtest::FakeClock clock_{kT0};
  cwtest::MemoryWorkflowStore store_;
  WorkflowService workflows_{clock_, store_, {.pre_read = std::chrono::milliseconds(5000)}};
  std::size_t seen_ = 0;
};

TEST_F(WorkflowServiceTest, ASaveNamesAMissingGroupAndEachMissingNodeJobAndWritesNothing) {
  auto w = EveryMinute({10, 98, 11, 99});
  w.group_id = 7;
  const auto refused = workflows_.Create(w);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(refused.error().message, "the workflow is not valid");
  EXPECT_THAT(Fields(refused.error()), ElementsAre("group_id", "nodes[1].job_id", "nodes[3].job_id"));
  EXPECT_EQ(refused.error().fields[0].message, "job group 7 does not exist");
  EXPECT_EQ(refused.error().fields[0].code, "not_found");
  EXPECT_EQ(refused.error().fields[1].message, "nodes[1].job_id: job 98 does not exist");
  EXPECT_EQ(refused.error().fields[1].params, nlohmann::json({{"id", 98}}));
  EXPECT_EQ(refused.error().fields[2].message, "nodes[3].job_id: job 99 does not exist");
  EXPECT_THAT(store_.Snapshot().workflows, IsEmpty());
  EXPECT_THAT(Steps(), IsEmpty());
}

TEST_F(WorkflowServiceTest, AnEnabledWorkflowGetsItsFirstFireAfterPreReadAndADisabledOneNone) {
  clock_.Advance(std::chrono::seconds(56));  // 4 s before the next minute: within pre_read of it
  auto w = EveryMinute({10});
  w.next_fire_ms = 123;
  w.stop_reason = "its window ended";
  const auto enabled = Create(w);
  EXPECT_EQ(enabled.next_fire_ms, kT0 + 2 * kMinute) << "an instant within pre_read is skipped";
  EXPECT_EQ(enabled.stop_reason, "");
  EXPECT_EQ(enabled.created_ms, kT0 + 56000);
  EXPECT_EQ(Create(EveryMinute({10}, false)).next_fire_ms, 0);
}

TEST_F(WorkflowServiceTest, AScheduleWithNoFireAfterNowIsRefusedOnlyWhenNothingElseIs) {
  auto past = EveryMinute({10});
  past.schedule_conf = "0 0 0 1 1 ? 2020";  // only in 2020
  const auto never = workflows_.Create(past);
  ASSERT_FALSE(never.ok());
  ASSERT_THAT(Fields(never.error()), ElementsAre("schedule_conf"));
  EXPECT_EQ(never.error().fields[0].message, "the schedule has no fire after now: it cannot be enabled");
  EXPECT_EQ(never.error().fields[0].code, "schedule");
  past.graph.nodes[0].job_id = 99;
  const auto both = workflows_.Create(past);
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(Fields(both.error()), ElementsAre("nodes[0].job_id")) << "the schedule is not judged then";
  past.enabled = false;
  past.graph.nodes[0].job_id = 10;
  EXPECT_TRUE(workflows_.Create(past).ok()) << "a disabled workflow may keep it";
}

TEST_F(WorkflowServiceTest,
       AnUpdateLocksThePartitionFirstAndWithdrawsTheRunsAheadOnlyWhenDisabledOrRescheduled) {
  const auto w = Create(EveryMinute({10, 11}));
  store_.PutUnstartedRuns(w.id, 1);
  Steps();
  clock_.Advance(std::chrono::seconds(30));

  const auto regraphed = Edit(w.id, [](Workflow& x) {
    x.graph.nodes.pop_back();
    x.graph.edges.clear();
  });
  ASSERT_TRUE(regraphed.ok());
  EXPECT_EQ(regraphed->next_fire_ms, kT0 + kMinute) << "the schedule is unchanged: so is its next fire";
  const auto id = std::to_string(w.id);
  EXPECT_THAT(Steps(), ElementsAre("lock partition " + id, "lock workflow " + id, "update workflow " + id))
      << "a changed graph keeps the runs written ahead: a run keeps the graph it began with";

  const auto rescheduled = Edit(w.id, [](Workflow& x) { x.schedule_conf = "0 0/5 * * * ?"; });
  ASSERT_TRUE(rescheduled.ok());
  EXPECT_EQ(rescheduled->next_fire_ms, kT0 + 5 * kMinute);
  EXPECT_THAT(Steps(), ElementsAre("lock partition " + id, "lock workflow " + id, "withdraw " + id,
                                   "update workflow " + id));
  ASSERT_TRUE(Edit(w.id, [](Workflow& x) { x.time_zone = "Asia/Shanghai"; }).ok())
      << "the zone is the schedule too";
  EXPECT_THAT(Steps(), ::testing::Contains("withdraw " + id));

  const auto disabled = Edit(w.id, [](Workflow& x) { x.enabled = false; });
  ASSERT_TRUE(disabled.ok());
  EXPECT_EQ(disabled->next_fire_ms, 0);
  EXPECT_THAT(Steps(), ::testing::Contains("withdraw " + id));
  clock_.Advance(std::chrono::minutes(6));
  const auto enabled = Edit(w.id, [](Workflow& x) { x.enabled = true; });
  ASSERT_TRUE(enabled.ok());
  EXPECT_EQ(enabled->next_fire_ms, kT0 + 10 * kMinute) << "enabled again: its first fire from now";
  EXPECT_THAT(Steps(), ::testing::Not(::testing::Contains("withdraw " + id)));
}

TEST_F(WorkflowServiceTest, ARefusedUpdateWithdrawsNothingAndChangesNothing) {
  const auto w = Create(EveryMinute({10}));
  store_.PutUnstartedRuns(w.id, 2);
  const auto refused = Edit(w.id, [](Workflow& x) {
    x.enabled = false;
    x.graph.nodes[0].job_id = 99;
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(Fields(refused.error()), ElementsAre("nodes[0].job_id"));
  const auto own = workflows_.Update(w.id, [](Workflow& x) -> Result<void> {
    x.enabled = false;
    return Error::Forbidden("no");
  });
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().kind, ErrorKind::kForbidden);
  const auto missing = Edit(99, [](Workflow&) {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "workflow 99 not found");
  const auto s = store_.Snapshot();
  EXPECT_TRUE(s.workflows.at(w.id).enabled);
  EXPECT_EQ(s.unstarted.at(w.id), 2);
}

TEST_F(WorkflowServiceTest, ADeleteWithdrawsTheRunsAheadUnderThePartitionLockAndAMissingOneIsNotFound) {
  const auto w = Create(EveryMinute({10}));
  store_.PutUnstartedRuns(w.id, 3);
  Steps();
  ASSERT_TRUE(workflows_.Delete(w.id).ok());
  const auto id = std::to_string(w.id);
  EXPECT_THAT(Steps(), ElementsAre("lock partition " + id, "withdraw " + id, "delete workflow " + id));
  EXPECT_EQ(store_.Snapshot().unstarted.at(w.id), 0);
  const auto again = workflows_.Delete(w.id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(again.error().message, "workflow " + id + " not found");
  EXPECT_THAT(Steps(), IsEmpty()) << "rolled back";
}

TEST_F(WorkflowServiceTest, ATriggerOfAMissingWorkflowIsNotFoundAndARefusedOneIsReturnedAsItIs) {
  const auto w = Create(EveryMinute({10}, false));
  Steps();
  const NodeFirer ana{.username = "ana", .admin = true};
  const auto started = workflows_.Trigger(w.id, true, std::nullopt, ana, "node-a");
  ASSERT_TRUE(started.ok());
  EXPECT_GT(started->run_id, 0);
  EXPECT_THAT(Steps(), ElementsAre("API run of " + std::to_string(w.id)));
  const auto missing = workflows_.Trigger(99, false, std::nullopt, ana, "node-a");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "workflow 99 not found");
  store_.RefuseRuns(Error::Forbidden("firing job 10 needs the OPERATOR role"));
  const auto refused = workflows_.Trigger(w.id, false, std::nullopt, ana, "node-a");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(refused.error().message, "firing job 10 needs the OPERATOR role");
  EXPECT_THAT(Steps(), IsEmpty());
}

TEST_F(WorkflowServiceTest, AKilledRunRefusesASecondKillAndAReRunOfItsKilledNodeResetsItsDescendants) {
  const auto w = Create(EveryMinute({10, 11, 10}));
  const NodeFirer ana{.username = "ana", .admin = true};
  const auto first = workflows_.Trigger(w.id, false, std::nullopt, ana, "node-a");
  const auto second = workflows_.Trigger(w.id, true, "p", ana, "node-a");
  ASSERT_TRUE(first.ok() && second.ok());
  const auto runs = workflows_.ListRuns(w.id, 10);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0].id, second->run_id) << "newest first";
  EXPECT_EQ(runs[0].param, "p");
  EXPECT_EQ(runs[1].trigger_type, "MANUAL");
  EXPECT_EQ(workflows_.ListRuns(w.id, 1).size(), 1U);

  store_.SetNode(first->run_id, "n0", NodeState::kSuccess);
  store_.SetNode(first->run_id, "n1", NodeState::kRunning);
  clock_.Advance(std::chrono::seconds(3));
  ASSERT_TRUE(workflows_.KillRun(first->run_id, ana).ok());
  auto run = workflows_.GetRun(first->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state, RunState::kKilled);
  EXPECT_EQ(run->end_ms, kT0 + 3000);
  EXPECT_EQ(run->nodes[0].state, NodeState::kSuccess);
  EXPECT_EQ(run->nodes[1].state, NodeState::kKilled);
  EXPECT_EQ(run->nodes[2].state, NodeState::kSkipped);

  const auto again = workflows_.KillRun(first->run_id, ana);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kConflict);
  const auto missing = workflows_.KillRun(999, ana);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);

  const auto not_failed = workflows_.RerunNode(first->run_id, "n0", ana, "node-a");
  ASSERT_FALSE(not_failed.ok());
  EXPECT_EQ(not_failed.error().kind, ErrorKind::kConflict);
  const auto still_running = workflows_.RerunNode(second->run_id, "n0", ana, "node-a");
  ASSERT_FALSE(still_running.ok());
  EXPECT_EQ(still_running.error().kind, ErrorKind::kConflict);
  store_.RefuseRuns(Error::Forbidden("firing job 11 needs the OPERATOR role"));
  const auto refused = workflows_.RerunNode(first->run_id, "n1", ana, "node-a");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(workflows_.GetRun(first->run_id)->state, RunState::kKilled) << "a refusal changes nothing";
  store_.RefuseRuns(std::nullopt);

  ASSERT_TRUE(workflows_.RerunNode(first->run_id, "n1", ana, "node-a").ok());
  run = workflows_.GetRun(first->run_id);
  EXPECT_EQ(run->state, RunState::kRunning);
  EXPECT_EQ(run->nodes[0].state, NodeState::kSuccess) << "not below n1";
  EXPECT_EQ(run->nodes[1].state, NodeState::kWaiting);
  EXPECT_EQ(run->nodes[2].state, NodeState::kWaiting);
  EXPECT_EQ(run->note, "killed by ana\nnode n1 re-run by ana");
}

TEST_F(WorkflowServiceTest, AKilledFireEndsItsNodeKilledAndAFireOfNoNodeChangesNothing) {
  const auto w = Create(EveryMinute({10, 11}));
  const NodeFirer ana{.username = "ana", .admin = true};
  const auto run = workflows_.Trigger(w.id, false, std::nullopt, ana, "node-a");
  ASSERT_TRUE(run.ok());
  store_.SetNode(run->run_id, "n0", NodeState::kRunning);
  store_.SetNodeFire(41, run->run_id, "n0");
  EXPECT_THAT(workflows_.FireKilled(42, "node-a"), IsEmpty());
  EXPECT_EQ(workflows_.GetRun(run->run_id)->nodes[0].state, NodeState::kRunning);
  workflows_.FireKilled(41, "node-a");
  EXPECT_EQ(workflows_.GetRun(run->run_id)->nodes[0].state, NodeState::kKilled);
}

}  // namespace
}  // namespace cronwheel::admin
