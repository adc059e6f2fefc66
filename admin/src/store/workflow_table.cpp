#include "store/workflow_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "admin/model/parent_refs.hpp"
#include "admin/store/fire_log.hpp"
#include "cronwheel/json.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin::workflow_table {

using nlohmann::json;

namespace {

struct NodeRow {
  int job_id = 0;
  NodeState state = NodeState::kWaiting;
  std::vector<std::int64_t> log_ids;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  bool dirty = false;
};

// A run locked for update, with its nodes, as the functions below change it; Save writes what changed.
struct LockedRun {
  std::int64_t id = 0;
  int workflow_id = 0;
  std::int64_t scheduled_ms = 0;
  std::string param;
  WorkflowGraph graph;
  RunState state = RunState::kRunning;
  std::int64_t end_ms = 0;
  std::string note;
  std::map<std::string, NodeRow> nodes;
  bool dirty = false;
};

// Locks the runs `ids` (in id order) and reads them with their nodes.
std::map<std::int64_t, LockedRun> Lock(pqxx::transaction_base& tx, std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::map<std::int64_t, LockedRun> out;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT id, workflow_id, scheduled_ms, param, graph::text AS graph, state, end_ms, note
           FROM workflow_run WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE
       )sql",
                                      PgArray<std::int64_t>(ids))) {
    auto& run = out[r["id"].as<std::int64_t>()];
    run.id = r["id"].as<std::int64_t>();
    run.workflow_id = r["workflow_id"].as<int>();
    run.scheduled_ms = r["scheduled_ms"].as<std::int64_t>();
    run.param = r["param"].as<std::string>();
    run.graph = GraphOfColumn(r["graph"]);
    run.state = ParseRunState(r["state"].c_str()).value_or(RunState::kFailed);
    run.end_ms = r["end_ms"].as<std::int64_t>();
    run.note = r["note"].as<std::string>();
  }
  if (out.empty()) return out;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT run_id, key, job_id, state, array_to_json(log_ids)::text AS log_ids, start_ms, end_ms
           FROM workflow_run_node WHERE run_id = ANY($1::bigint[])
       )sql",
                                      PgArray<std::int64_t>(ids))) {
    auto& n = out[r["run_id"].as<std::int64_t>()].nodes[r["key"].as<std::string>()];
    n.job_id = r["job_id"].as<int>();
    n.state = ParseNodeState(r["state"].c_str()).value_or(NodeState::kFailed);
    n.log_ids = IdsOfColumn(r["log_ids"]);
    n.start_ms = r["start_ms"].as<std::int64_t>();
    n.end_ms = r["end_ms"].as<std::int64_t>();
  }
  return out;
}

void Save(pqxx::transaction_base& tx, const std::map<std::int64_t, LockedRun>& runs) {
  json run_rows = json::array();
  json node_rows = json::array();
  for (const auto& [id, run] : runs) {
    if (run.dirty) {
      run_rows.push_back({{"i", id}, {"s", ToString(run.state)}, {"e", run.end_ms}, {"n", run.note}});
    }
    for (const auto& [key, n] : run.nodes) {
      if (!n.dirty) continue;
      node_rows.push_back({{"r", id},
                           {"k", key},
                           {"s", ToString(n.state)},
                           {"l", n.log_ids},
                           {"b", n.start_ms},
                           {"e", n.end_ms}});
    }
  }
  if (!node_rows.empty()) {
    tx.exec_params(R"sql(
      UPDATE workflow_run_node n
         SET state = v.s, log_ids = ARRAY(SELECT json_array_elements_text(v.l)::bigint), start_ms = v.b,
             end_ms = v.e
        FROM json_to_recordset($1::json) AS v(r bigint, k text, s text, l json, b bigint, e bigint)
       WHERE n.run_id = v.r AND n.key = v.k
    )sql",
                   DumpLossy(node_rows));
  }
  if (!run_rows.empty()) {
    tx.exec_params(R"sql(
      UPDATE workflow_run w
         SET state = v.s, end_ms = v.e, note = v.n,
             alarm_status = CASE WHEN v.s = 'FAILED' AND w.state = 'RUNNING' THEN 1 ELSE w.alarm_status END
        FROM json_to_recordset($1::json) AS v(i bigint, s text, e bigint, n text)
       WHERE w.id = v.i
    )sql",
                   DumpLossy(run_rows));
  }
}

