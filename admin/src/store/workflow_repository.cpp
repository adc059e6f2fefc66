#include "admin/store/workflow_repository.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/schedule/next_fire.hpp"
#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"

namespace cronwheel::admin {

using nlohmann::json;

namespace {

constexpr const char* kColumns =
    "id, group_id, name, nodes::text AS nodes, edges::text AS edges, param, schedule_type, schedule_conf, "
    "time_zone, misfire_strategy, enabled, next_fire_ms, last_fire_ms, stop_reason, created_ms, updated_ms, "
    "COALESCE(run_as_user_id, 0) AS run_as_user_id, "
    "COALESCE((SELECT u.username FROM app_user u WHERE u.id = workflow.run_as_user_id), '') AS run_as";

Workflow FromRow(const pqxx::row& r) {
  Workflow w{.id = r["id"].as<int>(),
             .group_id = r["group_id"].as<int>(),
             .name = r["name"].as<std::string>(),
             .param = r["param"].as<std::string>(),
             .schedule_type = r["schedule_type"].as<std::string>(),
             .schedule_conf = r["schedule_conf"].as<std::string>(),
             .time_zone = r["time_zone"].as<std::string>(),
             .misfire_strategy = r["misfire_strategy"].as<std::string>(),
             .enabled = r["enabled"].as<bool>(),
             .next_fire_ms = r["next_fire_ms"].as<std::int64_t>(),
             .last_fire_ms = r["last_fire_ms"].as<std::int64_t>(),
             .stop_reason = r["stop_reason"].as<std::string>(),
             .created_ms = r["created_ms"].as<std::int64_t>(),
             .updated_ms = r["updated_ms"].as<std::int64_t>(),
             .run_as_user_id = r["run_as_user_id"].as<int>(),
             .run_as = r["run_as"].as<std::string>()};
  auto graph = GraphFromJson(json::parse(r["nodes"].c_str()), json::parse(r["edges"].c_str()));
  if (graph.ok()) w.graph = std::move(*graph);
  return w;
}

// Each node's job exists; an enabled workflow whose schedule or state changed gets its first fire.
void CheckAndPlan(pqxx::transaction_base& tx, Workflow& w, const Workflow* before, std::int64_t now_ms,
                  std::chrono::milliseconds pre_read, FieldErrors& errors) {
  if (tx.exec_params(R"sql(SELECT 1 FROM job_group WHERE id = $1)sql", w.group_id).empty()) {
    errors.push_back({"group_id",
                      fmt::format("job group {} does not exist", w.group_id),
                      "not_found",
                      {{"id", w.group_id}}});
  }
  std::vector<int> ids;
  for (const auto& n : w.graph.nodes)
    ids.push_back(n.job_id);
  std::set<int> existing;
  for (const auto& r :
       tx.exec_params(R"sql(SELECT id FROM job WHERE id = ANY($1::int[]))sql", PgArray<int>(ids)))
    existing.insert(r["id"].as<int>());
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
  const bool schedule_changed = before == nullptr || !before->enabled ||
                                before->schedule_type != w.schedule_type ||
                                before->schedule_conf != w.schedule_conf || before->time_zone != w.time_zone;
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

pqxx::row Save(pqxx::transaction_base& tx, const Workflow& w, std::int64_t now_ms) {
  const auto graph = ToJson(w.graph);
  const auto sql = w.id == 0 ? fmt::format(R"sql(
    INSERT INTO workflow (group_id, name, nodes, edges, param, schedule_type, schedule_conf, time_zone,
                          misfire_strategy, enabled, next_fire_ms, stop_reason, created_ms, updated_ms,
                          run_as_user_id)
    SELECT $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14,
           (SELECT id FROM app_user WHERE id = $15) WHERE $1::int = 0
    RETURNING {}
  )sql",
                                           kColumns)
                             : fmt::format(R"sql(
    UPDATE workflow
       SET group_id = $2, name = $3, nodes = $4::jsonb, edges = $5::jsonb, param = $6, schedule_type = $7,
           schedule_conf = $8, time_zone = $9, misfire_strategy = $10, enabled = $11, next_fire_ms = $12,
           stop_reason = $13, updated_ms = greatest($14, updated_ms + 1),
           run_as_user_id = (SELECT id FROM app_user WHERE id = $15)
     WHERE id = $1
    RETURNING {}
  )sql",
                                           kColumns);
  return tx.exec_params1(sql, w.id, w.group_id, w.name, DumpLossy(graph["nodes"]), DumpLossy(graph["edges"]),
                         w.param, w.schedule_type, w.schedule_conf, w.time_zone, w.misfire_strategy,
                         w.enabled, w.next_fire_ms, w.stop_reason, now_ms, w.run_as_user_id);
}

}  // namespace

std::map<int, int> WorkflowRepository::JobGroups(const std::vector<int>& job_ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::map<int, int> out;
    for (const auto& r : tx.exec_params(R"sql(SELECT id, group_id FROM job WHERE id = ANY($1::int[]))sql",
                                        PgArray<int>(job_ids)))
      out[r["id"].as<int>()] = r["group_id"].as<int>();
    return out;
  });
}

Result<Workflow> WorkflowRepository::Create(Workflow w) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Workflow> {
    pqxx::work tx(conn);
    const auto now = clock_.NowMs();
    FieldErrors errors;
    w.id = 0;
    CheckAndPlan(tx, w, nullptr, now, settings_.pre_read, errors);
    if (!errors.empty()) return Error::Invalid("the workflow is not valid", std::move(errors));
    auto saved = FromRow(Save(tx, w, now));
    tx.commit();
    return saved;
  });
}

