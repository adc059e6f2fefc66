// The scan's part of workflow runs (store/workflow_table.hpp): the due workflows of the scanned schedule
// partitions become runs, planned as a job's schedule is (ScanDue); the runs it wrote ahead that have not
// started are withdrawn when their workflow is disabled, rescheduled or deleted (WithdrawUnstarted).
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"

namespace cronwheel::admin::workflow_table {

std::pair<std::vector<CommittedFire>, std::size_t> ScanDue(pqxx::transaction_base& tx,
                                                           std::int64_t horizon_ms, int total,
                                                           std::span<const int> held, int limit,
                                                           ScanPlanner& planner, std::string_view node_id,
                                                           std::int64_t now_ms) {
  std::vector<DueJob> due;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT id, group_id, schedule_type, schedule_conf, time_zone, misfire_strategy, next_fire_ms
           FROM workflow
          WHERE enabled AND next_fire_ms <= $1 AND id % $3 = ANY($4::int[])
          ORDER BY next_fire_ms LIMIT $2
       )sql",
                                      horizon_ms, limit, total, PgArray<int>(held))) {
    due.push_back(
        {.id = r["id"].as<int>(),
         .group_id = r["group_id"].as<int>(),
         .schedule_type = r["schedule_type"].as<std::string>(),
         .schedule_conf = r["schedule_conf"].as<std::string>(),
         .time_zone = r["time_zone"].as<std::string>(),
         .misfire_strategy =
             ParseMisfireStrategy(r["misfire_strategy"].c_str()).value_or(MisfireStrategy::kDoNothing),
         .next_fire_ms = r["next_fire_ms"].as<std::int64_t>()});
  }
  if (due.empty()) return {{}, 0};
  const auto plan = planner.Plan(due, now_ms);
  std::vector<CommittedFire> out;
  for (const auto& f : plan.fires) {
    const auto type = f.type == TriggerType::kMisfire ? "MISFIRE" : "CRON";
    auto run = StartRun(tx,
                        {.workflow_id = f.job_id,
                         .trigger_type = type,
                         .scheduled_ms = f.scheduled_ms,
                         .skipped = f.skipped,
                         .note = f.note},
                        node_id, now_ms);
    for (auto& fire : run.fires) {
      out.push_back({.log_id = fire.log_id,
                     .job_id = fire.job_id,
                     .scheduled_ms = fire.scheduled_ms,
                     .type = TriggerType::kWorkflow,
                     .param = std::move(fire.param)});
    }
  }
  job_table::AdvanceSchedules(tx, "workflow", plan.advances);
  return {std::move(out), due.size()};
}

int WithdrawUnstarted(pqxx::transaction_base& tx, int workflow_id, std::int64_t after_ms) {
  int withdrawn = 0;
  const auto runs = tx.exec_params(R"sql(
    SELECT r.id FROM workflow_run r
     WHERE r.workflow_id = $1 AND r.trigger_type IN ('CRON', 'MISFIRE') AND r.state = 'RUNNING'
       AND r.scheduled_ms > $2
     ORDER BY r.id
       FOR UPDATE OF r
  )sql",
                                   workflow_id, after_ms);
  for (const auto& r : runs) {
    const auto run_id = r["id"].as<std::int64_t>();
    std::vector<std::int64_t> log_ids;
    for (const auto& f : tx.exec_params(
             R"sql(SELECT f FROM workflow_run_node n, unnest(n.log_ids) f WHERE n.run_id = $1)sql", run_id)) {
      log_ids.push_back(f[0].as<std::int64_t>());
    }
    const auto unclaimed = tx.exec_params(R"sql(
      SELECT log_id FROM fire_open
       WHERE log_id = ANY($1::bigint[]) AND trigger_ms = 0 AND dispatch_ms = 0
       ORDER BY log_id
         FOR UPDATE
    )sql",
                                          PgArray<std::int64_t>(log_ids));
    if (unclaimed.size() != log_ids.size()) continue;  // a node has started: the run goes on
    tx.exec_params(R"sql(
      WITH o AS (DELETE FROM fire_open WHERE log_id = ANY($1::bigint[]) RETURNING log_id, scheduled_ms)
      DELETE FROM job_log l USING o WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
    )sql",
                   PgArray<std::int64_t>(log_ids));
    tx.exec_params(R"sql(DELETE FROM workflow_run WHERE id = $1)sql", run_id);
    ++withdrawn;
  }
  return withdrawn;
}

}  // namespace cronwheel::admin::workflow_table
