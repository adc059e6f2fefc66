// The statements that write job_log (store/fire_log.hpp), second part: failed fires, retries and alarms,
// and the console's writes. The scheduler's, recovery's and results' statements are in fire_log.cpp, the
// child jobs a callback fires in fire_log_children.cpp.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/alert_channel_table.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin::fire_log {

// Rows for json_to_recordset are dumped with DumpLossy: invalid UTF-8 in user text is replaced, never
// thrown on.
using nlohmann::json;

// --- failures --------------------------------------------------------------------------------------------

std::size_t AbandonStuckAlarms(pqxx::transaction_base& tx, std::int64_t before_ms) {
  return tx
      .exec_params(R"sql(
    WITH a AS (DELETE FROM fire_alarm WHERE claimed_ms > 0 AND claimed_ms < $1 RETURNING log_id, scheduled_ms)
    UPDATE job_log l
       SET alarm_status = 3, handle_msg = l.handle_msg || E'\nalarm: not sent, the admin sending it stopped'
      FROM a
     WHERE l.id = a.log_id AND l.scheduled_ms = a.scheduled_ms
  )sql",
                   before_ms)
      .affected_rows();
}

std::vector<FailedFire> ClaimFailed(pqxx::transaction_base& tx, std::string_view node_id, std::int64_t now_ms,
                                    int limit) {
  // A queued fire a person killed meanwhile (alarm_status set), or one whose row is gone (its job was
  // deleted), needs nothing: it leaves the queue.
  const auto rows =
      tx.exec_params(fmt::format(R"sql(
    WITH pick AS (
      SELECT log_id, scheduled_ms FROM fire_alarm WHERE claimed_ms = 0
       ORDER BY log_id LIMIT $1 FOR UPDATE SKIP LOCKED),
    state AS (
      SELECT pick.log_id, l.alarm_status
        FROM pick LEFT JOIN job_log l ON l.id = pick.log_id AND l.scheduled_ms = pick.scheduled_ms),
    gone AS (
      DELETE FROM fire_alarm f USING state
       WHERE f.log_id = state.log_id AND state.alarm_status IS DISTINCT FROM 0),
    q AS (
      UPDATE fire_alarm f SET claimed_by = $2, claimed_ms = $3 FROM state
       WHERE f.log_id = state.log_id AND state.alarm_status = 0
      RETURNING f.log_id, f.scheduled_ms),
    c AS (
      SELECT l.id, l.job_id, l.group_id, l.trigger_type, l.scheduled_ms, l.retry_count, l.executor_param,
             l.shard_index, l.shard_total, l.broadcast_log_id, l.workflow_run_id, l.workflow_node, l.trigger_code, l.trigger_msg, l.handle_code,
             l.handle_msg, l.skipped
        FROM q JOIN job_log l ON l.id = q.log_id AND l.scheduled_ms = q.scheduled_ms)
    SELECT c.*, j.id IS NOT NULL AS job_exists, j.description, j.retry_count AS job_retry_count,
           j.retry_backoff_s, j.alarm_email, j.alarm_webhook, j.schedule_type, j.schedule_conf, j.time_zone,
           j.enabled, COALESCE(s.next_fire_ms, 0) AS next_fire_ms, g.app_name, {} AS alert_channels
      FROM c LEFT JOIN job j ON j.id = c.job_id LEFT JOIN job_schedule s ON s.job_id = j.id
           LEFT JOIN job_group g ON g.id = c.group_id
     ORDER BY c.id
  )sql",
                                 alert_channel_table::JsonOf("coalesce(j.alert_channel_ids, '{}') || "
                                                             "coalesce(g.alert_channel_ids, '{}')")),
                     limit, std::string(node_id), now_ms);
  std::vector<FailedFire> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    FailedFire f;
    f.log_id = r["id"].as<std::int64_t>();
    f.job_id = r["job_id"].as<int>();
    f.group_id = r["group_id"].as<int>();
    f.trigger_type = r["trigger_type"].as<std::string>();
    f.scheduled_ms = r["scheduled_ms"].as<std::int64_t>();
    f.retries_left = r["retry_count"].as<int>();
    f.executor_param = r["executor_param"].as<std::string>();
    f.shard_index = r["shard_index"].as<int>();
    f.shard_total = r["shard_total"].as<int>();
    f.broadcast_log_id = r["broadcast_log_id"].as<std::int64_t>();
    f.workflow_run_id = r["workflow_run_id"].as<std::int64_t>();
    f.workflow_node = r["workflow_node"].as<std::string>();
    f.trigger_code = r["trigger_code"].as<int>();
    f.trigger_msg = r["trigger_msg"].as<std::string>();
    f.handle_code = r["handle_code"].as<int>();
    f.handle_msg = r["handle_msg"].as<std::string>();
    f.skipped = r["skipped"].as<bool>();
    f.job_exists = r["job_exists"].as<bool>();
    f.app_name = TextOrEmpty(r["app_name"]);
    if (f.job_exists) {
      f.job_description = r["description"].as<std::string>();
      f.job_retry_count = r["job_retry_count"].as<int>();
      f.job_retry_backoff_s = r["retry_backoff_s"].as<int>();
      f.alarm_email = r["alarm_email"].as<std::string>();
      f.alarm_webhook = r["alarm_webhook"].as<std::string>();
      f.alert_channels = alert_channel_table::FromJson(r["alert_channels"].c_str());
      f.schedule_type = r["schedule_type"].as<std::string>();
      f.schedule_conf = r["schedule_conf"].as<std::string>();
      f.time_zone = r["time_zone"].as<std::string>();
      f.job_enabled = r["enabled"].as<bool>();
      f.job_next_fire_ms = r["next_fire_ms"].as<std::int64_t>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fire> InsertRetries(pqxx::transaction_base& tx, std::span<const PlannedRetry> retries,
                                std::string_view node_id, std::int64_t now_ms) {
  if (retries.empty()) return {};
  json rows = json::array();
  for (const auto& r : retries) {
    rows.push_back({{"j", r.job_id},
                    {"g", r.group_id},
                    {"s", r.due_ms},
                    {"p", r.param},
                    {"r", r.retries_left},
                    {"si", r.shard_index},
                    {"st", r.shard_total},
                    {"b", r.broadcast_log_id},
                    {"w", r.workflow_run_id},
                    {"wn", r.workflow_node},
                    {"parent", r.parent_log_id},
                    {"m", r.note}});
  }
  const auto inserted = tx.exec_params(R"sql(
    WITH ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param,
                           retry_count, shard_index, shard_total, broadcast_log_id, workflow_run_id, workflow_node,
                           parent_log_id, trigger_msg, created_ms)
      SELECT v.j, v.g, 'RETRY', v.s, $2, v.p, v.r, v.si, v.st, v.b, v.w, v.wn, v.parent, v.m, $3
        FROM json_to_recordset($1::json) AS v(j int, g int, s bigint, p text, r int, si int, st int, b bigint,
                                               w bigint, wn text, parent bigint, m text)
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, executor_param, retry_count, shard_index,
                shard_total, parent_log_id),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $2 FROM ins)
    SELECT * FROM ins
  )sql",
                                       DumpLossy(rows), std::string(node_id), now_ms);
  // Back in the order given: each retry has its own parent.
  std::map<std::int64_t, Fire> by_parent;
  for (const auto& r : inserted) {
    by_parent[r["parent_log_id"].as<std::int64_t>()] =
        Fire{.log_id = r["id"].as<std::int64_t>(),
             .job_id = r["job_id"].as<int>(),
             .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
             .type = TriggerType::kRetry,
             .param = r["executor_param"].as<std::string>(),
             .retry_count = r["retry_count"].as<int>(),
             .shard_index = r["shard_index"].as<int>(),
             .shard_total = r["shard_total"].as<int>()};
  }
  std::vector<Fire> out;
  out.reserve(retries.size());
  for (const auto& r : retries)
    out.push_back(std::move(by_parent.at(r.parent_log_id)));
  return out;
}

