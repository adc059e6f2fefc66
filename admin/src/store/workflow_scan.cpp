// The scan's part of workflow runs (store/workflow_table.hpp): the due workflows of the scanned schedule
// partitions become runs, planned as a job's schedule is (ScanDue); the runs it wrote ahead that have not
// started are withdrawn when their workflow is disabled, rescheduled or deleted (WithdrawUnstarted).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/store/fire_log.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"

namespace cronwheel::admin::workflow_table {

namespace {

// Whom a due workflow's scheduled runs fire for (admin/model/workflow_access.hpp): its last editor, with
// the roles that user has now; nullopt when there is none (deleted, or never known).
std::optional<NodeFirer> RunAs(const pqxx::row& r) {
  if (r["run_as"].is_null()) return std::nullopt;
  NodeFirer who{.username = r["run_as"].as<std::string>(), .admin = r["run_as_admin"].as<bool>()};
  for (const auto& g : nlohmann::json::parse(r["run_as_groups"].c_str())) {
    if (const auto role = ParseGroupRole(g.at("r").get<std::string>())) {
      who.groups.push_back({.group_id = g.at("g").get<int>(), .role = *role});
    }
  }
  return who;
}

// A scheduled instant whose run may not fire its nodes for the workflow's last editor: the workflow is
// stopped (stop_reason says why, as a job whose schedule ended is), and the instant is recorded as one FAILED
// run of SKIPPED nodes, waiting for its alarm (the failure monitor sends it to the group's channels), so the
// people who own it hear of it once.
void StopRefused(pqxx::transaction_base& tx, const pqxx::row& w, const std::string& why,
                 std::int64_t now_ms) {
  const auto id = w["id"].as<int>();
  const auto run = tx.exec_params(R"sql(
    INSERT INTO workflow_run (workflow_id, group_id, trigger_type, scheduled_ms, param, graph, state, start_ms,
                              end_ms, note, created_by, alarm_status)
    SELECT id, group_id, 'CRON', next_fire_ms, param, jsonb_build_object('nodes', nodes, 'edges', edges),
           'FAILED', $2, $2, $3, $4, 1
      FROM workflow WHERE id = $1
    ON CONFLICT (workflow_id, scheduled_ms) WHERE trigger_type IN ('CRON', 'MISFIRE') DO NOTHING
    RETURNING id, graph
  )sql",
                                  id, now_ms, "not run, and the workflow was stopped: " + why,
                                  w["run_as"].is_null() ? std::string() : w["run_as"].as<std::string>());
  if (!run.empty()) {
    tx.exec_params(R"sql(
      INSERT INTO workflow_run_node (run_id, key, job_id, state, end_ms)
      SELECT $1, n->>'key', (n->>'job_id')::int, 'SKIPPED', $2 FROM jsonb_array_elements($3::jsonb -> 'nodes') AS n
    )sql",
                   run[0]["id"].as<std::int64_t>(), now_ms, run[0]["graph"].c_str());
  }
  tx.exec_params(R"sql(
    UPDATE workflow SET enabled = FALSE, next_fire_ms = 0, stop_reason = $2, updated_ms = greatest($3, updated_ms + 1)
     WHERE id = $1
  )sql",
                 id, why, now_ms);
}

}  // namespace