// The parameters of the nodes `keys` of `run`: each node's own, else its job's, with its references
// (admin/model/parent_refs.hpp, ResolveWorkflowRefs) resolved against the run and its parents that
// succeeded. A reference that cannot be resolved leaves a note for the fire's trigger message.
std::map<std::string, ResolvedParam> ParamsOf(pqxx::transaction_base& tx, const LockedRun& run,
                                              const std::vector<std::string>& keys) {
  std::map<std::string, const WorkflowNode*> node_of;
  for (const auto& n : run.graph.nodes)
    node_of[n.key] = &n;
  std::vector<int> jobs;
  for (const auto& k : keys)
    if (!node_of.at(k)->param) jobs.push_back(node_of.at(k)->job_id);
  std::map<int, std::string> job_param;
  if (!jobs.empty()) {
    for (const auto& r :
         tx.exec_params(R"sql(SELECT id, param FROM job WHERE id = ANY($1::int[]))sql", PgArray<int>(jobs)))
      job_param[r["id"].as<int>()] = r["param"].as<std::string>();
  }
  std::map<std::string, ResolvedParam> out;
  std::map<std::string, std::vector<std::string>> parents_of;  // the succeeded parents of nodes with refs
  std::set<std::int64_t> wanted;
  for (const auto& k : keys) {
    const auto* node = node_of.at(k);
    auto& p = out[k];
    p.param = node->param ? *node->param : job_param[node->job_id];
    if (!HasWorkflowRefs(p.param)) continue;
    for (const auto& e : run.graph.edges) {
      if (e.to != k) continue;
      const auto& parent = run.nodes.at(e.from);
      if (parent.state == NodeState::kSuccess && !parent.log_ids.empty()) {
        parents_of[k].push_back(e.from);
        wanted.insert(parent.log_ids.back());
      }
    }
  }
  std::map<std::int64_t, ParentResult> results;
  if (!wanted.empty()) {
    const std::vector<std::int64_t> ids(wanted.begin(), wanted.end());
    std::vector<fire_log::HandledFire> fires;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT id, job_id, scheduled_ms, shard_total, broadcast_log_id FROM job_log WHERE id = ANY($1::bigint[])
         )sql",
                                        PgArray<std::int64_t>(ids))) {
      fires.push_back({.log_id = r["id"].as<std::int64_t>(),
                       .job_id = r["job_id"].as<int>(),
                       .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                       .handle_code = 200,
                       .shard_total = r["shard_total"].as<int>(),
                       .broadcast_log_id = r["broadcast_log_id"].as<std::int64_t>()});
    }
    results = fire_log::ParentResults(tx, fires, wanted);
  }
  for (auto& [k, p] : out) {
    if (!HasWorkflowRefs(p.param)) continue;
    WorkflowRefs refs{.run_id = run.id, .workflow_param = run.param};
    for (const auto& parent : parents_of[k]) {
      const auto id = run.nodes.at(parent).log_ids.back();
      const auto it = results.find(id);
      refs.parents[parent] = it != results.end() ? it->second : ParentResult{.log_id = id};
    }
    p = ResolveWorkflowRefs(p.param, refs);
  }
  return out;
}

