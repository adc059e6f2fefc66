// The reads of workflow runs (store/workflow_table.hpp): a run with its nodes, the groups of nodes' jobs,
// and the columns every file of workflow_table reads back.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "store/pg_util.hpp"
#include "store/workflow_table.hpp"

namespace cronwheel::admin::workflow_table {

using nlohmann::json;

WorkflowGraph GraphOfColumn(const pqxx::field& f) {
  const auto j = json::parse(f.c_str());
  auto g = GraphFromJson(j.at("nodes"), j.at("edges"));
  return g.ok() ? std::move(*g) : WorkflowGraph{};
}

std::vector<std::int64_t> IdsOfColumn(const pqxx::field& f) {
  std::vector<std::int64_t> out;
  for (const auto& v : json::parse(f.c_str()))
    out.push_back(v.get<std::int64_t>());
  return out;
}

std::map<int, int> JobGroupsOf(pqxx::transaction_base& tx, const std::vector<int>& job_ids) {
  std::map<int, int> out;
  for (const auto& r : tx.exec_params(R"sql(SELECT id, group_id FROM job WHERE id = ANY($1::int[]))sql",
                                      PgArray<int>(job_ids)))
    out[r["id"].as<int>()] = r["group_id"].as<int>();
  return out;
}

std::vector<NodeJob> NodeJobsIn(const WorkflowGraph& graph, const std::vector<std::string>& keys,
                                const std::map<int, int>& group_of) {
  std::vector<NodeJob> out;
  for (const auto& n : graph.nodes) {
    if (std::find(keys.begin(), keys.end(), n.key) == keys.end()) continue;
    const auto g = group_of.find(n.job_id);
    out.push_back({.key = n.key,
                   .job_id = n.job_id,
                   .group_id = g != group_of.end() ? std::optional(g->second) : std::nullopt});
  }
  return out;
}

std::vector<NodeJob> NodeJobsOf(pqxx::transaction_base& tx, const WorkflowGraph& graph,
                                const std::vector<std::string>& keys) {
  std::vector<int> ids;
  for (const auto& n : graph.nodes)
    ids.push_back(n.job_id);
  return NodeJobsIn(graph, keys, JobGroupsOf(tx, ids));
}

std::optional<WorkflowRun> GetRun(pqxx::transaction_base& tx, std::int64_t run_id) {
  const auto rows = tx.exec_params(R"sql(
    SELECT id, workflow_id, group_id, trigger_type, scheduled_ms, param, graph::text AS graph, state, start_ms,
           end_ms, note, created_by
      FROM workflow_run WHERE id = $1
  )sql",
                                   run_id);
  if (rows.empty()) return std::nullopt;
  const auto& r = rows[0];
  WorkflowRun run{.id = r["id"].as<std::int64_t>(),
                  .workflow_id = r["workflow_id"].as<int>(),
                  .group_id = r["group_id"].as<int>(),
                  .trigger_type = r["trigger_type"].as<std::string>(),
                  .scheduled_ms = r["scheduled_ms"].as<std::int64_t>(),
                  .param = r["param"].as<std::string>(),
                  .graph = GraphOfColumn(r["graph"]),
                  .state = ParseRunState(r["state"].c_str()).value_or(RunState::kFailed),
                  .start_ms = r["start_ms"].as<std::int64_t>(),
                  .end_ms = r["end_ms"].as<std::int64_t>(),
                  .note = r["note"].as<std::string>(),
                  .created_by = r["created_by"].as<std::string>()};
  std::map<std::string, WorkflowRunNode> nodes;
  for (const auto& n : tx.exec_params(R"sql(
         SELECT key, job_id, state, array_to_json(log_ids)::text AS log_ids, start_ms, end_ms
           FROM workflow_run_node WHERE run_id = $1
       )sql",
                                      run_id)) {
    nodes[n["key"].as<std::string>()] = {
        .key = n["key"].as<std::string>(),
        .job_id = n["job_id"].as<int>(),
        .state = ParseNodeState(n["state"].c_str()).value_or(NodeState::kFailed),
        .log_ids = IdsOfColumn(n["log_ids"]),
        .start_ms = n["start_ms"].as<std::int64_t>(),
        .end_ms = n["end_ms"].as<std::int64_t>()};
  }
  for (const auto& g : run.graph.nodes) {
    if (const auto it = nodes.find(g.key); it != nodes.end()) run.nodes.push_back(std::move(it->second));
  }
  return run;
}

}  // namespace cronwheel::admin::workflow_table
