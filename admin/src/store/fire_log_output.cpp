// The statements of the fire output archive (store/fire_log.hpp; sql/029_fire_output.sql): the output
// puller's queue (fire_output_pull) and what it archives, the archive read for the console and the CLI, and
// its size for /metrics. A callback's own log is archived by RecordHandleResults (fire_log_results.cpp), in
// the callback's statement.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::fire_log {

using nlohmann::json;

std::vector<OutputPull> ClaimOutputPulls(pqxx::transaction_base& tx, std::int64_t now_ms,
                                         std::int64_t lease_ms, int limit) {
  std::vector<OutputPull> out;
  // The fire's row names where it ran; a fire deleted meanwhile has none (nothing to pull).
  for (const auto& r : tx.exec_params(R"sql(
         WITH pick AS (
           SELECT log_id FROM fire_output_pull WHERE due_ms <= $1
            ORDER BY due_ms LIMIT $3 FOR UPDATE SKIP LOCKED),
         c AS (
           UPDATE fire_output_pull p SET due_ms = $1::bigint + $2::bigint, attempts = p.attempts + 1
             FROM pick WHERE p.log_id = pick.log_id
           RETURNING p.log_id, p.scheduled_ms, p.attempts)
         SELECT c.log_id, c.scheduled_ms, c.attempts, COALESCE(l.executor_address, '') AS executor_address,
                COALESCE(l.trigger_ms, 0) AS trigger_ms, g.access_token
           FROM c LEFT JOIN job_log l ON l.id = c.log_id AND l.scheduled_ms = c.scheduled_ms
                  LEFT JOIN job_group g ON g.id = l.group_id
          ORDER BY c.log_id
       )sql",
                                      now_ms, lease_ms, limit)) {
    out.push_back({.log_id = r["log_id"].as<std::int64_t>(),
                   .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                   .attempts = r["attempts"].as<int>(),
                   .executor_address = r["executor_address"].as<std::string>(),
                   .log_date_ms = r["trigger_ms"].as<std::int64_t>(),
                   .group_token = r["access_token"].is_null()
                                      ? std::nullopt
                                      : std::optional(r["access_token"].as<std::string>())});
  }
  return out;
}

void FinishOutputPulls(pqxx::transaction_base& tx, std::span<const PulledOutput> pulled,
                       std::int64_t now_ms) {
  if (pulled.empty()) return;
  json rows = json::array();
  for (const auto& p : pulled) {
    json row{{"i", p.log_id}, {"s", p.scheduled_ms}, {"e", p.error}};
    if (p.log) {
      row["c"] = p.log->content;
      row["b"] = p.log->log_bytes;
      row["o"] = p.log->left_out;
    }
    if (p.retry_at_ms > 0) row["r"] = p.retry_at_ms;
    rows.push_back(std::move(row));
  }
  tx.exec_params(R"sql(
    WITH v AS (
      SELECT * FROM json_to_recordset($1::json)
             AS v(i bigint, s bigint, e text, c text, b bigint, o bigint, r bigint)),
    retry AS (
      UPDATE fire_output_pull p SET due_ms = v.r, last_error = v.e FROM v WHERE p.log_id = v.i AND v.r IS NOT NULL),
    done AS (
      DELETE FROM fire_output_pull p USING v WHERE p.log_id = v.i AND v.r IS NULL)
    INSERT INTO fire_output (log_id, scheduled_ms, via, archived_ms, log_bytes, left_out_bytes, content, error)
    SELECT i, s, 'pull', $2, COALESCE(b, 0), COALESCE(o, 0), c, CASE WHEN c IS NULL THEN e ELSE '' END
      FROM v WHERE r IS NULL
    ON CONFLICT DO NOTHING
  )sql",
                 DumpLossy(rows), now_ms);
}

FireOutputArchive ReadOutput(pqxx::transaction_base& tx, std::int64_t log_id, std::int64_t scheduled_ms) {
  FireOutputArchive a;
  const auto r = tx.exec_params(R"sql(
    SELECT via, archived_ms, log_bytes, left_out_bytes, content, error
      FROM fire_output WHERE log_id = $1 AND scheduled_ms = $2
  )sql",
                                log_id, scheduled_ms);
  if (!r.empty()) {
    const auto row = r[0];
    a.state =
        row["content"].is_null() ? FireOutputArchive::State::kFailed : FireOutputArchive::State::kArchived;
    a.via = row["via"].as<std::string>();
    a.archived_ms = row["archived_ms"].as<std::int64_t>();
    a.log_bytes = row["log_bytes"].as<std::int64_t>();
    a.left_out = row["left_out_bytes"].as<std::int64_t>();
    if (!row["content"].is_null()) a.content = row["content"].as<std::string>();
    a.error = row["error"].as<std::string>();
    return a;
  }
  const auto q =
      tx.exec_params(R"sql(SELECT attempts, last_error FROM fire_output_pull WHERE log_id = $1)sql", log_id);
  if (!q.empty()) {
    a.state = FireOutputArchive::State::kPending;
    a.via = "pull";
    a.attempts = q[0]["attempts"].as<int>();
    a.error = q[0]["last_error"].as<std::string>();
  }
  return a;
}

ArchiveSize MeasureArchive(pqxx::transaction_base& tx) {
  ArchiveSize size;
  for (const auto& r : tx.exec(R"sql(
         SELECT c.relname, pg_total_relation_size(c.oid) AS bytes, c.reltuples
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'fire_output'::regclass
       )sql")) {
    size.bytes += r["bytes"].as<std::int64_t>();
    const auto estimate = r["reltuples"].as<double>();
    // -1: never vacuumed or analyzed (a partition of today, or the default one): counted, it is small.
    size.rows += estimate >= 0 ? static_cast<std::int64_t>(estimate)
                               : tx.exec1(fmt::format("SELECT count(*) FROM {}",
                                                      tx.quote_name(r["relname"].as<std::string>())))[0]
                                     .as<std::int64_t>();
  }
  size.pulls_queued = tx.exec1(R"sql(SELECT count(*) FROM fire_output_pull)sql")[0].as<std::int64_t>();
  return size;
}

}  // namespace cronwheel::admin::fire_log
