// The writes of the job table that the scheduler and the results areas make (store/job_table.hpp), beside
// the REST API's in store/job_repository.cpp: together the job table's owner (docs/architecture.md "Who
// writes which table").
#include "store/job_table.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::job_table {

void Advance(pqxx::transaction_base& tx, std::span<const JobAdvance> advances) {
  AdvanceSchedules(tx, "job", advances);
}

void AdvanceSchedules(pqxx::transaction_base& tx, std::string_view table,
                      std::span<const JobAdvance> advances) {
  if (advances.empty()) return;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& a : advances) {
    rows.push_back({{"id", a.job_id},
                    {"e", a.expected_next_ms},
                    {"n", a.stop ? 0 : a.next_fire_ms},
                    {"l", a.last_fire_ms},
                    {"x", a.stop},
                    {"r", a.stop_reason}});
  }
  tx.exec_params(fmt::format(R"sql(
    UPDATE {0} t
       SET next_fire_ms = v.n,
           last_fire_ms = CASE WHEN v.l > 0 THEN v.l ELSE t.last_fire_ms END,
           enabled = NOT v.x,
           stop_reason = CASE WHEN v.x THEN v.r ELSE t.stop_reason END
      FROM json_to_recordset($1::json) AS v(id int, e bigint, n bigint, l bigint, x boolean, r text)
     WHERE t.id = v.id AND t.enabled AND t.next_fire_ms = v.e
  )sql",
                             table),
                 DumpLossy(rows));
}

void ResumeFixDelay(pqxx::transaction_base& tx, std::span<const int> job_ids, std::int64_t now_ms) {
  if (job_ids.empty()) return;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT id, schedule_conf, time_zone FROM job
          WHERE id = ANY($1::int[]) AND enabled AND schedule_type = 'FIX_DELAY' AND next_fire_ms = $2
       )sql",
                                      PgArray<int>(job_ids), kAwaitingCompletion)) {
    tx.exec_params(
        R"sql(UPDATE job SET next_fire_ms = $2 WHERE id = $1 AND next_fire_ms = $3)sql", r["id"].as<int>(),
        NextAfterCompletion(r["schedule_conf"].c_str(), r["time_zone"].c_str(), now_ms), kAwaitingCompletion);
  }
}

std::vector<DueRunOnce> TakeDueRunOnce(pqxx::transaction_base& tx, std::int64_t horizon_ms, int total,
                                       std::span<const int> held, int limit) {
  std::vector<DueRunOnce> out;
  if (held.empty() || total <= 0) return out;
  for (const auto& r : tx.exec_params(R"sql(
         UPDATE run_once r SET log_id = nextval(pg_get_serial_sequence('job_log', 'id'))
           FROM (SELECT id FROM run_once
                  WHERE log_id = 0 AND cancelled_ms = 0 AND fire_at_ms <= $1 AND job_id % $2 = ANY($3::int[])
                  ORDER BY fire_at_ms
                  LIMIT $4
                    FOR UPDATE SKIP LOCKED) d
          WHERE r.id = d.id
         RETURNING r.id, r.log_id, r.job_id, r.fire_at_ms, r.executor_param, r.created_by
       )sql",
                                      horizon_ms, total, PgArray<int>(held), limit)) {
    DueRunOnce d{.run_id = r["id"].as<std::int64_t>(),
                 .log_id = r["log_id"].as<std::int64_t>(),
                 .job_id = r["job_id"].as<int>(),
                 .fire_at_ms = r["fire_at_ms"].as<std::int64_t>(),
                 .created_by = r["created_by"].as<std::string>()};
    if (!r["executor_param"].is_null()) d.param = r["executor_param"].as<std::string>();
    out.push_back(std::move(d));
  }
  return out;
}

void RemoveAlertChannel(pqxx::transaction_base& tx, int channel_id) {
  tx.exec_params(R"sql(
    UPDATE job SET alert_channel_ids = array_remove(alert_channel_ids, $1), updated_ms = updated_ms + 1
     WHERE $1 = ANY(alert_channel_ids)
  )sql",
                 channel_id);
}

}  // namespace cronwheel::admin::job_table
