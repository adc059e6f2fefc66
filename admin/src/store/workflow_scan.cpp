// The scan's part of workflow runs (store/workflow_table.hpp, ScanDue): the due workflows of the scanned
// schedule partitions become runs, planned as a job's schedule is.
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

}  // namespace cronwheel::admin::workflow_table
