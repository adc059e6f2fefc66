#include "admin/pg_scheduler_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "pg_util.hpp"

namespace cronwheel::admin {

PgSchedulerStore::PgSchedulerStore(PgPool& pool, Settings settings) : pool_(pool), settings_(settings) {}

ScanOutcome PgSchedulerStore::Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                                   ScanPlanner& planner) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec(fmt::format("SET LOCAL lock_timeout = {}; SET LOCAL idle_in_transaction_session_timeout = {}",
                        settings_.lock_timeout.count(), settings_.idle_in_transaction_timeout.count()));
    const auto lock = tx.exec("SELECT lock_name FROM job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE");
    if (lock.empty()) {
      // Without the row nothing serialises the admins and each would fire every job (XXL-JOB §4).
      throw std::runtime_error("the row 'schedule_lock' is missing from table job_lock; refusing to scan");
    }
    ScanOutcome out;
    out.now_ms = clock.NowMs();  // after the lock: time spent waiting for it does not skew decisions
    const auto horizon = out.now_ms + planner.settings().pre_read.count();
    const auto rows = tx.exec_params(kDueJobsSql, horizon, limit);
    std::vector<DueJob> due;
    due.reserve(rows.size());
    for (const auto& r : rows) {
      DueJob j;
      j.id = r[0].as<int>();
      j.group_id = r[1].as<int>();
      j.schedule_type = r[2].as<std::string>();
      j.schedule_conf = r[3].as<std::string>();
      j.time_zone = r[4].as<std::string>();
      j.misfire_strategy = ParseMisfireStrategy(r[5].c_str()).value_or(MisfireStrategy::kDoNothing);
      j.next_fire_ms = r[6].as<std::int64_t>();
      due.push_back(std::move(j));
    }
    out.jobs_read = due.size();
    out.full_batch = static_cast<int>(due.size()) >= limit;
    if (due.empty()) {
      tx.commit();
      return out;
    }
    const auto plan = planner.Plan(due, out.now_ms);
    if (!plan.fires.empty()) {
      nlohmann::json fires = nlohmann::json::array();
      for (const auto& f : plan.fires) {
        fires.push_back({{"j", f.job_id},
                         {"g", f.group_id},
                         {"s", f.scheduled_ms},
                         {"t", ToString(f.type)},
                         {"k", f.skipped},
                         {"n", f.note}});
      }
      const auto inserted = tx.exec_params(
          "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, skipped, "
          "trigger_msg,"
          " created_ms)"
          " SELECT v.j, v.g, v.t, v.s, $2, v.k, v.n, $3"
          " FROM json_to_recordset($1::json) AS v(j int, g int, t text, s bigint, k boolean, n text)"
          " ON CONFLICT (job_id, scheduled_ms, shard_index) WHERE trigger_type IN ('CRON', 'MISFIRE') DO "
          "NOTHING"
          " RETURNING id, job_id, scheduled_ms, trigger_type, skipped",
          fires.dump(), std::string(node_id), out.now_ms);
      out.fires.reserve(inserted.size());
      for (const auto& r : inserted) {
        out.fires.push_back({.log_id = r[0].as<std::int64_t>(),
                             .job_id = r[1].as<int>(),
                             .scheduled_ms = r[2].as<std::int64_t>(),
                             .type = ParseTriggerType(r[3].c_str()).value_or(TriggerType::kCron),
                             .skipped = r[4].as<bool>()});
      }
    }
    nlohmann::json advances = nlohmann::json::array();
    for (const auto& a : plan.advances) {
      advances.push_back({{"id", a.job_id},
                          {"e", a.expected_next_ms},
                          {"n", a.stop ? 0 : a.next_fire_ms},
                          {"l", a.last_fire_ms},
                          {"x", a.stop},
                          {"r", a.stop_reason}});
    }
    // Only rows still enabled and still at the next time we read: a concurrent edit or stop wins.
    tx.exec_params(
        "UPDATE job SET next_fire_ms = v.n,"
        " last_fire_ms = CASE WHEN v.l > 0 THEN v.l ELSE job.last_fire_ms END,"
        " enabled = NOT v.x,"
        " stop_reason = CASE WHEN v.x THEN v.r ELSE job.stop_reason END"
        " FROM json_to_recordset($1::json) AS v(id int, e bigint, n bigint, l bigint, x boolean, r text)"
        " WHERE job.id = v.id AND job.enabled AND job.next_fire_ms = v.e",
        advances.dump());
    tx.commit();
    return out;
  });
}

