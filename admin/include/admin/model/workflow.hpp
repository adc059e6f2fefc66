#pragma once
// Workflows (docs/operations.md, "Workflows"): a directed acyclic graph of nodes, each node a job, edges
// parent -> child with a condition. This header holds the graph's checks and the readiness rules as pure
// functions of a run's node states, so the store (store/workflow_table.hpp) applies them inside the
// transaction that records a node's end and unit tests run them on plain values.
//
// Readiness (the rules of PowerJob's edge conditions and Airflow's trigger rules, docs/operations.md):
//  * A node with no parent starts when its run starts.
//  * An edge's condition holds when its parent ended so: SUCCESS (the default) when the parent succeeded,
//    FAILURE when it failed or was killed, ALWAYS when it ended in any way (skipped included).
//  * A WAITING node starts when every parent has ended and every incoming edge's condition holds.
//  * A WAITING node one of whose incoming edges can no longer hold (its parent ended otherwise) is SKIPPED
//    at once, without waiting for its other parents. Skips cascade along SUCCESS and FAILURE edges; an
//    ALWAYS edge from a skipped node still holds, so a node reached that way runs.
//  * A run ends when every node has ended: FAILED when a node failed (or was killed) and no FAILURE or
//    ALWAYS edge leaves it (nothing handles the failure), else SUCCESS.
//
// Plain values and functions; no thread-safety concerns. Complexity: O(nodes + edges) per call.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/result.hpp"

namespace cronwheel::admin {

enum class EdgeCondition { kSuccess, kFailure, kAlways };
std::string_view ToString(EdgeCondition c);
std::optional<EdgeCondition> ParseEdgeCondition(std::string_view s);

// A node's state in a run. WAITING: not started; RUNNING: its fire (or a retry of it) is pending or
// running; the others are ends.
enum class NodeState { kWaiting, kRunning, kSuccess, kFailed, kSkipped, kKilled };
std::string_view ToString(NodeState s);
std::optional<NodeState> ParseNodeState(std::string_view s);
bool IsEnded(NodeState s);

// A run's state. SKIPPED: a scheduled instant the DO_NOTHING misfire rule skipped (no node ran).
enum class RunState { kRunning, kSuccess, kFailed, kKilled, kSkipped };
std::string_view ToString(RunState s);
std::optional<RunState> ParseRunState(std::string_view s);

struct WorkflowNode {
  std::string key;                   // unique in its workflow: 1-64 of [A-Za-z0-9_.-]
  int job_id = 0;                    // the job it fires
  std::optional<std::string> param;  // replaces the job's parameter; nullopt = the job's own
};
struct WorkflowEdge {
  std::string from;  // parent node key
  std::string to;    // child node key
  EdgeCondition condition = EdgeCondition::kSuccess;
};
struct WorkflowGraph {
  std::vector<WorkflowNode> nodes;
  std::vector<WorkflowEdge> edges;
};

inline constexpr std::size_t kMaxWorkflowNodes = 1000;
inline constexpr std::size_t kMaxWorkflowEdges = 5000;

// The graph's own checks: 1..kMaxWorkflowNodes nodes with valid unique keys and positive job ids; at most
// kMaxWorkflowEdges edges between known keys, none from a node to itself, no pair twice; no cycle (the
// error names one, e.g. "a -> b -> a"). Errors name the field (nodes[3].key, edges[1].to, edges) and the
// value. Whether each job exists and the caller may use it is the store's and the API's check.
Result<void> CheckGraph(const WorkflowGraph& graph);

// The graph as JSON ({"nodes": [{"key", "job_id", "param"?}], "edges": [{"from", "to", "condition"}]}) and
// back. FromJson reports a wrong shape or type with the field's path.
nlohmann::json ToJson(const WorkflowGraph& graph);
Result<WorkflowGraph> GraphFromJson(const nlohmann::json& nodes, const nlohmann::json& edges);

// What a run must do next, given each node's state (a key missing from `states` counts as WAITING).
struct Progression {
  std::vector<std::string> start;  // WAITING nodes whose parents all ended with their conditions holding
  std::vector<std::string> skip;   // WAITING nodes whose condition can no longer hold (cascaded)
  std::optional<RunState> ended;   // set when, after these, every node has ended: SUCCESS or FAILED
};
// Keys are returned in the graph's node order. The graph must have passed CheckGraph.
Progression Advance(const WorkflowGraph& graph, const std::map<std::string, NodeState>& states);

// A saved workflow (table workflow). The schedule fields mean what a job's do (admin/model/model.hpp), except
// that FIX_DELAY is not offered: a workflow's runs may overlap, as a FIX_RATE job's fires may.
struct Workflow {
  int id = 0;
  int group_id = 0;  // the job group that owns it: who may see, change and trigger it
  std::string name;
  WorkflowGraph graph;
  std::string param;                   // {{workflow.param}} of a run that is given none
  std::string schedule_type = "NONE";  // CRON, FIX_RATE or NONE (triggered by hand or API only)
  std::string schedule_conf;
  std::string time_zone = "UTC";
  std::string misfire_strategy = "DO_NOTHING";
  bool enabled = false;
  std::int64_t next_fire_ms = 0;
  std::int64_t last_fire_ms = 0;
  std::string stop_reason;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
  // Whom its scheduled runs fire its nodes for (admin/model/workflow_access.hpp): the user who saved it
  // last, set by the store from the saver; 0 / "" when no one (that user was deleted).
  int run_as_user_id = 0;
  std::string run_as;  // that user's name, as shown
};

nlohmann::json ToJson(const Workflow& w);

struct WorkflowRunNode {
  std::string key;
  int job_id = 0;
  NodeState state = NodeState::kWaiting;
  std::vector<std::int64_t> log_ids;  // its fires in order: the first, retries, the fires of re-runs
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
};
struct WorkflowRun {
  std::int64_t id = 0;
  int workflow_id = 0;
  int group_id = 0;
  std::string trigger_type;  // CRON, MISFIRE, MANUAL, API
  std::int64_t scheduled_ms = 0;
  std::string param;
  WorkflowGraph graph;  // as it was when the run started
  RunState state = RunState::kRunning;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // 0 while it runs
  std::string note;
  std::string created_by;
  std::vector<WorkflowRunNode> nodes;  // in the graph's node order
};
nlohmann::json ToJson(const WorkflowRun& run);

// A fire an executor had accepted, of a run that was killed: the caller asks the executor at
// `executor_address` to kill that fire only (api/workflows.cpp: cronwheel's /killFires with its log id; an
// XXL-JOB executor's /kill with `jobId` only when the executor runs no other open fire of the job).
struct KilledFire {
  std::int64_t log_id = 0;
  int job_id = 0;
  int group_id = 0;
  std::string executor_address;
};

// `key` and every node reachable from it, in the graph's node order (what re-running `key` resets).
std::vector<std::string> WithDescendants(const WorkflowGraph& graph, std::string_view key);

}  // namespace cronwheel::admin
