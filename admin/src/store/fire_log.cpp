// The statements that write job_log (store/fire_log.hpp): the scheduler's and recovery's. Trigger and handle
// results are in fire_log_results.cpp, failed fires, retries, alarms and the console's writes in
// fire_log_failures.cpp, the child jobs a callback fires in fire_log_children.cpp. Reads of job_log for the
// console live in the repositories; every write is in these four files.
#include "admin/store/fire_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin::fire_log {
namespace {

using nlohmann::json;

// A JSON array of rows for json_to_recordset; invalid UTF-8 in user text is replaced, never thrown on.
std::string Rows(const json& rows) {
  return DumpLossy(rows);
}

// Records the pending rows of `rows` ([{"i": log id, "n": note}]) as skipped (status SKIPPED), each note
// appended to its trigger_msg, closes them and queues them for the failure monitor (a misfire alert, a
// waiting FIX_DELAY job's next fire). A row that has a trigger result is left alone.
void SkipRows(pqxx::transaction_base& tx, const json& rows) {
  if (rows.empty()) return;
  tx.exec_params(R"sql(
    WITH v AS (SELECT * FROM json_to_recordset($1::json) AS v(i bigint, n text)),
    o AS (DELETE FROM fire_open f USING v WHERE f.log_id = v.i AND f.trigger_ms = 0
          RETURNING f.log_id, f.scheduled_ms, v.n),
    l AS (
      UPDATE job_log l SET skipped = true,
             trigger_msg = CASE WHEN l.trigger_msg = '' THEN o.n ELSE l.trigger_msg || E'\n' || o.n END
        FROM o
       WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms AND l.trigger_code = 0
      RETURNING l.id, l.scheduled_ms)
    INSERT INTO fire_alarm (log_id, scheduled_ms) SELECT id, scheduled_ms FROM l ON CONFLICT (log_id) DO NOTHING
  )sql",
                 Rows(rows));
}

std::vector<ClaimedFire> Claimed(const pqxx::result& rows) {
  std::vector<ClaimedFire> out;
  out.reserve(rows.size());
  for (const auto& r : rows)
    out.push_back(ClaimedFromRow(r));
  return out;
}

}  // namespace

// --- the scheduler ---------------------------------------------------------------------------------------

std::vector<CommittedFire> InsertPlanned(pqxx::transaction_base& tx, std::span<const PlannedFire> fires,
                                         std::string_view node_id, std::int64_t now_ms) {
  if (fires.empty()) return {};
  json rows = json::array();
  for (const auto& f : fires) {
    rows.push_back({{"j", f.job_id},
                    {"g", f.group_id},
                    {"s", f.scheduled_ms},
                    {"t", ToString(f.type)},
                    {"k", f.skipped},
                    {"n", f.note}});
  }
  const auto inserted = tx.exec_params(R"sql(
    WITH ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, skipped, trigger_msg,
                           created_ms)
      SELECT v.j, v.g, v.t, v.s, $2, v.k, v.n, $3
        FROM json_to_recordset($1::json) AS v(j int, g int, t text, s bigint, k boolean, n text)
      ON CONFLICT (job_id, scheduled_ms, shard_index) WHERE trigger_type IN ('CRON', 'MISFIRE') DO NOTHING
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, skipped),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $2 FROM ins WHERE NOT skipped),
    -- A skipped instant is finished: the failure monitor alerts it (MISFIRE) and resumes a fixed delay.
    alarm AS (
      INSERT INTO fire_alarm (log_id, scheduled_ms) SELECT id, scheduled_ms FROM ins WHERE skipped)
    SELECT id, job_id, scheduled_ms, trigger_type, skipped FROM ins
  )sql",
                                       Rows(rows), std::string(node_id), now_ms);
  std::vector<CommittedFire> out;
  out.reserve(inserted.size());
  for (const auto& r : inserted) {
    out.push_back({.log_id = r["id"].as<std::int64_t>(),
                   .job_id = r["job_id"].as<int>(),
                   .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                   .type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron),
                   .skipped = r["skipped"].as<bool>()});
  }
  return out;
}

