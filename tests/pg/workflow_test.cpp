// Workflows on PostgreSQL (store/workflow_table.hpp, store/pg_workflow_store.hpp): what ends a node and
// what starts after it are one transaction, two admins finishing a fan-in's last two parents at once start it
// once, failures follow their edges after the failure monitor's retries, a run is killed and a node re-run,
// and a scheduled instant has one run however many admins scan it.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "admin/catalog/workflow_service.hpp"
#include "admin/model/workflow_access.hpp"
#include "admin/results/alarm.hpp"
#include "admin/results/failure_monitor.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/store/pg_result_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "admin/store/pg_workflow_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using ::testing::ElementsAre;
using ::testing::SizeIs;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class WorkflowPg : public cwtest::PgFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    group_ = AddGroup();
    workflow_store_ = std::make_unique<PgWorkflowStore>(clock_, *pool_);
    workflows_ = std::make_unique<WorkflowService>(clock_, *workflow_store_, WorkflowService::Settings{});
    results_ = std::make_unique<PgResultStore>(*pool_);
    admin_user_ = AddUser("tester", "ADMIN");
  }
  // A console user (no password: these tests do not sign in); `role` ADMIN or USER.
  int AddUser(const std::string& name, const std::string& role) {
    return Exec(
               fmt::format("INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms)"
                           " VALUES ('{}', '$argon2id$none', '{}', 0, 0) RETURNING id",
                           name, role))[0][0]
        .as<int>();
  }
  // A job run only by its workflow (schedule NONE), with `param` and `retries`.
  int AddNodeJob(const std::string& param = "", int retries = 0) {
    return Exec(fmt::format(
        "INSERT INTO job (group_id, description, handler, param, retry_count, retry_backoff_s,"
        " glue_updated_ms, created_ms, updated_ms) VALUES ({}, 'node', 'demoJobHandler', '{}',"
        " {}, 0, 1, 1, 1) RETURNING id",
        group_, param, retries))[0][0]
        .as<int>();
  }
  // A workflow over `jobs` (node keys a, b, c, ... in order) with `edges`.
  int AddWorkflow(const std::vector<int>& jobs, std::vector<WorkflowEdge> edges) {
    Workflow w{.group_id = group_, .name = "wf", .run_as_user_id = admin_user_};
    for (std::size_t i = 0; i < jobs.size(); ++i)
      w.graph.nodes.push_back({.key = std::string(1, static_cast<char>('a' + i)), .job_id = jobs[i]});
    w.graph.edges = std::move(edges);
    auto saved = workflows_->Create(w);
    EXPECT_TRUE(saved.ok()) << (saved.ok() ? "" : saved.error().message);
    return saved.ok() ? saved->id : 0;
  }
  // An enabled workflow a -> b on the cron "* * * * * ?" over jobs `a` and `b`, saved.
  Result<Workflow> CreateEverySecond(int a, int b) {
    Workflow w{.group_id = group_,
               .name = "every second",
               .schedule_type = "CRON",
               .schedule_conf = "* * * * * ?",
               .enabled = true,
               .run_as_user_id = admin_user_};
    w.graph.nodes = {{.key = "a", .job_id = a}, {.key = "b", .job_id = b}};
    w.graph.edges = {{"a", "b", EdgeCondition::kSuccess}};
    return workflows_->Create(w);
  }
  CallbacksRecorded Callback(std::int64_t log_id, int code, const std::string& node = "node-a",
                             const std::optional<std::string>& output = std::nullopt) {
    return results_->RecordCallbacks(std::vector<HandleResult>{{.log_id = log_id,
                                                                .handle_code = code,
                                                                .handle_msg = fmt::format("done {}", log_id),
                                                                .output = output}},
                                     node, clock_.NowMs());
  }
  // The failure monitor's claim, retrying a fire while its row has retries left (at once).
  ResultStore::FailuresClaimed ClaimFailures() {
    return results_->ClaimFailures("node-a", clock_.NowMs(), 100, 0,
                                   [&](std::span<const FailedFire> claimed) {
                                     std::vector<PlannedRetry> planned;
                                     for (const auto& f : claimed) {
                                       if (f.retries_left <= 0) continue;
                                       planned.push_back({.job_id = f.job_id,
                                                          .group_id = f.group_id,
                                                          .due_ms = clock_.NowMs(),
                                                          .param = f.executor_param,
                                                          .retries_left = f.retries_left - 1,
                                                          .workflow_run_id = f.workflow_run_id,
                                                          .workflow_node = f.workflow_node,
                                                          .parent_log_id = f.log_id,
                                                          .note = "retry"});
                                     }
                                     return planned;
                                   });
  }
  std::map<std::string, std::string> States(std::int64_t run_id) {
    std::map<std::string, std::string> out;
    const auto run = workflows_->GetRun(run_id);
    for (const auto& n : run->nodes)
      out[n.key] = std::string(ToString(n.state));
    return out;
  }
  std::string RunState(std::int64_t run_id) {
    return std::string(ToString(workflows_->GetRun(run_id)->state));
  }
  std::string Param(std::int64_t log_id) {
    return Exec(fmt::format("SELECT executor_param FROM job_log WHERE id = {}", log_id))[0][0]
        .as<std::string>();
  }

  cwtest::FakeClock clock_{kT0};
  int group_ = 0;
  int admin_user_ = 0;  // a global ADMIN, who saved the workflows
  const NodeFirer tester_{.username = "tester", .admin = true};
  const NodeFirer alice_{.username = "alice", .admin = true};
  std::unique_ptr<PgWorkflowStore> workflow_store_;
  std::unique_ptr<WorkflowService> workflows_;
  std::unique_ptr<PgResultStore> results_;
};