// Applies Advance to `run` until nothing changes: skips, starts (writing the fires, due at `due_ms`), and
// the run's end. A node whose job is gone fails at its start.
void MoveOn(pqxx::transaction_base& tx, LockedRun& run, std::string_view node_id, std::int64_t due_ms,
            std::int64_t now_ms, std::vector<Fire>& started) {
  if (run.state != RunState::kRunning) return;
  for (;;) {
    std::map<std::string, NodeState> states;
    for (const auto& [k, n] : run.nodes)
      states[k] = n.state;
    const auto p = Advance(run.graph, states);
    for (const auto& k : p.skip) {
      auto& n = run.nodes.at(k);
      n.state = NodeState::kSkipped;
      n.end_ms = now_ms;
      n.dirty = true;
    }
    if (p.start.empty()) {
      if (p.ended) {
        run.state = *p.ended;
        run.end_ms = now_ms;
        run.dirty = true;
      }
      return;
    }
    const auto params = ParamsOf(tx, run, p.start);
    std::vector<fire_log::WorkflowFire> fires;
    for (const auto& k : p.start) {
      const auto& param = params.at(k);
      std::string note =
          fmt::format("Workflow trigger: run {} of workflow {}, node {}", run.id, run.workflow_id, k);
      for (const auto& n : param.notes)
        note += "\n" + n;
      fires.push_back({.run_id = run.id,
                       .node = k,
                       .job_id = run.nodes.at(k).job_id,
                       .scheduled_ms = std::max(due_ms, now_ms),
                       .param = param.param,
                       .note = std::move(note)});
    }
    std::set<std::string> written;
    std::vector<TriggerResult> refused;
    for (auto& [wf, fire] : fire_log::InsertWorkflowFires(tx, fires, node_id, now_ms)) {
      auto& n = run.nodes.at(wf.node);
      n.state = NodeState::kRunning;
      n.start_ms = now_ms;
      n.end_ms = 0;
      n.log_ids.push_back(fire.log_id);
      n.dirty = true;
      written.insert(wf.node);
      // A parameter that cannot take its values (admin/model/parent_refs.hpp): its fire fails at once, with
      // no retry and nothing sent; the failure monitor's claim ends the node FAILED, as any failed trigger.
      if (const auto& why = params.at(wf.node).refused) {
        refused.push_back({.log_id = fire.log_id,
                           .scheduled_ms = fire.scheduled_ms,
                           .type = TriggerType::kWorkflow,
                           .trigger_ms = now_ms,
                           .trigger_code = 500,
                           .trigger_msg = "parameter refused, nothing was sent: " + *why,
                           .executor_param = wf.param,
                           .retry_count = 0});
        continue;
      }
      started.push_back(std::move(fire));
    }
    fire_log::RecordTriggerResults(tx, refused);
    if (written.size() == p.start.size()) return;
    for (const auto& k : p.start) {
      if (written.contains(k)) continue;
      auto& n = run.nodes.at(k);
      n.state = NodeState::kFailed;
      n.start_ms = n.end_ms = now_ms;
      n.dirty = true;
      run.note += fmt::format("{}node {}: job {} does not exist (deleted): failed",
                              run.note.empty() ? "" : "\n", k, n.job_id);
      run.dirty = true;
    }
  }
}

}  // namespace

std::vector<Fire> EndNodes(pqxx::transaction_base& tx, std::span<const NodeEnd> ends,
                           std::string_view node_id, std::int64_t now_ms) {
  if (ends.empty()) return {};
  std::vector<std::int64_t> ids;
  for (const auto& e : ends)
    ids.push_back(e.run_id);
  auto runs = Lock(tx, ids);
  std::set<std::int64_t> changed;
  for (const auto& e : ends) {
    const auto run = runs.find(e.run_id);
    if (run == runs.end()) continue;  // the workflow was deleted
    const auto node = run->second.nodes.find(e.node);
    if (node == run->second.nodes.end()) continue;
    auto& n = node->second;
    if (n.state != NodeState::kRunning || n.log_ids.empty() || n.log_ids.back() != e.log_id) continue;
    n.state = e.state;
    n.end_ms = now_ms;
    n.dirty = true;
    changed.insert(e.run_id);
  }
  std::vector<Fire> started;
  for (const auto id : changed)
    MoveOn(tx, runs.at(id), node_id, now_ms, now_ms, started);
  Save(tx, runs);
  return started;
}

void AddRetries(pqxx::transaction_base& tx, std::span<const PlannedRetry> planned,
                std::span<const Fire> written) {
  json rows = json::array();
  for (std::size_t i = 0; i < planned.size() && i < written.size(); ++i) {
    const auto& p = planned[i];
    if (p.workflow_run_id == 0 || p.broadcast_log_id != 0) continue;
    rows.push_back(
        {{"r", p.workflow_run_id}, {"k", p.workflow_node}, {"p", p.parent_log_id}, {"l", written[i].log_id}});
  }
  if (rows.empty()) return;
  // Only where the failed fire is still the node's latest (a run killed meanwhile keeps its record).
  tx.exec_params(R"sql(
    UPDATE workflow_run_node n SET log_ids = n.log_ids || v.l
      FROM json_to_recordset($1::json) AS v(r bigint, k text, p bigint, l bigint)
     WHERE n.run_id = v.r AND n.key = v.k AND n.state = 'RUNNING' AND n.log_ids[cardinality(n.log_ids)] = v.p
  )sql",
                 DumpLossy(rows));
}