void SetAlarmStatus(pqxx::transaction_base& tx, std::span<const AlarmStatus> statuses) {
  if (statuses.empty()) return;
  json rows = json::array();
  for (const auto& s : statuses)
    rows.push_back({{"i", s.log_id}, {"s", s.status}, {"n", s.note}});
  tx.exec_params(R"sql(
    WITH v AS (SELECT * FROM json_to_recordset($1::json) AS v(i bigint, s int, n text)),
    a AS (DELETE FROM fire_alarm f USING v WHERE f.log_id = v.i AND f.claimed_ms > 0
          RETURNING f.log_id, f.scheduled_ms)
    UPDATE job_log l
       SET alarm_status = v.s,
           handle_msg = CASE WHEN v.n = '' THEN l.handle_msg
                             WHEN l.handle_msg = '' THEN v.n
                             ELSE l.handle_msg || E'\n' || v.n END
      FROM v JOIN a ON a.log_id = v.i
     WHERE l.id = v.i AND l.scheduled_ms = a.scheduled_ms
  )sql",
                 DumpLossy(rows));
}

void MarkLost(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids, std::int64_t now_ms,
              std::string_view message) {
  if (log_ids.empty()) return;
  tx.exec_params(R"sql(
    WITH o AS (DELETE FROM fire_open WHERE log_id = ANY($1::bigint[]) RETURNING log_id, scheduled_ms),
    l AS (
      UPDATE job_log l
         SET handle_code = 500, handle_ms = $2,
             handle_msg = CASE WHEN l.handle_msg = '' THEN $3 ELSE l.handle_msg || E'\n' || $3 END
        FROM o
       WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms AND l.handle_code = 0
      RETURNING l.id, l.scheduled_ms)
    INSERT INTO fire_alarm (log_id, scheduled_ms) SELECT id, scheduled_ms FROM l ON CONFLICT (log_id) DO NOTHING
  )sql",
                 PgArray(log_ids), now_ms, std::string(message));
}