Result<Workflow> WorkflowRepository::Update(int id, const Edit& edit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Workflow> {
    pqxx::work tx(conn);
    // Its schedule partition before its row, as a job's edit (job_table::LockSchedule): a scan holding it
    // has committed the runs it wrote when this reads them, and WithdrawUnstarted sees them.
    job_table::LockSchedulePartition(tx, id);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM workflow WHERE id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("workflow {} not found", id));
    const auto before = FromRow(rows[0]);
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
    const bool schedule_changed = w.schedule_type != before.schedule_type ||
                                  w.schedule_conf != before.schedule_conf || w.time_zone != before.time_zone;
    if (!w.enabled || schedule_changed) workflow_table::WithdrawUnstarted(tx, id, clock_);
    auto saved = FromRow(Save(tx, w, now));
    tx.commit();
    return saved;
  });
}

Result<void> WorkflowRepository::Delete(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    job_table::LockSchedulePartition(tx, id);  // as Update
    // Its runs not started yet go with it (their fires too); the fires of runs under way finish.
    workflow_table::WithdrawUnstarted(tx, id, clock_);
    if (tx.exec_params(R"sql(DELETE FROM workflow WHERE id = $1)sql", id).affected_rows() == 0) {
      return Error::NotFound(fmt::format("workflow {} not found", id));
    }
    tx.commit();
    return {};
  });
}

std::optional<Workflow> WorkflowRepository::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Workflow> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM workflow WHERE id = $1", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  });
}

std::vector<Workflow> WorkflowRepository::List(const std::optional<std::vector<int>>& group_ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<Workflow> out;
    const auto rows =
        group_ids ? tx.exec_params(
                        fmt::format("SELECT {} FROM workflow WHERE group_id = ANY($1::int[]) ORDER BY id",
                                    kColumns),
                        PgArray<int>(*group_ids))
                  : tx.exec(fmt::format("SELECT {} FROM workflow ORDER BY id", kColumns));
    for (const auto& r : rows)
      out.push_back(FromRow(r));
    return out;
  });
}

Result<WorkflowRepository::Started> WorkflowRepository::Trigger(int id, bool by_api,
                                                                const std::optional<std::string>& param,
                                                                const NodeFirer& who,
                                                                const std::string& node_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Started> {
    pqxx::work tx(conn);
    const auto now = clock_.NowMs();
    auto run = workflow_table::StartRun(tx,
                                        {.workflow_id = id,
                                         .trigger_type = by_api ? "API" : "MANUAL",
                                         .scheduled_ms = now,
                                         .param = param,
                                         .created_by = who.username,
                                         .firer = &who},
                                        node_id, now);
    if (run.refused) return *std::move(run.refused);
    if (run.run_id == 0) return Error::NotFound(fmt::format("workflow {} not found", id));
    tx.commit();
    return Started{.run_id = run.run_id, .fires = std::move(run.fires)};
  });
}

std::optional<WorkflowRun> WorkflowRepository::GetRun(std::int64_t run_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return workflow_table::GetRun(tx, run_id);
  });
}

std::vector<WorkflowRun> WorkflowRepository::ListRuns(int id, int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<WorkflowRun> out;
    for (const auto& r : tx.exec_params(
             R"sql(SELECT id FROM workflow_run WHERE workflow_id = $1 ORDER BY id DESC LIMIT $2)sql", id,
             limit)) {
      if (auto run = workflow_table::GetRun(tx, r["id"].as<std::int64_t>())) out.push_back(std::move(*run));
    }
    return out;
  });
}

Result<std::vector<KilledFire>> WorkflowRepository::KillRun(std::int64_t run_id, const NodeFirer& who) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<std::vector<KilledFire>> {
    pqxx::work tx(conn);
    auto killed = workflow_table::KillRun(tx, run_id, who, clock_.NowMs());
    if (!killed) return killed.error();
    tx.commit();
    return killed;
  });
}

Result<std::vector<Fire>> WorkflowRepository::RerunNode(std::int64_t run_id, const std::string& key,
                                                        const NodeFirer& who, const std::string& node_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<std::vector<Fire>> {
    pqxx::work tx(conn);
    auto fires = workflow_table::RerunNode(tx, run_id, key, who, node_id, clock_.NowMs());
    if (!fires) return fires.error();
    tx.commit();
    return std::move(*fires);
  });
}

std::vector<std::int64_t> WorkflowRepository::OtherOpenFires(int job_id, const std::string& executor_address,
                                                             std::int64_t run_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<std::int64_t> out;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT o.log_id FROM fire_open o
             JOIN job_log l ON l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
            WHERE o.job_id = $1 AND o.executor_address = $2 AND o.trigger_ms > 0 AND l.workflow_run_id <> $3
            ORDER BY o.log_id LIMIT 20
         )sql",
                                        job_id, executor_address, run_id))
      out.push_back(r[0].as<std::int64_t>());
    return out;
  });
}

std::vector<Fire> WorkflowRepository::FireKilled(std::int64_t log_id, const std::string& node_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(R"sql(
      SELECT workflow_run_id, workflow_node, broadcast_log_id FROM job_log WHERE id = $1 AND workflow_run_id <> 0
    )sql",
                                     log_id);
    if (rows.empty()) return std::vector<Fire>{};
    const auto broadcast = rows[0]["broadcast_log_id"].as<std::int64_t>();
    const workflow_table::NodeEnd end{.run_id = rows[0]["workflow_run_id"].as<std::int64_t>(),
                                      .node = rows[0]["workflow_node"].as<std::string>(),
                                      .log_id = broadcast != 0 ? broadcast : log_id,
                                      .state = NodeState::kKilled};
    auto started = workflow_table::EndNodes(tx, {&end, 1}, node_id, clock_.NowMs());
    tx.commit();
    return started;
  });
}

}  // namespace cronwheel::admin
