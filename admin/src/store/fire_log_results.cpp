// The statements that write a fire's results to job_log (store/fire_log.hpp): the executor's answer to its
// /run (trigger results, store/trigger_result_writer.hpp) and its callback (handle results,
// results/callback_service.hpp), alone or, for a fire sent ahead, both in one update of the row.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::fire_log {
namespace {

using nlohmann::json;

// Two results of one fire in a batch (a fire sent ahead, then routed again when its executor lost it) become
// one, the later one's, with both messages: an UPDATE ... FROM with two matching rows would apply one of
// them, either. By log id.
struct Folded {
  const TriggerResult* last = nullptr;
  std::string msg;
};
std::map<std::int64_t, Folded> FoldByFire(std::span<const TriggerResult> results) {
  std::map<std::int64_t, Folded> out;
  for (const auto& r : results) {
    auto [it, first] = out.try_emplace(r.log_id);
    if (!first) it->second.msg += '\n';
    it->second.msg += r.trigger_msg;
    it->second.last = &r;
  }
  return out;
}

}  // namespace

void RecordTriggerResults(pqxx::transaction_base& tx, std::span<const TriggerResult> results) {
  if (results.empty()) return;
  json rows = json::array();
  for (auto& [id, f] : FoldByFire(results)) {
    const auto& r = *f.last;
    rows.push_back({{"i", id},
                    {"s", r.scheduled_ms},
                    {"t", r.trigger_ms},
                    {"c", r.trigger_code},
                    {"m", std::move(f.msg)},
                    {"a", r.executor_address},
                    {"h", r.executor_handler},
                    {"p", r.executor_param},
                    {"si", r.shard_index},
                    {"st", r.shard_total},
                    {"r", r.retry_count}});
  }
  // An accepted fire stays open (it waits for its callback) and records where it runs; a failed trigger
  // closes it and waits for the failure monitor. job_log's update is HOT: it changes no indexed column.
  tx.exec_params(R"sql(
    WITH v AS (
      SELECT * FROM json_to_recordset($1::json)
             AS v(i bigint, s bigint, t bigint, c int, m text, a text, h text, p text, si int, st int, r int)),
    accepted AS (
      UPDATE fire_open o SET trigger_ms = v.t, executor_address = v.a FROM v
       WHERE o.log_id = v.i AND v.c = 200
      RETURNING o.log_id, o.dispatch_ms),
    failed AS (
      DELETE FROM fire_open o USING v WHERE o.log_id = v.i AND v.c <> 200
      RETURNING o.log_id, o.dispatch_ms),
    l AS (
      UPDATE job_log l
         SET trigger_ms = v.t, trigger_code = v.c,
             trigger_msg = CASE WHEN l.trigger_msg = '' THEN v.m ELSE l.trigger_msg || E'\n' || v.m END,
             executor_address = v.a, executor_handler = v.h, executor_param = v.p,
             shard_index = v.si, shard_total = v.st, retry_count = v.r,
             dispatch_ms = COALESCE(a.dispatch_ms, f.dispatch_ms, l.dispatch_ms)
        FROM v LEFT JOIN accepted a ON a.log_id = v.i LEFT JOIN failed f ON f.log_id = v.i
       WHERE l.id = v.i AND l.scheduled_ms = v.s
      RETURNING l.id, l.scheduled_ms, l.trigger_code, l.handle_code)
    INSERT INTO fire_alarm (log_id, scheduled_ms)
    SELECT id, scheduled_ms FROM l WHERE trigger_code <> 200 AND handle_code = 0
    ON CONFLICT (log_id) DO NOTHING
  )sql",
                 DumpLossy(rows));
}

