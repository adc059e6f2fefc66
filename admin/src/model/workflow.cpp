#include "admin/model/workflow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <set>
#include <utility>

namespace cronwheel::admin {

using nlohmann::json;

namespace {

template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<EdgeCondition, 3> kConditions{{{EdgeCondition::kSuccess, "SUCCESS"},
                                               {EdgeCondition::kFailure, "FAILURE"},
                                               {EdgeCondition::kAlways, "ALWAYS"}}};
constexpr Names<NodeState, 6> kNodeStates{{{NodeState::kWaiting, "WAITING"},
                                           {NodeState::kRunning, "RUNNING"},
                                           {NodeState::kSuccess, "SUCCESS"},
                                           {NodeState::kFailed, "FAILED"},
                                           {NodeState::kSkipped, "SKIPPED"},
                                           {NodeState::kKilled, "KILLED"}}};
constexpr Names<RunState, 5> kRunStates{{{RunState::kRunning, "RUNNING"},
                                         {RunState::kSuccess, "SUCCESS"},
                                         {RunState::kFailed, "FAILED"},
                                         {RunState::kKilled, "KILLED"},
                                         {RunState::kSkipped, "SKIPPED"}}};

template <class E, std::size_t N>
std::string_view NameOf(const Names<E, N>& names, E v) {
  for (const auto& [e, n] : names)
    if (e == v) return n;
  return "";
}
template <class E, std::size_t N>
std::optional<E> Find(const Names<E, N>& names, std::string_view s) {
  for (const auto& [e, n] : names)
    if (n == s) return e;
  return std::nullopt;
}

bool ValidKey(std::string_view key) {
  // "." and ".." are refused: a key is a path segment (/workflow-runs/{id}/nodes/{key}/rerun).
  if (key.empty() || key.size() > 64 || key == "." || key == "..") return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

bool Failed(NodeState s) {
  return s == NodeState::kFailed || s == NodeState::kKilled;
}

// Whether an edge's condition holds for a parent that has ended in `s`.
bool Holds(EdgeCondition c, NodeState s) {
  switch (c) {
    case EdgeCondition::kSuccess:
      return s == NodeState::kSuccess;
    case EdgeCondition::kFailure:
      return Failed(s);
    case EdgeCondition::kAlways:
      return true;
  }
  return false;
}

// The graph's indexes: node position by key, incoming and outgoing edges by node position.
struct Index {
  std::map<std::string, std::size_t, std::less<>> pos;
  std::vector<std::vector<const WorkflowEdge*>> in, out;
  explicit Index(const WorkflowGraph& g) : in(g.nodes.size()), out(g.nodes.size()) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      pos.emplace(g.nodes[i].key, i);
    for (const auto& e : g.edges) {
      const auto f = pos.find(e.from);
      const auto t = pos.find(e.to);
      if (f == pos.end() || t == pos.end()) continue;
      out[f->second].push_back(&e);
      in[t->second].push_back(&e);
    }
  }
};

}  // namespace

std::string_view ToString(EdgeCondition c) {
  return NameOf(kConditions, c);
}
std::optional<EdgeCondition> ParseEdgeCondition(std::string_view s) {
  return Find(kConditions, s);
}
std::string_view ToString(NodeState s) {
  return NameOf(kNodeStates, s);
}
std::optional<NodeState> ParseNodeState(std::string_view s) {
  return Find(kNodeStates, s);
}
bool IsEnded(NodeState s) {
  return s != NodeState::kWaiting && s != NodeState::kRunning;
}
std::string_view ToString(RunState s) {
  return NameOf(kRunStates, s);
}
std::optional<RunState> ParseRunState(std::string_view s) {
  return Find(kRunStates, s);
}

Result<void> CheckGraph(const WorkflowGraph& graph) {
  FieldErrors errors;
  if (graph.nodes.empty() || graph.nodes.size() > kMaxWorkflowNodes) {
    errors.push_back(
        {"nodes",
         fmt::format("nodes has {} node(s); a workflow has 1 to {}", graph.nodes.size(), kMaxWorkflowNodes),
         "length",
         {{"min", 1}, {"max", kMaxWorkflowNodes}, {"actual", graph.nodes.size()}}});
  }
  if (graph.edges.size() > kMaxWorkflowEdges) {
    errors.push_back({"edges",
                      fmt::format("edges has {} edges; at most {}", graph.edges.size(), kMaxWorkflowEdges),
                      "length",
                      {{"max", kMaxWorkflowEdges}, {"actual", graph.edges.size()}}});
  }
  std::set<std::string, std::less<>> keys;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& n = graph.nodes[i];
    const auto field = fmt::format("nodes[{}]", i);
    if (!ValidKey(n.key)) {
      errors.push_back(
          {field + ".key",
           fmt::format(
               "{}.key \"{}\" is not valid: 1 to 64 of the characters A-Z a-z 0-9 _ . - (not . or ..)", field,
               n.key),
           "format"});
    } else if (!keys.insert(n.key).second) {
      errors.push_back(
          {field + ".key", fmt::format("{}.key \"{}\" is used by another node", field, n.key), "exists"});
    }
    if (n.job_id <= 0) {
      errors.push_back({field + ".job_id",
                        fmt::format("{}.job_id {} is not a job id", field, n.job_id),
                        "range",
                        {{"min", 1}, {"actual", n.job_id}}});
    }
  }
  std::set<std::pair<std::string, std::string>> pairs;
  for (std::size_t i = 0; i < graph.edges.size(); ++i) {
    const auto& e = graph.edges[i];
    const auto field = fmt::format("edges[{}]", i);
    bool known = true;
    for (const auto& [end, key] : {std::pair{"from", &e.from}, std::pair{"to", &e.to}}) {
      if (!keys.contains(*key)) {
        known = false;
        errors.push_back({fmt::format("{}.{}", field, end),
                          fmt::format("{}.{} \"{}\" is not the key of a node", field, end, *key),
                          "not_found",
                          {{"value", *key}}});
      }
    }
    if (!known) continue;
    if (e.from == e.to) {
      errors.push_back(
          {field + ".to", fmt::format("{} goes from node \"{}\" to itself", field, e.from), "cycle"});
    } else if (!pairs.emplace(e.from, e.to).second) {
      errors.push_back(
          {field, fmt::format(R"({}: the edge "{}" -> "{}" is given twice)", field, e.from, e.to), "exists"});
    }
  }
  if (!errors.empty()) {
    auto message = errors.front().message;
    return Error::Invalid(std::move(message), std::move(errors));
  }
  // A cycle: depth-first search, colouring each node (0 unvisited, 1 on the path, 2 done).
  const Index index(graph);
  std::vector<int> colour(graph.nodes.size(), 0);
  std::vector<std::size_t> path;
  std::function<std::optional<std::string>(std::size_t)> visit =
      [&](std::size_t v) -> std::optional<std::string> {
    colour[v] = 1;
    path.push_back(v);
    for (const auto* e : index.out[v]) {
      const auto w = index.pos.find(e->to)->second;
      if (colour[w] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), w); it != path.end(); ++it)
          cycle += graph.nodes[*it].key + " -> ";
        return cycle + graph.nodes[w].key;
      }
      if (colour[w] == 0) {
        if (auto found = visit(w)) return found;
      }
    }
    colour[v] = 2;
    path.pop_back();
    return std::nullopt;
  };
  for (std::size_t v = 0; v < graph.nodes.size(); ++v) {
    if (colour[v] != 0) continue;
    if (auto cycle = visit(v)) {
      const auto message = fmt::format("edges form a cycle: {}; a workflow is acyclic", *cycle);
      return Error::Invalid(message, {{"edges", message, "cycle", {{"cycle", *cycle}}}});
    }
  }
  return Result<void>::Ok();
}