constexpr auto kS = EdgeCondition::kSuccess;

class RecordingAlarms final : public AlarmSender {
 public:
  AlarmOutcome Send(const AlarmEvent& e) override {
    events.push_back(e);
    if (e.channels.empty()) return {};
    return {.attempted = true, .ok = true, .message = "sent"};
  }
  std::vector<AlarmEvent> events;
};

TEST_F(WorkflowPg, TwoAdminsFinishingAFanInsLastParentsAtOnceStartItOnceWithTheirResults) {
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    const int a = AddNodeJob();
    const int b = AddNodeJob();
    const int c = AddNodeJob();
    const int d = AddNodeJob(
        R"({"n": {{parents.b.output.n}}, "c": "{{parents.c.handle_msg}}", "p": "{{workflow.param}}"})");
    const int wf =
        AddWorkflow({a, b, c, d}, {{"a", "b", kS}, {"a", "c", kS}, {"b", "d", kS}, {"c", "d", kS}});
    auto run = workflows_->Trigger(wf, true, "run-param", tester_, "node-a");
    ASSERT_TRUE(run.ok());
    ASSERT_THAT(run->fires, SizeIs(1));
    EXPECT_EQ(run->fires[0].job_id, a);
    EXPECT_EQ(run->fires[0].type, TriggerType::kWorkflow);
    const auto mid = Callback(run->fires[0].log_id, 200).children;
    ASSERT_THAT(mid, SizeIs(2));
    EXPECT_EQ(States(run->run_id),
              (std::map<std::string, std::string>{
                  {"a", "SUCCESS"}, {"b", "RUNNING"}, {"c", "RUNNING"}, {"d", "WAITING"}}));
    // b and c end at once on two admins: one of the two transactions starts d, never both, never neither.
    auto fb =
        std::async(std::launch::async, [&] { return Callback(mid[0].log_id, 200, "node-a", R"({"n":7})"); });
    auto fc = std::async(std::launch::async, [&] { return Callback(mid[1].log_id, 200, "node-b"); });
    const auto from_b = fb.get().children;
    const auto from_c = fc.get().children;
    ASSERT_EQ(from_b.size() + from_c.size(), 1u);
    const auto& fire_d = from_b.empty() ? from_c[0] : from_b[0];
    EXPECT_EQ(fire_d.job_id, d);
    EXPECT_EQ(Param(fire_d.log_id), fmt::format(R"({{"n":7,"c":"done {}","p":"run-param"}})", mid[1].log_id));
    EXPECT_EQ(RunState(run->run_id), "RUNNING");
    EXPECT_TRUE(Callback(fire_d.log_id, 200).children.empty());
    EXPECT_EQ(RunState(run->run_id), "SUCCESS");
    EXPECT_GT(workflows_->GetRun(run->run_id)->end_ms, 0);
    // A repeated callback changes nothing.
    EXPECT_TRUE(Callback(fire_d.log_id, 200).children.empty());
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE workflow_run_id = {}", run->run_id)), 4);
  }
}

