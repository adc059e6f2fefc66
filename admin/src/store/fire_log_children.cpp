// The statements that write job_log (store/fire_log.hpp), third part: the child jobs a callback fires
// (InsertChildren): a broadcast's fan-in and the parameters that name a parent's result. The scheduler's,
// recovery's and results' statements are in fire_log.cpp, failures' and the console's in
// fire_log_failures.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "admin/model/parent_refs.hpp"
#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::fire_log {

// Rows for json_to_recordset are dumped with DumpLossy: invalid UTF-8 in user text is replaced, never
// thrown on.
using nlohmann::json;

// The parents whose children fire now: each fire that is not a shard of a broadcast, and for the shards
// among `parents`, their broadcast fire (its shard 0's id and instant) once every shard of it has
// succeeded (a shard that failed counts once a retry of it has). The broadcasts are locked in id order
// with a transaction-level advisory lock before they are counted, so of two callbacks finishing the last
// two shards at once, the second waits and then sees the first: the children fire exactly once.
std::vector<HandledFire> FanInBroadcasts(pqxx::transaction_base& tx, std::span<const HandledFire> parents) {
  std::vector<HandledFire> out;
  std::map<std::int64_t, HandledFire> broadcasts;  // broadcast (shard 0) id -> a shard of it
  for (const auto& p : parents) {
    if (p.shard_total <= 1 || p.broadcast_log_id == 0) {
      out.push_back(p);
      continue;
    }
    auto [it, added] = broadcasts.emplace(p.broadcast_log_id, p);
    if (!added && it->second.type == TriggerType::kRetry) it->second = p;  // prefer a shard at its instant
  }
  if (broadcasts.empty()) return out;
  // A shard written with its broadcast has its instant; a retry is due later: its broadcast's instant is
  // looked up by id (in every partition; retries of shards are rare).
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> retried;
  for (const auto& [id, shard] : broadcasts) {
    ids.push_back(id);
    if (shard.type == TriggerType::kRetry) retried.push_back(id);
  }
  std::map<std::int64_t, std::int64_t> instant;
  if (!retried.empty()) {
    for (const auto& r :
         tx.exec_params(R"sql(SELECT id, scheduled_ms FROM job_log WHERE id = ANY($1::bigint[]))sql",
                        PgArray<std::int64_t>(retried))) {
      instant[r["id"].as<std::int64_t>()] = r["scheduled_ms"].as<std::int64_t>();
    }
  }
  tx.exec_params(R"sql(
    SELECT pg_advisory_xact_lock($2, (b & 2147483647)::int) FROM unnest($1::bigint[]) AS b ORDER BY b
  )sql",
                 PgArray<std::int64_t>(ids), kFanInLockClass);
  json rows = json::array();
  for (auto& [id, shard] : broadcasts) {
    if (shard.type == TriggerType::kRetry) {
      const auto it = instant.find(id);
      if (it == instant.end()) continue;  // the broadcast's rows are gone (retention)
      shard.scheduled_ms = it->second;
    }
    rows.push_back({{"b", id}, {"j", shard.job_id}, {"s", shard.scheduled_ms}});
  }
  // Read after the locks: every shard's result committed before them is seen.
  for (const auto& r : tx.exec_params(R"sql(
         SELECT v.b, v.j, v.s, max(l.shard_total) AS total,
                count(DISTINCT l.shard_index) FILTER (WHERE l.handle_code = 200) AS succeeded
           FROM json_to_recordset($1::json) AS v(b bigint, j int, s bigint)
           JOIN job_log l ON l.job_id = v.j AND l.scheduled_ms >= v.s AND l.broadcast_log_id = v.b
          GROUP BY v.b, v.j, v.s
       )sql",
                                      DumpLossy(rows))) {
    if (r["succeeded"].as<int>() < r["total"].as<int>()) continue;
    const auto& shard = broadcasts.at(r["b"].as<std::int64_t>());
    out.push_back({.log_id = r["b"].as<std::int64_t>(),
                   .job_id = r["j"].as<int>(),
                   .scheduled_ms = r["s"].as<std::int64_t>(),
                   .handle_code = 200,
                   .shard_total = r["total"].as<int>(),
                   .broadcast_log_id = r["b"].as<std::int64_t>(),
                   .workflow_run_id = shard.workflow_run_id,
                   .workflow_node = shard.workflow_node});
  }
  return out;
}