std::vector<HandledFire> RecordHandleResults(pqxx::transaction_base& tx,
                                             std::span<const HandleResult> results,
                                             std::span<const TriggerResult> triggers, std::int64_t now_ms) {
  if (results.empty()) {
    RecordTriggerResults(tx, triggers);
    return {};
  }
  std::vector<std::int64_t> ids;
  ids.reserve(results.size());
  for (const auto& r : results)
    ids.push_back(r.log_id);
  // Where each fire lives: an open fire is closed here (its instant locates its partition of job_log). A
  // fire that is not open — its trigger failed although the executor ran it, the callback repeats one
  // already recorded, or the fire was killed from the console first — is looked up by id alone, in every
  // partition (rare). Only a fire without a result gets this one (the update below); any fire found gets
  // the log its callback carries archived, or its pull queued, once.
  struct Open {
    std::int64_t scheduled_ms = 0;
    std::int64_t dispatch_ms = 0;
  };
  std::map<std::int64_t, Open> instant;
  for (const auto& r : tx.exec_params(R"sql(
         DELETE FROM fire_open WHERE log_id = ANY($1::bigint[]) RETURNING log_id, scheduled_ms, dispatch_ms
       )sql",
                                      PgArray<std::int64_t>(ids))) {
    instant[r["log_id"].as<std::int64_t>()] = {r["scheduled_ms"].as<std::int64_t>(),
                                               r["dispatch_ms"].as<std::int64_t>()};
  }
  if (instant.size() < ids.size()) {
    std::vector<std::int64_t> missing;
    for (const auto id : ids) {
      if (!instant.contains(id)) missing.push_back(id);
    }
    for (const auto& r : tx.exec_params(R"sql(
           SELECT id, scheduled_ms, dispatch_ms FROM job_log WHERE id = ANY($1::bigint[])
         )sql",
                                        PgArray<std::int64_t>(missing))) {
      instant[r["id"].as<std::int64_t>()] = {r["scheduled_ms"].as<std::int64_t>(),
                                             r["dispatch_ms"].as<std::int64_t>()};
    }
  }
  // The trigger results kept back for these callbacks go into the same update of each row (prefixed "t").
  auto trigger_of = FoldByFire(triggers);
  json rows = json::array();
  for (const auto& r : results) {
    const auto it = instant.find(r.log_id);
    if (it == instant.end()) continue;
    json row{{"i", r.log_id},
             {"s", it->second.scheduled_ms},
             {"c", r.handle_code},
             {"m", r.handle_msg},
             {"t", r.start_ms}};
    if (r.output) row["o"] = *r.output;  // the JSON text, cast to jsonb by the statement
    if (r.log) {                         // the fire output archive: stored by the same statement
      row["lg"] = r.log->content;
      row["lb"] = r.log->log_bytes;
      row["lo"] = r.log->left_out;
    } else if (r.pull_log_at_ms > 0) {
      row["pd"] = r.pull_log_at_ms;
    }
    if (const auto t = trigger_of.find(r.log_id); t != trigger_of.end()) {
      const auto& tr = *t->second.last;
      row["tt"] = tr.trigger_ms;
      row["tc"] = tr.trigger_code;
      row["tm"] = std::move(t->second.msg);
      row["ta"] = tr.executor_address;
      row["th"] = tr.executor_handler;
      row["tp"] = tr.executor_param;
      row["tsi"] = tr.shard_index;
      row["tst"] = tr.shard_total;
      row["tr"] = tr.retry_count;
      row["td"] = it->second.dispatch_ms;
    }
    rows.push_back(std::move(row));
  }
  std::vector<HandledFire> out;
  if (!rows.empty()) {
    // A column absent from a row is NULL: the row keeps what it has. The fire output archive rides along in
    // the same statement: the log a callback carried is stored (once: a repeat changes nothing), and a fire
    // without one is queued for the output puller unless its log is archived already. A log is stored only
    // for a fire that exists (a killed fire's late callback still brings its log), a pull queued only for a
    // fire whose result this callback recorded: a callback naming no fire, or repeating an ended fire's
    // result, changes nothing (BadInputE2E).
    const auto done = tx.exec_params(R"sql(
      WITH v AS (
        SELECT * FROM json_to_recordset($1::json)
               AS v(i bigint, s bigint, c int, m text, t bigint, o text, tt bigint, tc int, tm text, ta text,
                    th text, tp text, tsi int, tst int, tr int, td bigint, lg text, lb bigint, lo bigint,
                    pd bigint)),
      l AS (
        UPDATE job_log l
           SET handle_code = v.c, handle_ms = $2, start_ms = v.t, output = v.o::jsonb,
               handle_msg = CASE WHEN l.handle_msg = '' THEN v.m ELSE l.handle_msg || E'\n' || v.m END,
               trigger_ms = COALESCE(v.tt, l.trigger_ms), trigger_code = COALESCE(v.tc, l.trigger_code),
               trigger_msg = CASE WHEN v.tm IS NULL THEN l.trigger_msg WHEN l.trigger_msg = '' THEN v.tm
                                  ELSE l.trigger_msg || E'\n' || v.tm END,
               executor_address = COALESCE(v.ta, l.executor_address),
               executor_handler = COALESCE(v.th, l.executor_handler),
               executor_param = COALESCE(v.tp, l.executor_param), shard_index = COALESCE(v.tsi, l.shard_index),
               shard_total = COALESCE(v.tst, l.shard_total), retry_count = COALESCE(v.tr, l.retry_count),
               dispatch_ms = COALESCE(v.td, l.dispatch_ms)
          FROM v
         WHERE l.id = v.i AND l.scheduled_ms = v.s AND l.handle_code = 0
        RETURNING l.id, l.job_id, l.scheduled_ms, l.handle_code, l.trigger_type, l.start_ms, l.shard_total,
                  l.broadcast_log_id, l.workflow_run_id, l.workflow_node),
      failed AS (
        INSERT INTO fire_alarm (log_id, scheduled_ms)
        SELECT id, scheduled_ms FROM l WHERE handle_code <> 200
        ON CONFLICT (log_id) DO NOTHING),
      pushed AS (
        INSERT INTO fire_output (log_id, scheduled_ms, via, archived_ms, log_bytes, left_out_bytes, content)
        SELECT i, s, 'push', $2, lb, lo, lg FROM v
         WHERE lg IS NOT NULL AND EXISTS (SELECT 1 FROM job_log j WHERE j.id = v.i AND j.scheduled_ms = v.s)
        ON CONFLICT DO NOTHING),
      pulls AS (
        INSERT INTO fire_output_pull (log_id, scheduled_ms, due_ms)
        SELECT i, s, pd FROM v
         WHERE pd IS NOT NULL AND v.i IN (SELECT id FROM l)
           AND NOT EXISTS (SELECT 1 FROM fire_output o WHERE o.log_id = v.i AND o.scheduled_ms = v.s)
        ON CONFLICT (log_id) DO NOTHING)
      SELECT id, job_id, scheduled_ms, handle_code, trigger_type, start_ms, shard_total, broadcast_log_id,
             workflow_run_id, workflow_node
        FROM l ORDER BY id
    )sql",
                                     DumpLossy(rows), now_ms);
    out.reserve(done.size());
    for (const auto& r : done) {
      out.push_back({.log_id = r["id"].as<std::int64_t>(),
                     .job_id = r["job_id"].as<int>(),
                     .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                     .handle_code = r["handle_code"].as<int>(),
                     .type = ParseTriggerType(r["trigger_type"].c_str()).value_or(TriggerType::kCron),
                     .start_ms = r["start_ms"].as<std::int64_t>(),
                     .shard_total = r["shard_total"].as<int>(),
                     .broadcast_log_id = r["broadcast_log_id"].as<std::int64_t>(),
                     .workflow_run_id = r["workflow_run_id"].as<std::int64_t>(),
                     .workflow_node = r["workflow_node"].as<std::string>()});
    }
  }
  // Trigger results whose row the update did not write (the callback repeats one already recorded, or its
  // fire is gone) are written as any other.
  std::set<std::int64_t> written;
  for (const auto& h : out)
    written.insert(h.log_id);
  std::vector<TriggerResult> rest;
  for (const auto& t : triggers) {
    if (!written.contains(t.log_id)) rest.push_back(t);
  }
  RecordTriggerResults(tx, rest);
  return out;
}

}  // namespace cronwheel::admin::fire_log