TEST_F(WorkflowPg, AFailureIsFinalOnlyAfterItsRetriesAndFollowsItsEdges) {
  const int a = AddNodeJob("", 1);  // one retry
  const int ok = AddNodeJob();
  const int cleanup = AddNodeJob();
  const int wf = AddWorkflow({a, ok, cleanup}, {{"a", "b", kS}, {"a", "c", EdgeCondition::kFailure}});
  auto run = workflows_->Trigger(wf, false, std::nullopt, tester_, "node-a");
  ASSERT_TRUE(run.ok());
  const auto first = run->fires.at(0).log_id;
  EXPECT_TRUE(Callback(first, 500).children.empty());
  // The failure monitor retries it: the retry is the node's fire now, and the node still runs.
  auto claimed = ClaimFailures();
  ASSERT_THAT(claimed.retries, SizeIs(1));
  EXPECT_TRUE(claimed.started.empty());
  const auto retry = claimed.retries[0].log_id;
  EXPECT_THAT(workflows_->GetRun(run->run_id)->nodes[0].log_ids, ElementsAre(first, retry));
  EXPECT_EQ(States(run->run_id).at("a"), "RUNNING");
  // The retry fails too, with no retry left: a FAILED, b skipped, c (on FAILURE) starts.
  EXPECT_TRUE(Callback(retry, 500).children.empty());
  claimed = ClaimFailures();
  EXPECT_TRUE(claimed.retries.empty());
  ASSERT_THAT(claimed.started, SizeIs(1));
  EXPECT_EQ(claimed.started[0].job_id, cleanup);
  EXPECT_EQ(States(run->run_id),
            (std::map<std::string, std::string>{{"a", "FAILED"}, {"b", "SKIPPED"}, {"c", "RUNNING"}}));
  EXPECT_TRUE(Callback(claimed.started[0].log_id, 200).children.empty());
  // a's failure had a FAILURE edge: handled, the run succeeds.
  EXPECT_EQ(RunState(run->run_id), "SUCCESS");
}

TEST_F(WorkflowPg, AKilledRunStopsItsNodesAndAFailedNodeIsRerunWithWhatFollowsIt) {
  const int a = AddNodeJob();
  const int b = AddNodeJob();
  const int wf = AddWorkflow({a, b}, {{"a", "b", kS}});
  auto run = workflows_->Trigger(wf, false, std::nullopt, tester_, "node-a");
  ASSERT_TRUE(run.ok());
  const auto first = run->fires.at(0).log_id;
  auto killed = workflows_->KillRun(run->run_id, alice_);
  ASSERT_TRUE(killed.ok());
  EXPECT_TRUE(killed->empty()) << "a was not accepted by an executor yet";
  EXPECT_EQ(RunState(run->run_id), "KILLED");
  EXPECT_EQ(States(run->run_id), (std::map<std::string, std::string>{{"a", "KILLED"}, {"b", "SKIPPED"}}));
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", first)), 0);
  EXPECT_EQ(workflows_->KillRun(run->run_id, alice_).error().kind, ErrorKind::kConflict);
  // A late callback of the killed fire changes nothing.
  EXPECT_TRUE(Callback(first, 200).children.empty());
  // b cannot be re-run (it was skipped); a can, and b follows it.
  EXPECT_EQ(workflows_->RerunNode(run->run_id, "b", alice_, "node-a").error().kind, ErrorKind::kConflict);
  EXPECT_EQ(workflows_->RerunNode(run->run_id, "zz", alice_, "node-a").error().kind, ErrorKind::kNotFound);
  auto rerun = workflows_->RerunNode(run->run_id, "a", alice_, "node-a");
  ASSERT_TRUE(rerun.ok());
  ASSERT_THAT(*rerun, SizeIs(1));
  EXPECT_EQ(RunState(run->run_id), "RUNNING");
  EXPECT_EQ(workflows_->RerunNode(run->run_id, "a", alice_, "node-a").error().kind, ErrorKind::kConflict);
  EXPECT_THAT(workflows_->GetRun(run->run_id)->nodes[0].log_ids, ElementsAre(first, (*rerun)[0].log_id));
  const auto next = Callback((*rerun)[0].log_id, 200).children;
  ASSERT_THAT(next, SizeIs(1));
  EXPECT_EQ(next[0].job_id, b);
  EXPECT_TRUE(Callback(next[0].log_id, 200).children.empty());
  EXPECT_EQ(RunState(run->run_id), "SUCCESS");
  EXPECT_THAT(workflows_->GetRun(run->run_id)->note, ::testing::HasSubstr("killed by alice"));
}

