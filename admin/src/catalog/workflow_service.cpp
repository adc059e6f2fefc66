#include "admin/catalog/workflow_service.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "admin/schedule/next_fire.hpp"

namespace cronwheel::admin {
namespace {

// Whether two versions of a workflow fire at the same instants: its schedule and time zone.
bool SameSchedule(const Workflow& a, const Workflow& b) {
  return a.schedule_type == b.schedule_type && a.schedule_conf == b.schedule_conf &&
         a.time_zone == b.time_zone;
}

// Its group and each node's job exist; an enabled workflow that is new, was disabled or has a new schedule
// gets its first fire from now (when nothing else is wrong), a disabled one none.
void CheckAndPlan(WorkflowStore::Tx& tx, Workflow& w, const Workflow* before, std::int64_t now_ms,
                  std::chrono::milliseconds pre_read, FieldErrors& errors) {
  if (!tx.GroupExists(w.group_id)) {
    errors.push_back({"group_id",
                      fmt::format("job group {} does not exist", w.group_id),
                      "not_found",
                      {{"id", w.group_id}}});
  }
  std::vector<int> ids;
  for (const auto& n : w.graph.nodes)
    ids.push_back(n.job_id);
  const auto existing = tx.ExistingJobs(ids);
  for (std::size_t i = 0; i < w.graph.nodes.size(); ++i) {
    const auto id = w.graph.nodes[i].job_id;
    if (existing.contains(id)) continue;
    errors.push_back({fmt::format("nodes[{}].job_id", i),
                      fmt::format("nodes[{}].job_id: job {} does not exist", i, id),
                      "not_found",
                      {{"id", id}}});
  }
  if (!w.enabled) {
    w.next_fire_ms = 0;
    return;
  }
  const bool schedule_changed = before == nullptr || !before->enabled || !SameSchedule(w, *before);
  if (!schedule_changed || !errors.empty()) return;
  const auto first = FirstFireOnStart(w.schedule_type, w.schedule_conf, w.time_zone, now_ms, pre_read);
  if (!first) {
    errors.push_back(
        {"schedule_conf", "the schedule has no fire after now: it cannot be enabled", "schedule"});
    return;
  }
  w.next_fire_ms = *first;
  w.stop_reason.clear();
}

Error NoWorkflow(int id) {
  return Error::NotFound(fmt::format("workflow {} not found", id));
}

}  // namespace

template <class T, class F>
Result<T> WorkflowService::InTransaction(F&& body) {
  std::optional<Result<T>> out;
  store_.Transact([&](WorkflowStore::Tx& tx) {
    out.emplace(body(tx));
    return out->ok();
  });
  return *std::move(out);
}

std::map<int, int> WorkflowService::JobGroups(const std::vector<int>& job_ids) {
  return store_.JobGroups(job_ids);
}

Result<Workflow> WorkflowService::Create(Workflow w) {
  return InTransaction<Workflow>([&](WorkflowStore::Tx& tx) -> Result<Workflow> {
    const auto now = clock_.NowMs();
    FieldErrors errors;
    w.id = 0;
    CheckAndPlan(tx, w, nullptr, now, settings_.pre_read, errors);
    if (!errors.empty()) return Error::Invalid("the workflow is not valid", std::move(errors));
    return tx.InsertWorkflow(w, now);
  });
}

Result<Workflow> WorkflowService::Update(int id, const Edit& edit) {
  return InTransaction<Workflow>([&](WorkflowStore::Tx& tx) -> Result<Workflow> {
    // Its schedule partition before its row, as a job's edit: a scan holding it has committed the runs it
    // wrote when this reads them, and the withdrawal sees them.
    tx.LockSchedulePartition(id);
    const auto stored = tx.LockWorkflow(id);
    if (!stored) return NoWorkflow(id);
    const Workflow& before = *stored;
    auto w = before;
    if (auto edited = edit(w); !edited) return edited.error();
    w.id = id;
    FieldErrors errors;
    const auto now = clock_.NowMs();
    CheckAndPlan(tx, w, &before, now, settings_.pre_read, errors);
    if (!errors.empty()) return Error::Invalid("the workflow is not valid", std::move(errors));
    // Runs already written for the old schedule or a disabled workflow, none of whose nodes has started, are
    // withdrawn (as a job's unsent fires are). A changed graph keeps them: a run keeps the graph it began
    // with.
    if (!w.enabled || !SameSchedule(w, before)) tx.WithdrawUnstarted(id);
    return tx.UpdateWorkflow(w, now);
  });
}

Result<void> WorkflowService::Delete(int id) {
  auto deleted = InTransaction<bool>([&](WorkflowStore::Tx& tx) -> Result<bool> {
    tx.LockSchedulePartition(id);  // as Update
    // Its runs not started yet go with it (their fires too); the fires of runs under way finish.
    tx.WithdrawUnstarted(id);
    if (!tx.DeleteWorkflow(id)) return NoWorkflow(id);
    return true;
  });
  if (!deleted) return deleted.error();
  return {};
}

std::optional<Workflow> WorkflowService::Get(int id) {
  return store_.Get(id);
}

std::vector<Workflow> WorkflowService::List(const std::optional<std::vector<int>>& group_ids) {
  return store_.List(group_ids);
}

Result<WorkflowService::Started> WorkflowService::Trigger(int id, bool by_api,
                                                          const std::optional<std::string>& param,
                                                          const NodeFirer& who, const std::string& node_id) {
  return InTransaction<Started>([&](WorkflowStore::Tx& tx) -> Result<Started> {
    auto run = tx.StartRun(id, by_api ? "API" : "MANUAL", param, who, node_id, clock_.NowMs());
    if (run.refused) return *std::move(run.refused);
    if (run.run_id == 0) return NoWorkflow(id);
    return Started{.run_id = run.run_id, .fires = std::move(run.fires)};
  });
}

std::optional<WorkflowRun> WorkflowService::GetRun(std::int64_t run_id) {
  return store_.GetRun(run_id);
}

std::vector<WorkflowRun> WorkflowService::ListRuns(int id, int limit) {
  return store_.ListRuns(id, limit);
}

Result<std::vector<KilledFire>> WorkflowService::KillRun(std::int64_t run_id, const NodeFirer& who) {
  return InTransaction<std::vector<KilledFire>>(
      [&](WorkflowStore::Tx& tx) { return tx.KillRun(run_id, who, clock_.NowMs()); });
}

Result<std::vector<Fire>> WorkflowService::RerunNode(std::int64_t run_id, const std::string& key,
                                                     const NodeFirer& who, const std::string& node_id) {
  return InTransaction<std::vector<Fire>>(
      [&](WorkflowStore::Tx& tx) { return tx.RerunNode(run_id, key, who, node_id, clock_.NowMs()); });
}

std::vector<std::int64_t> WorkflowService::OtherOpenFires(int job_id, const std::string& executor_address,
                                                          std::int64_t run_id) {
  return store_.OtherOpenFires(job_id, executor_address, run_id);
}

std::vector<Fire> WorkflowService::FireKilled(std::int64_t log_id, const std::string& node_id) {
  std::vector<Fire> started;
  store_.Transact([&](WorkflowStore::Tx& tx) {
    started = tx.EndKilledNode(log_id, node_id, clock_.NowMs());
    return true;
  });
  return started;
}

}  // namespace cronwheel::admin