// The results of `parents` that children name in their parameters ({{parent.output}}, ...): a fire's own
// handle message and output; a broadcast's shard 0 handle message and the array of its shards' outputs.
std::map<std::int64_t, ParentResult> ParentResults(pqxx::transaction_base& tx,
                                                   std::span<const HandledFire> parents,
                                                   const std::set<std::int64_t>& wanted) {
  std::map<std::int64_t, ParentResult> out;
  json plain = json::array();
  json broadcasts = json::array();
  for (const auto& p : parents) {
    if (!wanted.contains(p.log_id)) continue;
    auto& row = p.shard_total > 1 && p.broadcast_log_id == p.log_id ? broadcasts : plain;
    row.push_back({{"i", p.log_id}, {"s", p.scheduled_ms}, {"j", p.job_id}});
  }
  for (const auto& r : tx.exec_params(R"sql(
         SELECT l.id, l.handle_msg, l.output::text AS output
           FROM json_to_recordset($1::json) AS v(i bigint, s bigint, j int)
           JOIN job_log l ON l.id = v.i AND l.scheduled_ms = v.s
       )sql",
                                      DumpLossy(plain))) {
    auto& p = out[r["id"].as<std::int64_t>()];
    p.log_id = r["id"].as<std::int64_t>();
    p.handle_msg = r["handle_msg"].as<std::string>();
    if (!r["output"].is_null()) p.output = json::parse(r["output"].as<std::string>(), nullptr, false);
  }
  // The last successful row of each shard index (a retried shard's retry), in index order.
  for (const auto& r : tx.exec_params(R"sql(
         SELECT DISTINCT ON (v.i, l.shard_index) v.i AS broadcast, l.shard_index, l.shard_total, l.handle_msg,
                l.output::text AS output
           FROM json_to_recordset($1::json) AS v(i bigint, s bigint, j int)
           JOIN job_log l ON l.job_id = v.j AND l.scheduled_ms >= v.s AND l.broadcast_log_id = v.i
          WHERE l.handle_code = 200
          ORDER BY v.i, l.shard_index, l.id DESC
       )sql",
                                      DumpLossy(broadcasts))) {
    const auto id = r["broadcast"].as<std::int64_t>();
    auto& p = out[id];
    p.log_id = id;
    if (!p.output) p.output = json::array();
    const auto index = r["shard_index"].as<std::size_t>();
    if (p.output->size() <= index) p.output->get_ref<json::array_t&>().resize(index + 1);
    if (!r["output"].is_null())
      (*p.output)[index] = json::parse(r["output"].as<std::string>(), nullptr, false);
    if (index == 0) p.handle_msg = r["handle_msg"].as<std::string>();
  }
  return out;
}

namespace {

// Replaces the references to their parent in the parameters of `children` (admin/model/parent_refs.hpp), in
// their rows and in the fires to send, and appends a note to a child's trigger message for each reference
// that could not be resolved. Children without a reference are not touched. A child whose parameter cannot
// take a value by the insertion rules (security review 2, N3) is not sent: it is taken out of `children` and
// recorded as failed to trigger, with no retry (its alarm is the failure monitor's), its parameter as
// written.
void ResolveChildParams(pqxx::transaction_base& tx, std::span<const HandledFire> parents,
                        std::vector<Fire>& children, const std::map<std::int64_t, std::int64_t>& parent_of,
                        std::int64_t now_ms) {
  const auto named = [](const Fire& c) { return c.param && HasParentRefs(*c.param); };
  std::set<std::int64_t> wanted;
  for (const auto& c : children)
    if (named(c)) wanted.insert(parent_of.at(c.log_id));
  if (wanted.empty()) return;
  const auto results = ParentResults(tx, parents, wanted);
  json rows = json::array();
  std::vector<TriggerResult> refused;
  std::set<std::int64_t> not_sent;
  for (auto& c : children) {
    if (!named(c)) continue;
    const auto it = results.find(parent_of.at(c.log_id));
    const auto resolved = ResolveParentRefs(*c.param, it != results.end() ? it->second : ParentResult{});
    std::string notes;
    for (const auto& n : resolved.notes)
      notes += "\n" + n;
    if (resolved.refused) {
      refused.push_back({.log_id = c.log_id,
                         .scheduled_ms = c.scheduled_ms,
                         .type = c.type,
                         .trigger_ms = now_ms,
                         .trigger_code = 500,
                         .trigger_msg = "parameter refused, nothing was sent: " + *resolved.refused + notes,
                         .executor_param = *c.param,
                         .retry_count = 0});
      not_sent.insert(c.log_id);
      continue;
    }
    c.param = resolved.param;
    rows.push_back({{"i", c.log_id}, {"p", resolved.param}, {"n", notes}});
  }
  if (!rows.empty()) {
    tx.exec_params(R"sql(
    UPDATE job_log l SET executor_param = v.p, trigger_msg = l.trigger_msg || v.n
      FROM json_to_recordset($1::json) AS v(i bigint, p text, n text)
     WHERE l.id = v.i AND l.scheduled_ms = $2
  )sql",
                   DumpLossy(rows), now_ms);
  }
  if (refused.empty()) return;
  RecordTriggerResults(tx, refused);
  std::erase_if(children, [&](const Fire& c) { return not_sent.contains(c.log_id); });
}

}  // namespace