std::vector<ClaimedFire> PgSchedulerStore::ClaimForDispatch(std::string_view node_id,
                                                            std::span<const std::int64_t> log_ids,
                                                            std::int64_t now_ms) {
  if (log_ids.empty()) return {};
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(
        "UPDATE job_log l SET dispatch_ms = $3 FROM job j"
        " WHERE l.id = ANY($1::bigint[]) AND l.owner_node = $2 AND l.trigger_code = 0 AND l.dispatch_ms = 0"
        " AND NOT l.skipped AND j.id = l.job_id"
        " RETURNING l.id, l.job_id, l.scheduled_ms, l.trigger_type, j.misfire_strategy, l.executor_param,"
        " l.retry_count, l.shard_index, l.shard_total",
        PgArray(log_ids), std::string(node_id), now_ms);
    tx.commit();
    std::vector<ClaimedFire> out;
    out.reserve(rows.size());
    for (const auto& r : rows) {
      out.push_back(
          {.log_id = r[0].as<std::int64_t>(),
           .job_id = r[1].as<int>(),
           .scheduled_ms = r[2].as<std::int64_t>(),
           .type = ParseTriggerType(r[3].c_str()).value_or(TriggerType::kCron),
           .misfire_strategy = ParseMisfireStrategy(r[4].c_str()).value_or(MisfireStrategy::kDoNothing),
           .param = r[5].as<std::string>(),
           .retry_count = r[6].as<int>()});
    }
    return out;
  });
}

void PgSchedulerStore::MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) {
  if (log_ids.empty()) return;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        "UPDATE job_log SET skipped = true,"
        " trigger_msg = CASE WHEN trigger_msg = '' THEN $2 ELSE trigger_msg || E'\\n' || $2 END"
        " WHERE id = ANY($1::bigint[]) AND trigger_code = 0",
        PgArray(log_ids), std::string(note));
    tx.commit();
  });
}

std::vector<std::int64_t> PgSchedulerStore::CreateShards(std::int64_t base_log_id, int total,
                                                         std::string_view node_id, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    std::vector<std::int64_t> ids{base_log_id};
    const auto base = tx.exec_params(
        "UPDATE job_log SET shard_total = $2 WHERE id = $1 AND shard_total = 1"
        " AND shard_index = 0 RETURNING id",
        base_log_id, total);
    if (base.empty()) return ids;  // expanded before
    const auto rows = tx.exec_params(
        "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, dispatch_ms, "
        "executor_param,"
        " shard_index, shard_total, retry_count, parent_log_id, created_ms)"
        " SELECT b.job_id, b.group_id, b.trigger_type, b.scheduled_ms, $3, $4, b.executor_param, i, $2,"
        " b.retry_count, b.parent_log_id, $4 FROM job_log b CROSS JOIN generate_series(1, $2 - 1) AS i"
        " WHERE b.id = $1 ORDER BY i RETURNING id, shard_index",
        base_log_id, total, std::string(node_id), now_ms);
    ids.resize(static_cast<std::size_t>(total), 0);
    for (const auto& r : rows)
      ids[r[1].as<std::size_t>()] = r[0].as<std::int64_t>();
    tx.commit();
    return ids;
  });
}

}  // namespace cronwheel::admin