std::vector<CommittedFire> InsertRunOnce(pqxx::transaction_base& tx, std::span<const DueRunOnce> due,
                                         std::string_view node_id, std::int64_t now_ms) {
  if (due.empty()) return {};
  json rows = json::array();
  for (const auto& d : due) {
    rows.push_back({{"i", d.log_id},
                    {"j", d.job_id},
                    {"s", d.fire_at_ms},
                    {"p", d.param ? json(*d.param) : json(nullptr)},
                    {"n", fmt::format("Run once {}, asked by {}", d.run_id, d.created_by)}});
  }
  const auto inserted = tx.exec_params(R"sql(
    WITH ins AS (
      INSERT INTO job_log (id, job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param,
                           retry_count, trigger_msg, created_ms)
      SELECT v.i, j.id, j.group_id, 'MANUAL', v.s, $2, COALESCE(v.p, j.param), j.retry_count, v.n, $3
        FROM json_to_recordset($1::json) AS v(i bigint, j int, s bigint, p text, n text)
        JOIN job j ON j.id = v.j
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, executor_param),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $2 FROM ins)
    SELECT id, job_id, scheduled_ms, executor_param FROM ins
  )sql",
                                       Rows(rows), std::string(node_id), now_ms);
  std::vector<CommittedFire> out;
  out.reserve(inserted.size());
  for (const auto& r : inserted) {
    out.push_back({.log_id = r["id"].as<std::int64_t>(),
                   .job_id = r["job_id"].as<int>(),
                   .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                   .type = TriggerType::kManual,
                   .param = r["executor_param"].as<std::string>()});
  }
  return out;
}

namespace {

// The claim of the rows of `log_ids` that `node_id` owns and nobody claimed; `limited` true: only those of
// jobs with a concurrency limit, false: only those of jobs without one. Only fire_open is written: the claim
// is a HOT update of a small table.
std::vector<ClaimedFire> ClaimRows(pqxx::transaction_base& tx, std::string_view node_id,
                                   std::span<const std::int64_t> log_ids, std::int64_t now_ms, bool limited) {
  return Claimed(tx.exec_params(R"sql(
    UPDATE fire_open o SET dispatch_ms = $3 FROM job j
     WHERE o.log_id = ANY($1::bigint[]) AND o.owner_node = $2 AND o.dispatch_ms = 0 AND o.trigger_ms = 0
       AND j.id = o.job_id AND (j.concurrency_policy <> 'ALLOW' OR j.max_concurrent > 0) = $4
    RETURNING o.log_id AS id, o.job_id, o.scheduled_ms, o.trigger_type, j.misfire_strategy,
              '' AS executor_param, 0 AS retry_count, 0 AS shard_index, 1 AS shard_total
  )sql",
                                PgArray(log_ids), std::string(node_id), now_ms, limited));
}

// The rows of `log_ids` (not claimed by the first statement) whose jobs have a concurrency limit: each job's
// fires are claimed up to its limit, counting the job's fires already claimed, being sent or running
// anywhere (fire_open rows with dispatch_ms or trigger_ms set; the shards of one broadcast fire count once),
// and the rest are recorded SKIPPED naming a running fire. Jobs are locked in id order with a
// transaction-level advisory lock (kConcurrencyLockClass, job id) before the count, so two admins claiming
// fires of the same job take turns, and the second one's count sees the first one's claim.
std::vector<ClaimedFire> ClaimLimited(pqxx::transaction_base& tx, std::string_view node_id,
                                      std::span<const std::int64_t> log_ids, std::int64_t now_ms) {
  const auto candidates = tx.exec_params(R"sql(
    SELECT o.log_id, o.job_id, o.scheduled_ms, o.trigger_type, j.misfire_strategy, j.concurrency_policy,
           CASE WHEN j.concurrency_policy = 'FORBID' THEN 1 ELSE j.max_concurrent END AS max_running
      FROM fire_open o JOIN job j ON j.id = o.job_id
     WHERE o.log_id = ANY($1::bigint[]) AND o.owner_node = $2 AND o.dispatch_ms = 0 AND o.trigger_ms = 0
       AND (j.concurrency_policy <> 'ALLOW' OR j.max_concurrent > 0)
     ORDER BY o.job_id, o.scheduled_ms, o.log_id
  )sql",
                                         PgArray(log_ids), std::string(node_id));
  if (candidates.empty()) return {};
  std::vector<int> jobs;
  std::vector<std::int64_t> ids;
  for (const auto& r : candidates) {
    const int job = r["job_id"].as<int>();
    if (jobs.empty() || jobs.back() != job) jobs.push_back(job);
    ids.push_back(r["log_id"].as<std::int64_t>());
  }
  // PostgreSQL evaluates a volatile select-list function after ORDER BY, so the locks are taken in id order
  // (no deadlock between two admins' claims).
  tx.exec_params(R"sql(
    SELECT pg_advisory_xact_lock($2, job_id) FROM unnest($1::int[]) AS job_id ORDER BY job_id
  )sql",
                 PgArray<int>(jobs), kConcurrencyLockClass);
  // Read after the locks: this statement's snapshot holds every claim committed before them.
  const auto running = tx.exec_params(R"sql(
    SELECT job_id, count(DISTINCT (scheduled_ms, trigger_type)) AS fires, min(log_id) AS log_id,
           (array_agg(executor_address ORDER BY log_id))[1] AS executor_address
      FROM fire_open
     WHERE job_id = ANY($1::int[]) AND (dispatch_ms > 0 OR trigger_ms > 0) AND NOT log_id = ANY($2::bigint[])
     GROUP BY job_id
  )sql",
                                      PgArray<int>(jobs), PgArray<std::int64_t>(ids));
  struct Running {
    int fires = 0;
    std::int64_t log_id = 0;
    std::string address;
  };
  std::map<int, Running> by_job;
  for (const auto& r : running) {
    Running& job = by_job[r["job_id"].as<int>()];
    job.fires = r["fires"].as<int>();
    job.log_id = r["log_id"].as<std::int64_t>();
    if (!r["executor_address"].is_null()) job.address = r["executor_address"].as<std::string>();
  }
  std::vector<std::int64_t> claim;
  std::vector<ClaimedFire> held;
  json skipped = json::array();
  for (const auto& r : candidates) {
    const int job = r["job_id"].as<int>();
    auto& now_running = by_job[job];
    const int max_running = r["max_running"].as<int>();
    const auto id = r["log_id"].as<std::int64_t>();
    if (now_running.fires < max_running) {
      claim.push_back(id);
      ++now_running.fires;
      if (now_running.log_id == 0) now_running.log_id = id;  // the one a later instant waits for
      continue;
    }
    const auto policy = r["concurrency_policy"].as<std::string>();
    std::string note =
        policy == "FORBID"
            ? fmt::format("concurrency FORBID: fire {} of this job is still running", now_running.log_id)
            : fmt::format(
                  "concurrency: {} fire(s) of this job are running (max_concurrent {}), fire {} among them",
                  now_running.fires, max_running, now_running.log_id);
    if (!now_running.address.empty()) note += fmt::format(" (on {})", now_running.address);
    note += "; this fire is skipped";
    skipped.push_back({{"i", id}, {"n", note}});
    held.push_back(
        {.log_id = id,
         .job_id = job,
         .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
         .type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron),
         .misfire_strategy =
             ParseMisfireStrategy(r["misfire_strategy"].c_str()).value_or(MisfireStrategy::kDoNothing),
         .held_by_log_id = now_running.log_id});
  }
  SkipRows(tx, skipped);
  std::vector<ClaimedFire> claimed;
  if (!claim.empty()) claimed = ClaimRows(tx, node_id, claim, now_ms, true);
  claimed.insert(claimed.end(), std::make_move_iterator(held.begin()), std::make_move_iterator(held.end()));
  return claimed;
}

}  // namespace