std::vector<Fire> InsertChildren(pqxx::transaction_base& tx, std::span<const HandledFire> handled,
                                 std::string_view node_id, std::int64_t now_ms) {
  if (handled.empty()) return {};
  // Most parents' jobs have no child jobs. One primary-key look-up says whether any does; only then runs
  // the statement below, whose recursive part the planner cannot size (with no child jobs at all it cost
  // 23 ms per callback batch at N = 5,000 every-second jobs, 92 µs per fire: docs/performance.md).
  std::vector<int> job_ids;
  job_ids.reserve(handled.size());
  for (const auto& p : handled)
    job_ids.push_back(p.job_id);
  const auto any_children = tx.exec_params(R"sql(
    SELECT EXISTS (SELECT 1 FROM job WHERE id = ANY($1::int[]) AND cardinality(child_job_ids) > 0)
  )sql",
                                           PgArray<int>(job_ids));
  if (!any_children[0][0].as<bool>()) return {};
  // A shard of a broadcast fire is a parent only as its whole broadcast, once all shards have succeeded.
  const auto parents = FanInBroadcasts(tx, handled);
  if (parents.empty()) return {};
  json given = json::array();
  for (const auto& p : parents)
    given.push_back({{"i", p.log_id}, {"s", p.scheduled_ms}, {"j", p.job_id}, {"n", p.shard_total}});
  // Only parents whose job has child jobs are looked at (most have none); their ancestry (the PARENT chain
  // back, to refuse a cycle created by racing edits) follows parent_log_id, by id, only for them.
  const auto created = tx.exec_params(R"sql(
    WITH RECURSIVE p AS (
        SELECT v.i AS id, v.s AS scheduled_ms, v.n AS shards, pj.child_job_ids
          FROM json_to_recordset($1::json) AS v(i bigint, s bigint, j int, n int)
          JOIN job pj ON pj.id = v.j
         WHERE cardinality(pj.child_job_ids) > 0),
    ancestry(origin, log_id, job_id, depth) AS (
        SELECT l.id, l.id, l.job_id, 0 FROM job_log l JOIN p ON l.id = p.id AND l.scheduled_ms = p.scheduled_ms
      UNION ALL
        SELECT a.origin, par.id, par.job_id, a.depth + 1
          FROM ancestry a
          JOIN job_log c ON c.id = a.log_id
          JOIN job_log par ON par.id = c.parent_log_id
         WHERE c.trigger_type = 'PARENT' AND a.depth < 64),
    wanted AS (
      SELECT p.id AS parent_id, p.shards, child.id AS child_id, child.group_id, child.param, child.retry_count,
             child.enabled OR child.schedule_type = 'NONE' AS fire
        FROM p
        CROSS JOIN LATERAL unnest(p.child_job_ids) AS c(id)
        JOIN job child ON child.id = c.id
       WHERE NOT EXISTS (SELECT 1 FROM ancestry a WHERE a.origin = p.id AND a.job_id = child.id)),
    ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param,
                           retry_count, parent_log_id, created_ms, trigger_msg)
      SELECT child_id, group_id, 'PARENT', $2, $3, param, retry_count, parent_id, $2,
             CASE WHEN shards > 1 THEN 'Parent job trigger: all ' || shards || ' shards of broadcast fire '
                                       || parent_id || ' succeeded'
                  ELSE 'Parent job trigger: fire ' || parent_id || ' succeeded' END
        FROM wanted
       WHERE fire
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, executor_param, retry_count, parent_log_id),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $3 FROM ins)
    SELECT id, job_id, executor_param, retry_count, parent_log_id FROM ins
    UNION ALL
    SELECT NULL, child_id, NULL, NULL, parent_id FROM wanted WHERE NOT fire
  )sql",
                                      DumpLossy(given), now_ms, std::string(node_id));
  // The note on each parent is built from what the INSERT returned, and the stopped children it left out
  // (the rows without an id): only parents that have a child are touched. (Finding them with a subquery on
  // job_log.parent_log_id, which has no index, scanned the whole table once per callback batch;
  // docs/performance.md.) Ordered by id, as every batched writer.
  std::vector<Fire> children;
  struct Kids {
    std::vector<std::pair<std::int64_t, int>> fired;  // fire, job
    std::vector<int> stopped;                         // jobs
  };
  std::map<std::int64_t, Kids> by_parent;
  std::map<std::int64_t, std::int64_t> parent_of;  // child fire -> parent fire
  for (const auto& r : created) {
    auto& kids = by_parent[r["parent_log_id"].as<std::int64_t>()];
    if (r["id"].is_null()) {
      kids.stopped.push_back(r["job_id"].as<int>());
      continue;
    }
    children.push_back({.log_id = r["id"].as<std::int64_t>(),
                        .job_id = r["job_id"].as<int>(),
                        .scheduled_ms = now_ms,
                        .type = TriggerType::kParent,
                        .param = r["executor_param"].as<std::string>(),
                        .retry_count = r["retry_count"].as<int>()});
    kids.fired.emplace_back(r["id"].as<std::int64_t>(), r["job_id"].as<int>());
    parent_of[r["id"].as<std::int64_t>()] = r["parent_log_id"].as<std::int64_t>();
  }
  if (by_parent.empty()) return children;
  ResolveChildParams(tx, parents, children, parent_of, now_ms);
  std::map<std::int64_t, std::int64_t> instant_of;
  for (const auto& p : parents)
    instant_of[p.log_id] = p.scheduled_ms;
  json notes = json::array();
  for (auto& [parent, kids] : by_parent) {
    std::sort(kids.fired.begin(), kids.fired.end());
    std::sort(kids.stopped.begin(), kids.stopped.end());
    std::string m = "\n>>>>>>>>>>> Trigger child job <<<<<<<<<<<";
    for (const auto& [log_id, job_id] : kids.fired)
      m += fmt::format("\nchild job {}: fire {}", job_id, log_id);
    for (const int job_id : kids.stopped)
      m += fmt::format("\nchild job {}: not fired, it is stopped", job_id);
    notes.push_back({{"i", parent}, {"s", instant_of[parent]}, {"m", std::move(m)}});
  }
  tx.exec_params(R"sql(
    UPDATE job_log p SET handle_msg = p.handle_msg || v.m
      FROM json_to_recordset($1::json) AS v(i bigint, s bigint, m text)
     WHERE p.id = v.i AND p.scheduled_ms = v.s
  )sql",
                 DumpLossy(notes));
  return children;
}