TEST_F(WorkflowPg, AScheduledInstantHasOneRunWhoeverScansItAndBadGraphsAreRefused) {
  const int a = AddNodeJob();
  const int b = AddNodeJob();
  const auto saved = CreateEverySecond(a, b);
  ASSERT_TRUE(saved.ok());
  EXPECT_GT(saved->next_fire_ms, kT0);
  // Its first fire is after the pre-read window of now (as a job's): the scan runs when it is near.
  clock_.AdvanceToWallMs(saved->next_fire_ms - 3000);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto first = store.Scan("node-a", 100, clock_, planner);
  // The instants within the pre-read window (5 s): one run each, each with a's fire due at its instant.
  ASSERT_FALSE(first.fires.empty());
  for (const auto& f : first.fires) {
    EXPECT_EQ(f.job_id, a);
    EXPECT_EQ(f.type, TriggerType::kWorkflow);
    EXPECT_EQ(f.scheduled_ms % 1000, 0);
  }
  const auto runs = Count(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {}", saved->id));
  EXPECT_EQ(runs, static_cast<int>(first.fires.size()));
  // Another admin scanning the same instants (the workflow's next fire set back) writes no second run.
  Exec(fmt::format("UPDATE workflow SET next_fire_ms = {} WHERE id = {}", saved->next_fire_ms, saved->id));
  ScanPlanner planner_b;
  EXPECT_TRUE(store.Scan("node-b", 100, clock_, planner_b).fires.empty());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {}", saved->id)), runs);

  // Saving: a job that does not exist names its node.
  Workflow bad{.group_id = group_, .name = "bad"};
  bad.graph.nodes = {{.key = "a", .job_id = a}, {.key = "x", .job_id = 999999}};
  const auto refused = workflows_->Create(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().fields.at(0).field, "nodes[1].job_id");
}

// The scan writes a scheduled workflow's runs up to 5 s ahead. Disabling the workflow withdraws those not
// started (runs, nodes and fires), a run under way goes on, and so does a changed graph's; deleting it
// withdraws the rest.
TEST_F(WorkflowPg, DisablingOrDeletingAWorkflowWithdrawsItsRunsWrittenAheadThatHaveNotStarted) {
  const int a = AddNodeJob();
  const int b = AddNodeJob();
  const auto saved = CreateEverySecond(a, b);
  ASSERT_TRUE(saved.ok());
  clock_.AdvanceToWallMs(saved->next_fire_ms);
  PgSchedulerStore store(*pool_);
  ScanPlanner planner;
  const auto scanned = store.Scan("node-a", 100, clock_, planner);
  ASSERT_GE(scanned.fires.size(), 4u) << "the instant now and those of the next seconds";
  const auto count = [&](const std::string& table, const std::string& where) {
    return Count(fmt::format("SELECT count(*) FROM {} WHERE {}", table, where));
  };
  const auto wf = fmt::format("workflow_id = {}", saved->id);
  const auto runs = count("workflow_run", wf);
  ASSERT_EQ(runs, static_cast<int>(scanned.fires.size()));
  // The run of now has started: its fire is claimed by the sender (sent at its instant).
  const auto now_it = std::find_if(scanned.fires.begin(), scanned.fires.end(),
                                   [&](const auto& f) { return f.scheduled_ms == clock_.NowMs(); });
  ASSERT_NE(now_it, scanned.fires.end());
  const auto& now_fire = *now_it;
  Exec(fmt::format("UPDATE fire_open SET dispatch_ms = {} WHERE log_id = {}", clock_.NowMs(),
                   now_fire.log_id));
  // The run of the next second: its fire claimed for that second (200 ms ahead), not sent yet.
  const auto next_it = std::find_if(scanned.fires.begin(), scanned.fires.end(),
                                    [&](const auto& f) { return f.scheduled_ms == clock_.NowMs() + 1000; });
  ASSERT_NE(next_it, scanned.fires.end());
  ASSERT_EQ(
      store.ClaimForDispatch("node-a", std::vector<std::int64_t>{next_it->log_id}, clock_.NowMs(), {}).size(),
      1u);
  // A changed graph withdraws nothing.
  ASSERT_TRUE(workflows_->Update(saved->id, [](Workflow& x) -> Result<void> {
    x.name = "renamed";
    return {};
  }));
  EXPECT_EQ(count("workflow_run", wf), runs);
  // Disabled: the started run stays; the others, their nodes and their fires are gone.
  ASSERT_TRUE(workflows_->Update(saved->id, [](Workflow& x) -> Result<void> {
    x.enabled = false;
    return {};
  }));
  EXPECT_EQ(count("workflow_run", wf), 1);
  EXPECT_EQ(count("workflow_run", wf + fmt::format(" AND scheduled_ms = {}", now_fire.scheduled_ms)), 1);
  EXPECT_EQ(count("workflow_run_node", fmt::format("run_id NOT IN (SELECT id FROM workflow_run)")), 0);
  // The claimed run of the next second went too (issue 48), named for node-a, which does not send it.
  EXPECT_EQ(store.WithdrawnAt(std::vector<std::int64_t>{next_it->scheduled_ms}),
            std::vector<std::int64_t>{next_it->log_id});
  for (const auto& f : scanned.fires) {
    const bool kept = f.log_id == now_fire.log_id;
    EXPECT_EQ(count("job_log", fmt::format("id = {}", f.log_id)), kept ? 1 : 0) << f.scheduled_ms;
    EXPECT_EQ(count("fire_open", fmt::format("log_id = {}", f.log_id)), kept ? 1 : 0) << f.scheduled_ms;
  }
  // The started run finishes as before: a's result starts b.
  EXPECT_THAT(Callback(now_fire.log_id, 200).children, SizeIs(1));

  // Enabled again and scanned ahead, then deleted: the runs not started go with their fires.
  ASSERT_TRUE(workflows_->Update(saved->id, [](Workflow& x) -> Result<void> {
    x.enabled = true;
    return {};
  }));
  const auto enabled = workflows_->Get(saved->id);
  clock_.AdvanceToWallMs(enabled->next_fire_ms - 3000);
  ScanPlanner planner_again;
  const auto ahead = store.Scan("node-a", 100, clock_, planner_again);
  ASSERT_FALSE(ahead.fires.empty());
  ASSERT_TRUE(workflows_->Delete(saved->id));
  for (const auto& f : ahead.fires) {
    EXPECT_EQ(count("job_log", fmt::format("id = {}", f.log_id)), 0);
    EXPECT_EQ(count("fire_open", fmt::format("log_id = {}", f.log_id)), 0);
  }
  EXPECT_EQ(count("workflow_run", wf), 0);
}

TEST_F(WorkflowPg, AFailedRunIsAlarmedOnceToItsGroupsChannelsAndRetentionDropsEndedRuns) {
  const int channel = Count(
      "INSERT INTO alert_channel (name, kind, target, created_ms, updated_ms)"
      " VALUES ('team', 'EMAIL', 'team@example.com', 0, 0) RETURNING id");
  Exec(fmt::format("UPDATE job_group SET alert_channel_ids = '{{{}}}' WHERE id = {}", channel, group_));
  const int a = AddNodeJob();
  const int b = AddNodeJob();
  const int wf = AddWorkflow({a, b}, {{"a", "b", kS}});
  auto run = workflows_->Trigger(wf, false, std::nullopt, tester_, "node-a");
  ASSERT_TRUE(run.ok());
  RecordingAlarms alarms;
  FailureMonitor monitor({.node_id = "node-a"}, clock_, *results_, alarms,
                         [](const Fire&, std::chrono::milliseconds) {});
  // a fails for good (no retries): the failure monitor ends the node, the run fails, and its alarm is due.
  EXPECT_TRUE(Callback(run->fires.at(0).log_id, 500).children.empty());
  auto round = monitor.RunOnce();
  EXPECT_EQ(RunState(run->run_id), "FAILED");
  // The fire's own alarm (its job has no channel) and the run's, in the same round or the next.
  round = monitor.RunOnce();
  std::vector<AlarmEvent> run_alarms;
  for (const auto& e : alarms.events)
    if (e.event == "workflow_run_failed") run_alarms.push_back(e);
  ASSERT_EQ(run_alarms.size(), 1u);
  EXPECT_EQ(run_alarms[0].log_id, run->run_id);
  EXPECT_EQ(run_alarms[0].workflow_id, wf);
  ASSERT_EQ(run_alarms[0].channels.size(), 1u);
  EXPECT_EQ(run_alarms[0].channels[0].target, "team@example.com");
  EXPECT_THAT(run_alarms[0].handle_msg, ::testing::HasSubstr("a FAILED (fire"));
  EXPECT_THAT(DefaultAlarmSender::Describe(run_alarms[0]), ::testing::HasSubstr("workflow"));
  EXPECT_EQ(Count(fmt::format("SELECT alarm_status FROM workflow_run WHERE id = {}", run->run_id)), 2);
  EXPECT_THAT(workflows_->GetRun(run->run_id)->note, ::testing::HasSubstr("alarm: sent"));
  monitor.RunOnce();
  std::size_t again = 0;
  for (const auto& e : alarms.events)
    again += e.event == "workflow_run_failed" ? 1 : 0;
  EXPECT_EQ(again, 1u) << "alarmed once";

  // Retention: an ended run older than the cutoff goes; a running one stays.
  auto running = workflows_->Trigger(wf, false, std::nullopt, tester_, "node-a");
  ASSERT_TRUE(running.ok());
  const auto dropped = results_->DropFiresBefore(kT0 + 1, 100);
  EXPECT_EQ(dropped.workflow_runs, 1);
  EXPECT_FALSE(workflows_->GetRun(run->run_id));
  EXPECT_TRUE(workflows_->GetRun(running->run_id));
}

}  // namespace