// --- the console and the REST API ----------------------------------------------------------------------

std::optional<std::int64_t> InsertManual(pqxx::transaction_base& tx, int job_id, TriggerType type,
                                         const std::optional<std::string>& param, std::string_view node_id,
                                         std::int64_t now_ms) {
  const auto rows = tx.exec_params(R"sql(
    WITH ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param,
                           retry_count, created_ms)
      SELECT id, group_id, $2, $3, $4, COALESCE($5, param), retry_count, $3 FROM job WHERE id = $1
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $4 FROM ins)
    SELECT id FROM ins
  )sql",
                                   job_id, std::string(ToString(type)), now_ms, std::string(node_id), param);
  if (rows.empty()) return std::nullopt;
  return rows[0]["id"].as<std::int64_t>();
}

std::optional<std::int64_t> WithdrawUnsent(pqxx::transaction_base& tx, int job_id, ringwheel::Clock& clock) {
  // The seconds of this job's unaccepted fires still to come (claimed, or claimable before this commits),
  // each one's lock taken shared: an admin about to send one of them takes it exclusively while it reads
  // the withdrawals (WithdrawnAt), so either it has read them already, and `now` (read after the locks) is
  // past that instant, which is then left to it; or it waits for this transaction's commit and sees what it
  // withdrew.
  tx.exec_params(R"sql(
    SELECT pg_advisory_xact_lock_shared($3, (s / 1000 % 2147483647)::int)
      FROM (SELECT DISTINCT scheduled_ms AS s FROM fire_open
             WHERE job_id = $1 AND trigger_type = 'CRON' AND trigger_ms = 0 AND scheduled_ms > $2
             ORDER BY 1) i
  )sql",
                 job_id, clock.NowMs(), kInstantLockClass);
  const auto now = clock.NowMs();
  // Gone, as if never planned, claimed or not: the instant can be planned again (a change that keeps it, a
  // calendar edit that still allows it). A claimed one is named in fire_withdrawn for the admin holding the
  // claim, which reads it at the instant and does not send it.
  const auto row = tx.exec_params1(R"sql(
    WITH o AS (
      DELETE FROM fire_open
       WHERE job_id = $1 AND trigger_type = 'CRON' AND trigger_ms = 0 AND scheduled_ms > $2
      RETURNING log_id, scheduled_ms, dispatch_ms),
    named AS (
      INSERT INTO fire_withdrawn (log_id, scheduled_ms, job_id, withdrawn_ms)
      SELECT log_id, scheduled_ms, $1, $2 FROM o WHERE dispatch_ms <> 0
      ON CONFLICT (log_id) DO NOTHING),
    gone AS (
      DELETE FROM job_log l USING o WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms)
    SELECT min(scheduled_ms) FROM o
  )sql",
                                   job_id, now);
  if (row[0].is_null()) return std::nullopt;
  return row[0].as<std::int64_t>();
}