std::vector<std::pair<WorkflowFire, Fire>> InsertWorkflowFires(pqxx::transaction_base& tx,
                                                               std::span<const WorkflowFire> fires,
                                                               std::string_view node_id,
                                                               std::int64_t now_ms) {
  if (fires.empty()) return {};
  json rows = json::array();
  for (std::size_t i = 0; i < fires.size(); ++i) {
    const auto& f = fires[i];
    rows.push_back({{"n", i},
                    {"w", f.run_id},
                    {"k", f.node},
                    {"j", f.job_id},
                    {"s", f.scheduled_ms},
                    {"p", f.param},
                    {"m", f.note}});
  }
  const auto inserted = tx.exec_params(R"sql(
    WITH v AS (
      SELECT * FROM json_to_recordset($1::json) AS v(n int, w bigint, k text, j int, s bigint, p text, m text)),
    ins AS (
      INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param, retry_count,
                           workflow_run_id, workflow_node, trigger_msg, created_ms)
      SELECT v.j, j.group_id, 'WORKFLOW', v.s, $2, v.p, j.retry_count, v.w, v.k, v.m, $3
        FROM v JOIN job j ON j.id = v.j
       ORDER BY v.n
      RETURNING id, job_id, group_id, scheduled_ms, trigger_type, retry_count, workflow_run_id, workflow_node),
    open AS (
      INSERT INTO fire_open (log_id, scheduled_ms, job_id, group_id, trigger_type, owner_node)
      SELECT id, scheduled_ms, job_id, group_id, trigger_type, $2 FROM ins)
    SELECT id, scheduled_ms, retry_count, workflow_run_id, workflow_node FROM ins
  )sql",
                                       DumpLossy(rows), std::string(node_id), now_ms);
  std::map<std::pair<std::int64_t, std::string>, pqxx::row> by_node;
  for (const auto& r : inserted) {
    by_node.emplace(std::pair{r["workflow_run_id"].as<std::int64_t>(), r["workflow_node"].as<std::string>()},
                    r);
  }
  std::vector<std::pair<WorkflowFire, Fire>> out;
  for (const auto& f : fires) {
    const auto it = by_node.find({f.run_id, f.node});
    if (it == by_node.end()) continue;  // its job is gone
    const auto& r = it->second;
    out.emplace_back(f, Fire{.log_id = r["id"].as<std::int64_t>(),
                             .job_id = f.job_id,
                             .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                             .type = TriggerType::kWorkflow,
                             .param = f.param,
                             .retry_count = r["retry_count"].as<int>()});
  }
  return out;
}

}  // namespace cronwheel::admin::fire_log