namespace {

using nlohmann::json;

// Security review 2, N3, on the database: the finding's attack through a workflow node and through a child
// job. A child whose parameter asks for GET /ok/report?id=<the parent's id> gets, from a parent whose
// output's id closes the string and names "method" and "url" again, one url (the id percent-encoded in it)
// and its own method; a text parameter that cannot take the value fails its fire with nothing sent, and its
// node fails.
TEST_F(WorkflowPg, N3_AParentsOutputGoesIntoAChildsParameterAsDataAndNeverAddsKeys) {
  const std::string get_report =
      R"({"url": "http://127.0.0.1:9/ok/report?id={{parent.output.id}}", "method": "GET"})";
  const std::string crafted =
      json{{"id", R"(7", "method": "DELETE", "url": "http://127.0.0.1:9/ok/admin/delete-everything)"}}.dump();
  const auto one_get = [](const std::string& param) {
    const auto sent = json::parse(param);
    EXPECT_EQ(sent.size(), 2u) << param;
    EXPECT_EQ(sent.at("method"), "GET") << param;
    EXPECT_THAT(sent.at("url").get<std::string>(),
                ::testing::StartsWith("http://127.0.0.1:9/ok/report?id=7%22%2C%20%22method"));
  };
  // A workflow: a -> b (JSON, as httpJobHandler reads it) and a -> c (text: refused at its fire).
  const int a = AddNodeJob();
  const int b = AddNodeJob(get_report);
  const int c = AddNodeJob("--id {{parent.output.id}}");
  const int wf = AddWorkflow({a, b, c}, {{"a", "b", kS}, {"a", "c", kS}});
  auto run = workflows_->Trigger(wf, false, std::nullopt, tester_, "node-a");
  ASSERT_TRUE(run.ok());
  const auto next = Callback(run->fires.at(0).log_id, 200, "node-a", crafted).children;
  ASSERT_THAT(next, SizeIs(1)) << "c's fire is written, failed, and not sent";
  EXPECT_EQ(next[0].job_id, b);
  one_get(*next[0].param);
  one_get(Param(next[0].log_id));
  const auto c_fire = workflows_->GetRun(run->run_id)->nodes.at(2).log_ids.at(0);
  const auto row = Exec(
      fmt::format("SELECT trigger_code, trigger_msg, retry_count FROM job_log WHERE id = {}", c_fire))[0];
  EXPECT_EQ(row[0].as<int>(), 500);
  EXPECT_THAT(row[1].as<std::string>(),
              ::testing::HasSubstr("parameter refused, nothing was sent: the value of "
                                   "{{parent.output.id}}"));
  EXPECT_EQ(row[2].as<int>(), 0) << "no retry of a refused parameter";
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", c_fire)), 0);
  // The failure monitor's claim ends c FAILED, as any failed trigger (no retry).
  const auto claimed = ClaimFailures();
  EXPECT_TRUE(claimed.retries.empty());
  EXPECT_EQ(States(run->run_id).at("c"), "FAILED");

  // A child job (child_job_ids): the same resolution, the same answer.
  const int child = AddNodeJob(get_report);
  const int parent = AddNodeJob();
  Exec(fmt::format("UPDATE job SET child_job_ids = '{{{}}}' WHERE id = {}", child, parent));
  const auto fire =
      AddFire(parent, group_, "MANUAL", clock_.NowMs(), 200, 0, 0, "http://127.0.0.1:9999/", clock_.NowMs());
  const auto children = Callback(fire, 200, "node-a", crafted).children;
  ASSERT_THAT(children, SizeIs(1));
  EXPECT_EQ(children[0].job_id, child);
  one_get(*children[0].param);
  one_get(Param(children[0].log_id));
}

}  // namespace