std::vector<std::int64_t> WithdrawnAt(pqxx::transaction_base& tx, std::span<const std::int64_t> instants_ms) {
  std::vector<std::int64_t> out;
  if (instants_ms.empty()) return out;
  // Each instant's second exclusively, in order: a withdrawal in progress for it commits first.
  tx.exec_params(R"sql(
    SELECT pg_advisory_xact_lock($2, k)
      FROM (SELECT DISTINCT (s / 1000 % 2147483647)::int AS k FROM unnest($1::bigint[]) AS s ORDER BY 1) i
  )sql",
                 PgArray(instants_ms), kInstantLockClass);
  for (const auto& r : tx.exec_params(R"sql(
         SELECT log_id FROM fire_withdrawn WHERE scheduled_ms = ANY($1::bigint[])
       )sql",
                                      PgArray(instants_ms))) {
    out.push_back(r[0].as<std::int64_t>());
  }
  return out;
}

std::vector<std::int64_t> WithdrawnOfJob(pqxx::transaction_base& tx, int job_id, std::int64_t after_ms) {
  std::vector<std::int64_t> out;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT log_id FROM fire_withdrawn WHERE job_id = $1 AND scheduled_ms > $2 ORDER BY log_id
       )sql",
                                      job_id, after_ms)) {
    out.push_back(r[0].as<std::int64_t>());
  }
  return out;
}

std::int64_t DeleteOldWithdrawals(pqxx::transaction_base& tx, std::int64_t before_ms, int limit) {
  return static_cast<std::int64_t>(tx.exec_params(R"sql(
    DELETE FROM fire_withdrawn WHERE log_id IN (
      SELECT log_id FROM fire_withdrawn WHERE scheduled_ms < $1 ORDER BY scheduled_ms LIMIT $2)
  )sql",
                                                  before_ms, limit)
                                       .affected_rows());
}

std::vector<SentAheadFire> SentAhead(pqxx::transaction_base& tx, int job_id, std::int64_t after_ms) {
  std::vector<SentAheadFire> out;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT o.log_id, o.executor_address, o.scheduled_ms, l.shard_index, l.shard_total
           FROM fire_open o JOIN job_log l ON l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
          WHERE o.job_id = $1 AND o.trigger_type = 'CRON' AND o.trigger_ms > 0 AND o.scheduled_ms > $2
            AND o.executor_address <> ''
       )sql",
                                      job_id, after_ms)) {
    out.push_back({.log_id = r[0].as<std::int64_t>(),
                   .address = r[1].as<std::string>(),
                   .scheduled_ms = r[2].as<std::int64_t>(),
                   .shard_index = r[3].as<int>(),
                   .shard_total = r[4].as<int>()});
  }
  return out;
}

void MarkWithdrawnAhead(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids,
                        std::string_view note) {
  if (log_ids.empty()) return;
  tx.exec_params(R"sql(
    WITH o AS (DELETE FROM fire_open WHERE log_id = ANY($1::bigint[]) RETURNING log_id, scheduled_ms)
    UPDATE job_log l
       SET skipped = true, alarm_status = CASE WHEN l.alarm_status = 0 THEN 1 ELSE l.alarm_status END,
           trigger_msg = CASE WHEN l.trigger_msg = '' THEN $2 ELSE l.trigger_msg || E'\n' || $2 END
      FROM o
     WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms AND l.handle_code = 0
  )sql",
                 PgArray(log_ids), std::string(note));
}