std::vector<ClaimedFire> ClaimForDispatch(pqxx::transaction_base& tx, std::string_view node_id,
                                          std::span<const std::int64_t> log_ids, std::int64_t now_ms) {
  if (log_ids.empty()) return {};
  auto claimed = ClaimRows(tx, node_id, log_ids, now_ms, false);
  if (claimed.size() == log_ids.size()) return claimed;  // the common case: no job with a limit among them
  std::vector<std::int64_t> rest;
  {
    std::vector<std::int64_t> got;
    got.reserve(claimed.size());
    for (const auto& c : claimed)
      got.push_back(c.log_id);
    std::sort(got.begin(), got.end());
    for (const auto id : log_ids) {
      if (!std::binary_search(got.begin(), got.end(), id)) rest.push_back(id);
    }
  }
  auto limited = ClaimLimited(tx, node_id, rest, now_ms);
  claimed.insert(claimed.end(), std::make_move_iterator(limited.begin()),
                 std::make_move_iterator(limited.end()));
  return claimed;
}

std::size_t ReleaseDoubtfulClaims(pqxx::transaction_base& tx, std::string_view node_id,
                                  std::span<const std::int64_t> log_ids,
                                  std::span<const std::int64_t> claims) {
  if (log_ids.empty() || claims.empty()) return 0;
  return tx
      .exec_params(R"sql(
    UPDATE fire_open SET dispatch_ms = 0
     WHERE log_id = ANY($1::bigint[]) AND owner_node = $2 AND trigger_ms = 0 AND dispatch_ms = ANY($3::bigint[])
  )sql",
                   PgArray(log_ids), std::string(node_id), PgArray(claims))
      .affected_rows();
}

std::vector<ClaimedFire> OwnUnclaimed(pqxx::transaction_base& tx, std::string_view node_id,
                                      std::int64_t after_log_id, int limit) {
  return Claimed(tx.exec_params(fmt::format(R"sql(
    SELECT {} FROM fire_open o
      JOIN job_log l ON l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
      JOIN job j ON j.id = l.job_id
     WHERE o.owner_node = $1 AND o.dispatch_ms = 0 AND o.trigger_ms = 0 AND o.log_id > $2
     ORDER BY o.log_id LIMIT $3
  )sql",
                                            kClaimedColumns),
                                std::string(node_id), after_log_id, limit));
}