json ToJson(const WorkflowGraph& graph) {
  json nodes = json::array();
  for (const auto& n : graph.nodes) {
    json node = {{"key", n.key}, {"job_id", n.job_id}};
    node["param"] = n.param ? json(*n.param) : json(nullptr);
    nodes.push_back(std::move(node));
  }
  json edges = json::array();
  for (const auto& e : graph.edges)
    edges.push_back({{"from", e.from}, {"to", e.to}, {"condition", ToString(e.condition)}});
  return {{"nodes", std::move(nodes)}, {"edges", std::move(edges)}};
}

Result<WorkflowGraph> GraphFromJson(const json& nodes, const json& edges) {
  FieldErrors errors;
  const auto type_error = [&](const std::string& field, std::string_view want) {
    errors.push_back({field, fmt::format("{} must be {}", field, want), "type", {{"expected", want}}});
  };
  WorkflowGraph g;
  if (!nodes.is_array()) {
    type_error("nodes", R"(an array of {"key", "job_id"})");
  } else {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& n = nodes[i];
      const auto field = fmt::format("nodes[{}]", i);
      if (!n.is_object()) {
        type_error(field, "an object");
        continue;
      }
      for (const auto& [name, value] : n.items()) {
        if (name != "key" && name != "job_id" && name != "param") {
          errors.push_back({fmt::format("{}.{}", field, name),
                            fmt::format("{}.{} is not a field of a node (key, job_id, param)", field, name),
                            "unknown_field"});
        }
      }
      WorkflowNode node;
      if (const auto k = n.find("key"); k != n.end() && k->is_string()) {
        node.key = k->get<std::string>();
      } else {
        type_error(field + ".key", "a string");
      }
      if (const auto j = n.find("job_id"); j != n.end() && j->is_number_integer() &&
                                           j->get<std::int64_t>() > 0 &&
                                           j->get<std::int64_t>() <= INT32_MAX) {
        node.job_id = j->get<int>();
      } else {
        type_error(field + ".job_id", "a job id (a positive integer)");
      }
      if (const auto p = n.find("param"); p != n.end() && !p->is_null()) {
        if (p->is_string()) {
          node.param = p->get<std::string>();
        } else {
          type_error(field + ".param", "a string or null");
        }
      }
      g.nodes.push_back(std::move(node));
    }
  }
  if (!edges.is_null() && !edges.is_array()) {
    type_error("edges", R"(an array of {"from", "to", "condition"})");
  } else if (edges.is_array()) {
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const auto& e = edges[i];
      const auto field = fmt::format("edges[{}]", i);
      if (!e.is_object()) {
        type_error(field, "an object");
        continue;
      }
      WorkflowEdge edge;
      for (const auto& [name, value] : e.items()) {
        if (name == "from" || name == "to") {
          if (value.is_string()) {
            (name == "from" ? edge.from : edge.to) = value.get<std::string>();
          } else {
            type_error(fmt::format("{}.{}", field, name), "a node key (a string)");
          }
        } else if (name == "condition") {
          const auto c = value.is_string() ? ParseEdgeCondition(value.get<std::string>()) : std::nullopt;
          if (c) {
            edge.condition = *c;
          } else {
            errors.push_back(
                {field + ".condition",
                 fmt::format("{}.condition {} is not one of SUCCESS, FAILURE, ALWAYS", field, value.dump()),
                 "enum",
                 {{"allowed", {"SUCCESS", "FAILURE", "ALWAYS"}}}});
          }
        } else {
          errors.push_back({fmt::format("{}.{}", field, name),
                            fmt::format("{}.{} is not a field of an edge (from, to, condition)", field, name),
                            "unknown_field"});
        }
      }
      g.edges.push_back(std::move(edge));
    }
  }
  if (!errors.empty()) {
    auto message = errors.front().message;
    return Error::Invalid(std::move(message), std::move(errors));
  }
  return g;
}