StartedRun StartRun(pqxx::transaction_base& tx, const RunStart& start, std::string_view node_id,
                    std::int64_t now_ms) {
  // FOR SHARE: the graph checked below is the one the run copies (a save waits for this transaction).
  const auto w = tx.exec_params(R"sql(
    SELECT group_id, param, nodes::text AS nodes, edges::text AS edges FROM workflow WHERE id = $1 FOR SHARE
  )sql",
                                start.workflow_id);
  if (w.empty()) return {};
  if (start.firer != nullptr) {
    const auto g = GraphFromJson(json::parse(w[0]["nodes"].c_str()), json::parse(w[0]["edges"].c_str()));
    if (g.ok()) {
      std::vector<std::string> keys;
      for (const auto& n : g->nodes)
        keys.push_back(n.key);
      if (auto may = MayFireNodes(*start.firer, NodeJobsOf(tx, *g, keys)); !may) {
        return StartedRun{.refused = may.error()};
      }
    }
  }
  const auto param = start.param ? *start.param : w[0]["param"].as<std::string>();
  const auto graph =
      json{{"nodes", json::parse(w[0]["nodes"].c_str())}, {"edges", json::parse(w[0]["edges"].c_str())}};
  const auto run = tx.exec_params(R"sql(
    INSERT INTO workflow_run (workflow_id, group_id, trigger_type, scheduled_ms, param, graph, state, start_ms,
                              end_ms, note, created_by)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)
    ON CONFLICT (workflow_id, scheduled_ms) WHERE trigger_type IN ('CRON', 'MISFIRE') DO NOTHING
    RETURNING id
  )sql",
                                  start.workflow_id, w[0]["group_id"].as<int>(), start.trigger_type,
                                  start.scheduled_ms, param, DumpLossy(graph),
                                  start.skipped ? "SKIPPED" : "RUNNING", std::max(start.scheduled_ms, now_ms),
                                  start.skipped ? now_ms : 0, start.note, start.created_by);
  if (run.empty()) return {};
  StartedRun out{.run_id = run[0][0].as<std::int64_t>()};
  tx.exec_params(R"sql(
    INSERT INTO workflow_run_node (run_id, key, job_id, state, end_ms)
    SELECT $1, n->>'key', (n->>'job_id')::int, $2, $3 FROM jsonb_array_elements($4::jsonb) AS n
  )sql",
                 out.run_id, start.skipped ? "SKIPPED" : "WAITING", start.skipped ? now_ms : 0,
                 DumpLossy(graph["nodes"]));
  if (start.skipped) return out;
  auto runs = Lock(tx, {out.run_id});
  MoveOn(tx, runs.at(out.run_id), node_id, start.scheduled_ms, now_ms, out.fires);
  Save(tx, runs);
  return out;
}