std::pair<std::vector<CommittedFire>, std::size_t> ScanDue(pqxx::transaction_base& tx,
                                                           std::int64_t horizon_ms, int total,
                                                           std::span<const int> held, int limit,
                                                           ScanPlanner& planner, std::string_view node_id,
                                                           std::int64_t now_ms) {
  std::vector<DueJob> due;
  const auto rows = tx.exec_params(R"sql(
    SELECT w.id, w.group_id, w.schedule_type, w.schedule_conf, w.time_zone, w.misfire_strategy, w.next_fire_ms,
           w.nodes::text AS nodes, w.edges::text AS edges, u.username AS run_as, u.role = 'ADMIN' AS run_as_admin,
           COALESCE((SELECT json_agg(json_build_object('g', ug.group_id, 'r', ug.role))
                       FROM app_user_group ug WHERE ug.user_id = u.id), '[]')::text AS run_as_groups
      FROM workflow w LEFT JOIN app_user u ON u.id = w.run_as_user_id
     WHERE w.enabled AND w.next_fire_ms <= $1 AND w.id % $3 = ANY($4::int[])
     ORDER BY w.next_fire_ms LIMIT $2
  )sql",
                                   horizon_ms, limit, total, PgArray<int>(held));
  // Its runs fire its nodes for its last editor, whose roles must still allow each node (security review 2,
  // N4): else it is stopped here, before any run of it is planned. One read of the nodes' jobs' groups.
  std::vector<std::optional<WorkflowGraph>> graphs;
  std::vector<int> job_ids;
  for (const auto& r : rows) {
    auto g =
        GraphFromJson(nlohmann::json::parse(r["nodes"].c_str()), nlohmann::json::parse(r["edges"].c_str()));
    graphs.push_back(g.ok() ? std::optional(std::move(*g)) : std::nullopt);
    if (graphs.back()) {
      for (const auto& n : graphs.back()->nodes)
        job_ids.push_back(n.job_id);
    }
  }
  const auto group_of = job_ids.empty() ? std::map<int, int>{} : JobGroupsOf(tx, job_ids);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const auto run_as = RunAs(r);
    std::optional<std::string> refused;
    if (!run_as) {
      refused = "no user may fire its nodes for it (the user who saved it last was deleted): save it again";
    } else if (graphs[i]) {
      std::vector<std::string> keys;
      for (const auto& n : graphs[i]->nodes)
        keys.push_back(n.key);
      if (auto may = MayFireNodes(*run_as, NodeJobsIn(*graphs[i], keys, group_of)); !may) {
        refused = fmt::format(
            "its scheduled runs fire its nodes for {}, who saved it last, and {}: save it again as someone "
            "who may",
            run_as->username, may.error().message);
      }
    }
    if (refused) {
      StopRefused(tx, r, *refused, now_ms);
      continue;
    }
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
  if (due.empty()) return {{}, rows.size()};
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
  return {std::move(out), rows.size()};
}

int WithdrawUnstarted(pqxx::transaction_base& tx, int workflow_id, ringwheel::Clock& clock) {
  // The seconds of its runs to come, shared, then now: as fire_log::WithdrawUnsent, so a sender has either
  // read the withdrawals of a second already (and now is past it) or waits for this commit.
  tx.exec_params(R"sql(
    SELECT pg_advisory_xact_lock_shared($3, (s / 1000 % 2147483647)::int)
      FROM (SELECT DISTINCT scheduled_ms AS s FROM workflow_run
             WHERE workflow_id = $1 AND trigger_type IN ('CRON', 'MISFIRE') AND state = 'RUNNING'
               AND scheduled_ms > $2
             ORDER BY 1) i
  )sql",
                 workflow_id, clock.NowMs(), fire_log::kInstantLockClass);
  const auto after_ms = clock.NowMs();
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
    // Claimed for their second (dispatch_ms) counts as not started while no executor has accepted them: the
    // claimed ones are named in fire_withdrawn for the admin holding them, which reads it at the second
    // (fire_log::WithdrawUnsent).
    const auto unsent = tx.exec_params(R"sql(
      SELECT log_id FROM fire_open
       WHERE log_id = ANY($1::bigint[]) AND trigger_ms = 0
       ORDER BY log_id
         FOR UPDATE
    )sql",
                                       PgArray<std::int64_t>(log_ids));
    if (unsent.size() != log_ids.size()) continue;  // a node has started: the run goes on
    tx.exec_params(R"sql(
      WITH o AS (
        DELETE FROM fire_open WHERE log_id = ANY($1::bigint[])
        RETURNING log_id, scheduled_ms, dispatch_ms, job_id),
      named AS (
        INSERT INTO fire_withdrawn (log_id, scheduled_ms, job_id, withdrawn_ms)
        SELECT log_id, scheduled_ms, job_id, $2 FROM o WHERE dispatch_ms <> 0
        ON CONFLICT (log_id) DO NOTHING)
      DELETE FROM job_log l USING o WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
    )sql",
                   PgArray<std::int64_t>(log_ids), after_ms);
    tx.exec_params(R"sql(DELETE FROM workflow_run WHERE id = $1)sql", run_id);
    ++withdrawn;
  }
  return withdrawn;
}

}  // namespace cronwheel::admin::workflow_table