void MarkSkipped(pqxx::transaction_base& tx, std::span<const std::int64_t> log_ids, std::string_view note) {
  json rows = json::array();
  for (const auto id : log_ids)
    rows.push_back({{"i", id}, {"n", note}});
  SkipRows(tx, rows);
}

std::vector<std::int64_t> CreateShards(pqxx::transaction_base& tx, std::int64_t base_log_id, int total,
                                       std::string_view node_id, std::int64_t now_ms) {
  std::vector<std::int64_t> ids{base_log_id};
  const auto base = tx.exec_params(R"sql(
    UPDATE job_log l SET shard_total = $2, broadcast_log_id = $1 FROM fire_open o
     WHERE o.log_id = $1 AND l.id = $1 AND l.scheduled_ms = o.scheduled_ms
       AND l.shard_total = 1 AND l.shard_index = 0
    RETURNING l.scheduled_ms
  )sql",
                                   base_log_id, total);
  if (base.empty()) return ids;  // expanded before
  // The other shards are written already claimed for sending (by node_id), and open.
  const auto rows = tx.exec_params(R"sql(
    WITH ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, dispatch_ms, executor_param,
                           shard_index, shard_total, retry_count, parent_log_id, created_ms, broadcast_log_id,
                           workflow_run_id, workflow_node)
      SELECT b.job_id, b.group_id, b.trigger_type, b.scheduled_ms, $3, $4, b.executor_param, i, $2,
             b.retry_count, b.parent_log_id, $4, $1, b.workflow_run_id, b.workflow_node
        FROM job_log b CROSS JOIN generate_series(1, $2 - 1) AS i
       WHERE b.id = $1 AND b.scheduled_ms = $5
       ORDER BY i
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, shard_index),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node, dispatch_ms)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $3, $4 FROM ins)
    SELECT id, shard_index FROM ins
  )sql",
                                   base_log_id, total, std::string(node_id), now_ms,
                                   base[0]["scheduled_ms"].as<std::int64_t>());
  ids.resize(static_cast<std::size_t>(total), 0);
  for (const auto& r : rows)
    ids[r["shard_index"].as<std::size_t>()] = r["id"].as<std::int64_t>();
  return ids;
}

// --- recovery --------------------------------------------------------------------------------------------

std::vector<ClaimedFire> ReOwn(pqxx::transaction_base& tx, std::string_view new_owner, Owner whose,
                               std::string_view owner, int limit) {
  // Another node's rows are taken with SKIP LOCKED (two live nodes never wait on each other; a row skipped
  // now is taken on the next round). This node's own rows at start are waited for: nobody else will ever
  // take them, so one skipped because a dead process's transaction still locked it would be stranded.
  // ($2 is always bound: a parameter PostgreSQL cannot type is an error.)
  // An open fire not yet accepted by an executor (trigger_ms 0) has no trigger result and no callback: a
  // callback or a failed trigger closes it (deletes its fire_open row).
  const char* who = whose == Owner::kHandedOver ? "owner_node IS NULL AND $2::text = ''" : "owner_node = $2";
  const char* locking = whose == Owner::kSelf ? "FOR UPDATE" : "FOR UPDATE SKIP LOCKED";
  return Claimed(tx.exec_params(fmt::format(R"sql(
    WITH o AS (
      UPDATE fire_open SET owner_node = $1, dispatch_ms = 0
       WHERE log_id IN (SELECT log_id FROM fire_open WHERE {} AND trigger_ms = 0
                         ORDER BY log_id LIMIT $3 {})
      RETURNING log_id, scheduled_ms),
    l AS (
      UPDATE job_log l SET owner_node = $1, dispatch_ms = 0 FROM o
       WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
      RETURNING l.*)
    SELECT {} FROM l JOIN job j ON j.id = l.job_id ORDER BY l.id
  )sql",
                                            who, locking, kClaimedColumns),
                                std::string(new_owner), std::string(owner), limit));
}

std::size_t HandOver(pqxx::transaction_base& tx, std::string_view node_id,
                     std::span<const std::int64_t> log_ids) {
  return tx
      .exec_params(R"sql(
    WITH o AS (
      UPDATE fire_open SET owner_node = NULL, dispatch_ms = 0
       WHERE owner_node = $1 AND trigger_ms = 0 AND (dispatch_ms = 0 OR log_id = ANY($2::bigint[]))
      RETURNING log_id, scheduled_ms)
    UPDATE job_log l SET owner_node = NULL, dispatch_ms = 0 FROM o
     WHERE l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
  )sql",
                   std::string(node_id), PgArray(log_ids))
      .affected_rows();
}

}  // namespace cronwheel::admin::fire_log
