// WorkflowStore on PostgreSQL (admin/store/pg_workflow_store.hpp): statements and the run owner's steps; the
// rules of a workflow's definition are WorkflowService's.
#include "admin/store/pg_workflow_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

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

class PgTx final : public WorkflowStore::Tx {
 public:
  PgTx(pqxx::transaction_base& tx, ringwheel::Clock& clock) : tx_(tx), clock_(clock) {}

  void LockSchedulePartition(int id) override { job_table::LockSchedulePartition(tx_, id); }
  std::optional<Workflow> LockWorkflow(int id) override {
    const auto rows =
        tx_.exec_params(fmt::format("SELECT {} FROM workflow WHERE id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  }
  bool GroupExists(int group_id) override {
    return !tx_.exec_params(R"sql(SELECT 1 FROM job_group WHERE id = $1)sql", group_id).empty();
  }
  std::set<int> ExistingJobs(std::span<const int> job_ids) override {
    std::set<int> existing;
    for (const auto& r :
         tx_.exec_params(R"sql(SELECT id FROM job WHERE id = ANY($1::int[]))sql", PgArray<int>(job_ids)))
      existing.insert(r["id"].as<int>());
    return existing;
  }
  Workflow InsertWorkflow(const Workflow& workflow, std::int64_t now_ms) override {
    Workflow w = workflow;
    w.id = 0;
    return FromRow(Save(tx_, w, now_ms));
  }
  Workflow UpdateWorkflow(const Workflow& workflow, std::int64_t now_ms) override {
    return FromRow(Save(tx_, workflow, now_ms));
  }
  int WithdrawUnstarted(int id) override { return workflow_table::WithdrawUnstarted(tx_, id, clock_); }
  bool DeleteWorkflow(int id) override {
    return tx_.exec_params(R"sql(DELETE FROM workflow WHERE id = $1)sql", id).affected_rows() > 0;
  }
  WorkflowStore::RunStarted StartRun(int id, const std::string& trigger_type,
                                     const std::optional<std::string>& param, const NodeFirer& firer,
                                     const std::string& node_id, std::int64_t now_ms) override {
    auto run = workflow_table::StartRun(tx_,
                                        {.workflow_id = id,
                                         .trigger_type = trigger_type,
                                         .scheduled_ms = now_ms,
                                         .param = param,
                                         .created_by = firer.username,
                                         .firer = &firer},
                                        node_id, now_ms);
    return WorkflowStore::RunStarted{
        .run_id = run.run_id, .fires = std::move(run.fires), .refused = std::move(run.refused)};
  }
  Result<std::vector<KilledFire>> KillRun(std::int64_t run_id, const NodeFirer& who,
                                          std::int64_t now_ms) override {
    return workflow_table::KillRun(tx_, run_id, who, now_ms);
  }
  Result<std::vector<Fire>> RerunNode(std::int64_t run_id, const std::string& key, const NodeFirer& who,
                                      const std::string& node_id, std::int64_t now_ms) override {
    return workflow_table::RerunNode(tx_, run_id, key, who, node_id, now_ms);
  }
  std::vector<Fire> EndKilledNode(std::int64_t log_id, const std::string& node_id,
                                  std::int64_t now_ms) override {
    const auto rows = tx_.exec_params(R"sql(
      SELECT workflow_run_id, workflow_node, broadcast_log_id FROM job_log WHERE id = $1 AND workflow_run_id <> 0
    )sql",
                                      log_id);
    if (rows.empty()) return {};
    const auto broadcast = rows[0]["broadcast_log_id"].as<std::int64_t>();
    const workflow_table::NodeEnd end{.run_id = rows[0]["workflow_run_id"].as<std::int64_t>(),
                                      .node = rows[0]["workflow_node"].as<std::string>(),
                                      .log_id = broadcast != 0 ? broadcast : log_id,
                                      .state = NodeState::kKilled};
    return workflow_table::EndNodes(tx_, {&end, 1}, node_id, now_ms);
  }

 private:
  pqxx::transaction_base& tx_;
  ringwheel::Clock& clock_;
};
}  // namespace

void PgWorkflowStore::Transact(const std::function<bool(Tx&)>& body) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    PgTx adapter(tx, clock_);
    if (body(adapter)) tx.commit();
  });
}

std::optional<Workflow> PgWorkflowStore::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Workflow> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM workflow WHERE id = $1", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  });
}

std::vector<Workflow> PgWorkflowStore::List(const std::optional<std::vector<int>>& group_ids) {
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

std::map<int, int> PgWorkflowStore::JobGroups(const std::vector<int>& job_ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::map<int, int> out;
    for (const auto& r : tx.exec_params(R"sql(SELECT id, group_id FROM job WHERE id = ANY($1::int[]))sql",
                                        PgArray<int>(job_ids)))
      out[r["id"].as<int>()] = r["group_id"].as<int>();
    return out;
  });
}

std::optional<WorkflowRun> PgWorkflowStore::GetRun(std::int64_t run_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return workflow_table::GetRun(tx, run_id);
  });
}

std::vector<WorkflowRun> PgWorkflowStore::ListRuns(int id, int limit) {
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

std::vector<std::int64_t> PgWorkflowStore::OtherOpenFires(int job_id, const std::string& executor_address,
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

}  // namespace cronwheel::admin
