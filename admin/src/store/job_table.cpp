// The writes of the job table that the scheduler and the results areas make (store/job_table.hpp), beside
// the REST API's in store/job_repository.cpp: together the job table's owner (docs/architecture.md "Who
// writes which table").
#include "store/job_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::job_table {

namespace {

nlohmann::json AdvanceRows(std::span<const JobAdvance> advances) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& a : advances) {
    rows.push_back({{"id", a.job_id},
                    {"e", a.expected_next_ms},
                    {"n", a.stop ? 0 : a.next_fire_ms},
                    {"l", a.last_fire_ms},
                    {"x", a.stop},
                    {"r", a.stop_reason}});
  }
  return rows;
}

}  // namespace

void Advance(pqxx::transaction_base& tx, std::span<const JobAdvance> advances) {
  if (advances.empty()) return;
  const bool stops = std::ranges::any_of(advances, [](const JobAdvance& a) { return a.stop; });
  // job_schedule's row only: 36 bytes and two indexes (sql/025_job_schedule.sql). A job whose schedule
  // ended is stopped in job too, where its stop shows and the job caches hear of it.
  constexpr std::string_view kSchedule = R"sql(
      UPDATE job_schedule t
         SET next_fire_ms = v.n, last_fire_ms = CASE WHEN v.l > 0 THEN v.l ELSE t.last_fire_ms END
        FROM json_to_recordset($1::json) AS v(id int, e bigint, n bigint, l bigint, x boolean, r text)
       WHERE t.job_id = v.id AND t.next_fire_ms = v.e AND t.next_fire_ms > 0
  )sql";
  if (!stops) {
    tx.exec_params(std::string(kSchedule), DumpLossy(AdvanceRows(advances)));
    return;
  }
  tx.exec_params(fmt::format(R"sql(
    WITH s AS ({} RETURNING t.job_id, v.x, v.r)
    UPDATE job j SET enabled = false, stop_reason = s.r FROM s WHERE j.id = s.job_id AND s.x
  )sql",
                             kSchedule),
                 DumpLossy(AdvanceRows(advances)));
}

void AdvanceSchedules(pqxx::transaction_base& tx, std::string_view table,
                      std::span<const JobAdvance> advances) {
  if (advances.empty()) return;
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
                 DumpLossy(AdvanceRows(advances)));
}

void SetSchedule(pqxx::transaction_base& tx, int job_id, std::int64_t next_fire_ms,
                 std::optional<std::int64_t> last_fire_ms) {
  tx.exec_params(R"sql(
    INSERT INTO job_schedule (job_id, next_fire_ms, last_fire_ms) VALUES ($1, $2, COALESCE($3::bigint, 0))
    ON CONFLICT (job_id) DO UPDATE
       SET next_fire_ms = EXCLUDED.next_fire_ms,
           last_fire_ms = CASE WHEN $3::bigint IS NULL THEN job_schedule.last_fire_ms ELSE EXCLUDED.last_fire_ms END
  )sql",
                 job_id, next_fire_ms, last_fire_ms);
}

void RewindSchedule(pqxx::transaction_base& tx, int job_id, std::int64_t from_ms) {
  tx.exec_params(R"sql(UPDATE job_schedule SET next_fire_ms = $2 WHERE job_id = $1 AND next_fire_ms > $2)sql",
                 job_id, from_ms);
}

void LockSchedulePartition(pqxx::transaction_base& tx, int id) {
  tx.exec_params(R"sql(
    SELECT id FROM schedule_partition
     WHERE id = $1 % NULLIF((SELECT count(*) FROM schedule_partition), 0) FOR UPDATE
  )sql",
                 id);
}

void LockSchedule(pqxx::transaction_base& tx, int job_id) {
  LockSchedulePartition(tx, job_id);
  tx.exec_params(R"sql(SELECT 1 FROM job_schedule WHERE job_id = $1 FOR UPDATE)sql", job_id);
}

void LockSchedules(pqxx::transaction_base& tx, std::span<const int> job_ids) {
  if (job_ids.empty()) return;
  tx.exec_params(R"sql(
    SELECT p.id FROM schedule_partition p
     WHERE p.id IN (SELECT DISTINCT j % NULLIF((SELECT count(*) FROM schedule_partition), 0)
                      FROM unnest($1::int[]) AS j)
     ORDER BY p.id FOR UPDATE OF p
  )sql",
                 PgArray<int>(job_ids));
  tx.exec_params(R"sql(
    SELECT 1 FROM job_schedule WHERE job_id = ANY($1::int[]) ORDER BY job_id FOR UPDATE
  )sql",
                 PgArray<int>(job_ids));
}

void ResumeFixDelay(pqxx::transaction_base& tx, std::span<const int> job_ids, std::int64_t now_ms) {
  if (job_ids.empty()) return;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT j.id, j.schedule_conf, j.time_zone FROM job_schedule s JOIN job j ON j.id = s.job_id
          WHERE s.next_fire_ms = $2 AND s.job_id = ANY($1::int[]) AND j.enabled AND j.schedule_type = 'FIX_DELAY'
       )sql",
                                      PgArray<int>(job_ids), kAwaitingCompletion)) {
    tx.exec_params(
        R"sql(UPDATE job_schedule SET next_fire_ms = $2 WHERE job_id = $1 AND next_fire_ms = $3)sql",
        r["id"].as<int>(), NextAfterCompletion(r["schedule_conf"].c_str(), r["time_zone"].c_str(), now_ms),
        kAwaitingCompletion);
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

std::int64_t DeleteEndedRunOnce(pqxx::transaction_base& tx, std::int64_t before_ms, int limit) {
  return static_cast<std::int64_t>(tx.exec_params(R"sql(
    DELETE FROM run_once WHERE id IN (
      SELECT id FROM run_once WHERE fire_at_ms < $1 AND (log_id <> 0 OR cancelled_ms <> 0) ORDER BY id LIMIT $2)
  )sql",
                                                  before_ms, limit)
                                       .affected_rows());
}

}  // namespace cronwheel::admin::job_table