Result<std::vector<KilledFire>> KillRun(pqxx::transaction_base& tx, std::int64_t run_id, const NodeFirer& who,
                                        std::int64_t now_ms) {
  const auto ended = [&](std::string_view state) {
    return Error::Conflict(fmt::format("workflow run {} has ended ({}): nothing to kill", run_id, state));
  };
  const auto state = tx.exec_params(R"sql(SELECT state FROM workflow_run WHERE id = $1)sql", run_id);
  if (state.empty()) return Error::NotFound(fmt::format("workflow run {} not found", run_id));
  if (state[0][0].as<std::string>() != "RUNNING") return ended(state[0][0].as<std::string>());
  // The fires still open (a broadcast node's shards share its run) are recorded killed first, before the
  // run's row is locked: the order a callback takes the same rows in, so the two never wait on each other in
  // a cycle. The accepted ones are returned for their executors to kill.
  std::vector<KilledFire> out;
  const auto open = tx.exec_params(R"sql(
    SELECT o.log_id, o.job_id, o.group_id, o.executor_address, o.trigger_ms, l.workflow_node
      FROM fire_open o JOIN job_log l ON l.id = o.log_id AND l.scheduled_ms = o.scheduled_ms
     WHERE l.workflow_run_id = $1 ORDER BY o.log_id
  )sql",
                                   run_id);
  // Killing a fire is operating its job: the caller may for each, or nothing is killed.
  std::vector<NodeJob> jobs;
  for (const auto& r : open) {
    jobs.push_back({.key = r["workflow_node"].as<std::string>(),
                    .job_id = r["job_id"].as<int>(),
                    .group_id = r["group_id"].as<int>()});
  }
  if (auto may = MayFireNodes(who, jobs, "killing"); !may) return may.error();
  for (const auto& r : open) {
    const auto id = r["log_id"].as<std::int64_t>();
    fire_log::MarkKilled(tx, id, now_ms,
                         fmt::format("the workflow run {} was killed by {}", run_id, who.username));
    if (r["trigger_ms"].as<std::int64_t>() > 0) {
      out.push_back({.log_id = id,
                     .job_id = r["job_id"].as<int>(),
                     .group_id = r["group_id"].as<int>(),
                     .executor_address = r["executor_address"].as<std::string>()});
    }
  }
  auto runs = Lock(tx, {run_id});
  if (runs.empty()) return Error::NotFound(fmt::format("workflow run {} not found", run_id));
  auto& run = runs.at(run_id);
  if (run.state != RunState::kRunning) return ended(ToString(run.state));
  for (auto& [k, n] : run.nodes) {
    if (n.state == NodeState::kWaiting) {
      n.state = NodeState::kSkipped;
    } else if (n.state == NodeState::kRunning) {
      n.state = NodeState::kKilled;
    } else {
      continue;
    }
    n.end_ms = now_ms;
    n.dirty = true;
  }
  run.state = RunState::kKilled;
  run.end_ms = now_ms;
  run.note += fmt::format("{}killed by {}", run.note.empty() ? "" : "\n", who.username);
  run.dirty = true;
  Save(tx, runs);
  return out;
}

Result<std::vector<Fire>> RerunNode(pqxx::transaction_base& tx, std::int64_t run_id, std::string_view key,
                                    const NodeFirer& who, std::string_view node_id, std::int64_t now_ms) {
  auto runs = Lock(tx, {run_id});
  if (runs.empty()) return Error::NotFound(fmt::format("workflow run {} not found", run_id));
  auto& run = runs.at(run_id);
  const auto node = run.nodes.find(std::string(key));
  if (node == run.nodes.end()) {
    return Error::NotFound(
        fmt::format("workflow run {} has no node '{}'", run_id, std::string(key).substr(0, 64)));
  }
  if (run.state == RunState::kRunning) {
    return Error::Conflict(fmt::format(
        "workflow run {} is still running: re-run a node once it has ended, or kill it first", run_id));
  }
  if (node->second.state != NodeState::kFailed && node->second.state != NodeState::kKilled) {
    return Error::Conflict(
        fmt::format("node '{}' of workflow run {} is {}: only a FAILED or KILLED node is re-run",
                    std::string(key).substr(0, 64), run_id, ToString(node->second.state)));
  }
  const auto again = WithDescendants(run.graph, key);
  if (auto may = MayFireNodes(who, NodeJobsOf(tx, run.graph, again)); !may) return may.error();
  for (const auto& k : again) {
    auto& n = run.nodes.at(k);
    n.state = NodeState::kWaiting;
    n.start_ms = n.end_ms = 0;
    n.dirty = true;
  }
  run.state = RunState::kRunning;
  run.end_ms = 0;
  run.note += fmt::format("{}node {} re-run by {}", run.note.empty() ? "" : "\n",
                          std::string(key).substr(0, 64), who.username);
  run.dirty = true;
  std::vector<Fire> started;
  MoveOn(tx, run, node_id, now_ms, now_ms, started);
  Save(tx, runs);
  return started;
}

}  // namespace cronwheel::admin::workflow_table