json ToJson(const Workflow& w) {
  auto out = ToJson(w.graph);
  out.update({{"id", w.id},
              {"group_id", w.group_id},
              {"name", w.name},
              {"param", w.param},
              {"schedule_type", w.schedule_type},
              {"schedule_conf", w.schedule_conf},
              {"time_zone", w.time_zone},
              {"misfire_strategy", w.misfire_strategy},
              {"enabled", w.enabled},
              {"next_fire_ms", w.enabled ? json(w.next_fire_ms) : json(nullptr)},
              {"last_fire_ms", w.last_fire_ms},
              {"stop_reason", w.stop_reason},
              {"run_as", w.run_as.empty() ? json(nullptr) : json(w.run_as)},
              {"created_ms", w.created_ms},
              {"updated_ms", w.updated_ms}});
  return out;
}

json ToJson(const WorkflowRun& run) {
  json nodes = json::array();
  for (const auto& n : run.nodes) {
    nodes.push_back({{"key", n.key},
                     {"job_id", n.job_id},
                     {"state", ToString(n.state)},
                     {"log_ids", n.log_ids},
                     {"start_ms", n.start_ms},
                     {"end_ms", n.end_ms}});
  }
  auto graph = ToJson(run.graph);
  return {{"id", run.id},
          {"workflow_id", run.workflow_id},
          {"group_id", run.group_id},
          {"trigger_type", run.trigger_type},
          {"scheduled_ms", run.scheduled_ms},
          {"param", run.param},
          {"state", ToString(run.state)},
          {"start_ms", run.start_ms},
          {"end_ms", run.end_ms},
          {"note", run.note},
          {"created_by", run.created_by},
          {"nodes", std::move(nodes)},
          {"edges", std::move(graph["edges"])}};
}