bool WithdrawUnclaimed(pqxx::transaction_base& tx, std::int64_t log_id) {
  return tx.exec_params(R"sql(
    WITH o AS (
      DELETE FROM fire_open WHERE log_id = $1 AND trigger_ms = 0 AND dispatch_ms = 0
      RETURNING log_id, scheduled_ms)
    DELETE FROM job_log l USING o WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
  )sql",
                        log_id)
             .affected_rows() > 0;
}

bool MarkKilled(pqxx::transaction_base& tx, std::int64_t log_id, std::int64_t now_ms,
                std::string_view executor_msg) {
  const auto msg = "Manual operation, kill job: " + std::string(executor_msg.substr(0, 10'000));
  if (tx.exec_params(R"sql(
    WITH o AS (DELETE FROM fire_open WHERE log_id = $1 RETURNING log_id, scheduled_ms)
    UPDATE job_log l
       SET handle_code = 500, handle_ms = $2, handle_msg = $3,
           alarm_status = CASE WHEN l.alarm_status = 0 THEN 1 ELSE l.alarm_status END
      FROM o
     WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms AND l.handle_code = 0
  )sql",
                     log_id, now_ms, msg)
          .affected_rows() == 1) {
    return true;
  }
  // The executor's report of the kill (a failed result) can arrive before this statement: the kill
  // still stands, so the fire is not retried or alarmed unless the failure monitor already took it.
  return tx.exec_params(R"sql(
    WITH queued AS (DELETE FROM fire_alarm WHERE log_id = $1 AND claimed_ms = 0 RETURNING log_id)
    UPDATE job_log
       SET alarm_status = CASE WHEN EXISTS (SELECT 1 FROM queued) THEN 1 ELSE alarm_status END,
           handle_msg = handle_msg || E'\n' || $2
     WHERE id = $1 AND handle_code NOT IN (0, 200)
  )sql",
                        log_id, msg)
             .affected_rows() == 1;
}

std::string FinishedSelection(pqxx::transaction_base& tx, const LogClear& c) {
  std::string where = "status IN ('SUCCESS', 'FAILED', 'SKIPPED')";
  if (c.job_id) where += fmt::format(" AND job_id = {}", *c.job_id);
  if (c.group_id) where += fmt::format(" AND group_id = {}", *c.group_id);
  if (c.group_ids) where += " AND group_id = ANY(" + tx.quote(PgArray<int>(*c.group_ids)) + "::int[])";
  return where;
}

std::int64_t DeleteFinished(pqxx::transaction_base& tx, const LogClear& selection,
                            std::pair<std::int64_t, std::int64_t> boundary, int limit) {
  // Their archived output (and a pull still queued) goes with them.
  const auto sql = fmt::format(R"sql(
    WITH d AS (
      DELETE FROM job_log
       WHERE (id, scheduled_ms) IN (SELECT id, scheduled_ms FROM job_log
                                     WHERE {} AND (scheduled_ms, id) <= ($1, $2) LIMIT $3)
      RETURNING id, scheduled_ms),
    o AS (DELETE FROM fire_output o USING d WHERE o.log_id = d.id AND o.scheduled_ms = d.scheduled_ms),
    q AS (DELETE FROM fire_output_pull q USING d WHERE q.log_id = d.id)
    SELECT count(*) FROM d
  )sql",
                               FinishedSelection(tx, selection));
  return tx.exec_params1(sql, boundary.first, boundary.second, limit)[0].as<std::int64_t>();
}

std::int64_t DeleteJobFires(pqxx::transaction_base& tx, int job_id) {
  return tx
      .exec_params1(R"sql(
        WITH d AS (DELETE FROM job_log WHERE job_id = $1 RETURNING id, scheduled_ms),
        o AS (DELETE FROM fire_output o USING d WHERE o.log_id = d.id AND o.scheduled_ms = d.scheduled_ms),
        q AS (DELETE FROM fire_output_pull q USING d WHERE q.log_id = d.id)
        SELECT count(*) FROM d
      )sql",
                    job_id)[0]
      .as<std::int64_t>();
}

}  // namespace cronwheel::admin::fire_log