Progression Advance(const WorkflowGraph& graph, const std::map<std::string, NodeState>& states) {
  const Index index(graph);
  std::vector<NodeState> s(graph.nodes.size(), NodeState::kWaiting);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (const auto it = states.find(graph.nodes[i].key); it != states.end()) s[i] = it->second;
  }
  Progression out;
  std::vector<bool> started(graph.nodes.size(), false);
  // Skips cascade: repeat until no WAITING node changes. Each pass is O(nodes + edges); a pass that changes
  // nothing ends it, and each pass but the last skips at least one node.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t v = 0; v < graph.nodes.size(); ++v) {
      if (s[v] != NodeState::kWaiting || started[v]) continue;
      bool all_ended = true;
      bool doomed = false;
      for (const auto* e : index.in[v]) {
        const auto p = s[index.pos.find(e->from)->second];
        if (!IsEnded(p)) {
          all_ended = false;
        } else if (!Holds(e->condition, p)) {
          doomed = true;
        }
      }
      if (doomed) {
        s[v] = NodeState::kSkipped;
        changed = true;
      } else if (all_ended) {
        started[v] = true;
      }
    }
  }
  bool all_ended = true;
  bool failed = false;
  for (std::size_t v = 0; v < graph.nodes.size(); ++v) {
    if (started[v]) {
      out.start.push_back(graph.nodes[v].key);
      all_ended = false;
      continue;
    }
    const auto before = states.find(graph.nodes[v].key);
    const bool was_waiting = before == states.end() || before->second == NodeState::kWaiting;
    if (s[v] == NodeState::kSkipped && was_waiting) out.skip.push_back(graph.nodes[v].key);
    if (!IsEnded(s[v])) all_ended = false;
    if (Failed(s[v])) {
      const bool handled = std::any_of(index.out[v].begin(), index.out[v].end(), [](const WorkflowEdge* e) {
        return e->condition != EdgeCondition::kSuccess;
      });
      if (!handled) failed = true;
    }
  }
  if (all_ended) out.ended = failed ? RunState::kFailed : RunState::kSuccess;
  return out;
}

std::vector<std::string> WithDescendants(const WorkflowGraph& graph, std::string_view key) {
  const Index index(graph);
  const auto start = index.pos.find(key);
  if (start == index.pos.end()) return {};
  std::vector<bool> seen(graph.nodes.size(), false);
  std::vector<std::size_t> stack{start->second};
  seen[start->second] = true;
  while (!stack.empty()) {
    const auto v = stack.back();
    stack.pop_back();
    for (const auto* e : index.out[v]) {
      const auto w = index.pos.find(e->to)->second;
      if (!seen[w]) {
        seen[w] = true;
        stack.push_back(w);
      }
    }
  }
  std::vector<std::string> out;
  for (std::size_t v = 0; v < graph.nodes.size(); ++v)
    if (seen[v]) out.push_back(graph.nodes[v].key);
  return out;
}

}  // namespace cronwheel::admin
