// The workflows of the job document (transfer.hpp): written by MakeDocument, read by ReadDocument, planned
// and sent by import. Nodes name their jobs by description, so a workflow moves with the jobs it runs.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cronwheel/json.hpp"
#include "transfer_internal.hpp"

namespace cronwheel::cli {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view kNodes = "nodes";
constexpr std::string_view kEdges = "edges";

// The fields of a workflow that are checked like a job's (by FindWorkflowField's type).
bool IsGraphField(std::string_view name) {
  return name == kNodes || name == kEdges;
}

void ReadNodes(const json& nodes, const std::string& path, const std::set<std::string>& descriptions,
               PortableWorkflow& out, Problems& problems) {
  if (!nodes.is_array()) {
    problems.push_back({path, fmt::format("expected a list of nodes, got {}", Shown(nodes))});
    return;
  }
  std::set<std::string> keys;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const auto& n = nodes[k];
    const auto at = fmt::format("{}[{}]", path, k);
    if (!n.is_object()) {
      problems.push_back(
          {at, fmt::format(R"(expected an object {{"key", "job", "param"}}, got {})", Shown(n))});
      continue;
    }
    PortableWorkflow::Node node;
    for (const auto& [name, value] : n.items()) {
      if (name == "key" || name == "job") {
        if (!value.is_string()) {
          problems.push_back(
              {fmt::format("{}.{}", at, name), fmt::format("expected a string, got {}", Shown(value))});
        } else {
          (name == "key" ? node.key : node.job) = value.get<std::string>();
        }
      } else if (name == "param") {
        if (value.is_string()) {
          node.param = value.get<std::string>();
        } else if (!value.is_null()) {
          problems.push_back({at + ".param", fmt::format("expected a string or null, got {}", Shown(value))});
        }
      } else {
        problems.push_back({fmt::format("{}.{}", at, name),
                            "unknown field; a node has: key, job (a job's description), param"});
      }
    }
    for (const std::string_view required : {"key", "job"}) {
      if (!n.contains(required)) problems.push_back({fmt::format("{}.{}", at, required), "missing"});
    }
    if (!node.key.empty() && !keys.insert(node.key).second) {
      problems.push_back({at + ".key", fmt::format("{} is the key of another node of this workflow",
                                                   detail::Quoted(node.key))});
    }
    if (n.contains("job") && n.at("job").is_string() && !descriptions.contains(node.job)) {
      problems.push_back({at + ".job", fmt::format("{} is not the description of a job in this document",
                                                   detail::Quoted(node.job))});
    }
    out.nodes.push_back(std::move(node));
  }
}

void ReadEdges(const json& edges, const std::string& path, PortableWorkflow& out, Problems& problems) {
  if (!edges.is_array()) {
    problems.push_back({path, fmt::format("expected a list of edges, got {}", Shown(edges))});
    return;
  }
  std::set<std::string> keys;
  for (const auto& n : out.nodes)
    keys.insert(n.key);
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const auto& e = edges[k];
    const auto at = fmt::format("{}[{}]", path, k);
    if (!e.is_object()) {
      problems.push_back(
          {at, fmt::format(R"(expected an object {{"from", "to", "condition"}}, got {})", Shown(e))});
      continue;
    }
    for (const auto& [name, value] : e.items()) {
      if (name == "from" || name == "to") {
        if (!value.is_string()) {
          problems.push_back(
              {fmt::format("{}.{}", at, name), fmt::format("expected a node's key, got {}", Shown(value))});
        } else if (!keys.contains(value.get<std::string>())) {
          problems.push_back(
              {fmt::format("{}.{}", at, name), fmt::format("{} is not the key of a node of this workflow",
                                                           detail::Quoted(value.get<std::string>()))});
        }
      } else if (name == "condition") {
        if (!value.is_string()) {
          problems.push_back(
              {at + ".condition", fmt::format("expected SUCCESS, FAILURE or ALWAYS, got {}", Shown(value))});
        }
      } else {
        problems.push_back(
            {fmt::format("{}.{}", at, name), "unknown field; an edge has: from, to, condition"});
      }
    }
    for (const std::string_view required : {"from", "to"}) {
      if (!e.contains(required)) problems.push_back({fmt::format("{}.{}", at, required), "missing"});
    }
  }
  out.edges = edges;
}

}  // namespace

const std::vector<std::string_view>& PortableWorkflowFields() {
  static const std::vector<std::string_view> kFields = {"name",          "param",     "schedule_type",
                                                        "schedule_conf", "time_zone", "misfire_strategy",
                                                        "enabled",       kNodes,      kEdges};
  return kFields;
}

namespace detail {

std::optional<std::vector<PortableWorkflow>> ReadWorkflows(const json& list,
                                                           const std::vector<PortableJob>& jobs,
                                                           Problems& problems) {
  if (!list.is_array()) {
    problems.push_back({"workflows", fmt::format("expected a list of workflows, got {}", Shown(list))});
    return std::nullopt;
  }
  std::set<std::string> descriptions;
  for (const auto& j : jobs)
    descriptions.insert(j.description());
  std::string allowed;
  for (const auto f : PortableWorkflowFields())
    allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", f);
  const auto before = problems.size();
  std::vector<PortableWorkflow> out;
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& w = list[i];
    const auto path = [i](std::string_view f) { return fmt::format("workflows[{}].{}", i, f); };
    if (!w.is_object()) {
      problems.push_back(
          {fmt::format("workflows[{}]", i), fmt::format("expected an object, got {}", Shown(w))});
      continue;
    }
    PortableWorkflow workflow;
    for (const auto& [name, value] : w.items()) {
      const auto& portable = PortableWorkflowFields();
      if (std::find(portable.begin(), portable.end(), name) == portable.end()) {
        problems.push_back({path(name), fmt::format("unknown field; a version {} workflow has: {}",
                                                    kDocumentVersion, allowed)});
      } else if (!IsGraphField(name) &&
                 CheckFieldType(*FindWorkflowField(name), value, path(name), problems)) {
        workflow.fields[name] = value;
      }
    }
    for (const std::string_view required : {"name", "nodes"}) {
      if (!w.contains(required))
        problems.push_back({path(required), "missing: every workflow needs it to be created"});
    }
    if (const auto n = w.find(kNodes); n != w.end())
      ReadNodes(*n, path(kNodes), descriptions, workflow, problems);
    if (const auto e = w.find(kEdges); e != w.end()) ReadEdges(*e, path(kEdges), workflow, problems);
    if (const auto name = w.find("name"); name != w.end() && name->is_string()) {
      if (const auto [it, fresh] = first.emplace(name->get<std::string>(), i); !fresh) {
        problems.push_back(
            {path("name"), fmt::format("{} is also the name of the workflow at index {}; workflows are "
                                       "matched by name, so each must be unique",
                                       Quoted(it->first), it->second)});
      }
    }
    out.push_back(std::move(workflow));
  }
  if (problems.size() != before) return std::nullopt;
  return out;
}

std::optional<ordered_json> WorkflowItems(const std::map<std::int64_t, std::string>& description_of,
                                          const std::vector<json>& workflows, const json& group,
                                          std::vector<std::string>& warnings, Problems& problems) {
  const auto before = problems.size();
  std::map<std::string, std::int64_t> id_of;
  for (const auto& w : workflows) {
    const auto id = w.at("id").get<std::int64_t>();
    const auto name = w.at("name").get<std::string>();
    if (const auto [it, fresh] = id_of.emplace(name, id); !fresh) {
      problems.push_back({fmt::format("workflow {}", id),
                          fmt::format("has the name {} of workflow {} too; import matches workflows by name, "
                                      "so rename one before exporting",
                                      Quoted(name), it->second)});
    }
  }
  if (problems.size() != before) return std::nullopt;
  std::vector<const json*> sorted;
  sorted.reserve(workflows.size());
  for (const auto& w : workflows)
    sorted.push_back(&w);
  std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
    return a->at("name").get<std::string>() < b->at("name").get<std::string>();
  });
  ordered_json items = ordered_json::array();
  for (const json* w : sorted) {
    ordered_json item = ordered_json::object();
    bool portable = true;
    for (const auto f : PortableWorkflowFields()) {
      const std::string name(f);
      if (f == kNodes) {
        ordered_json nodes = ordered_json::array();
        for (const auto& n : w->value("nodes", json::array())) {
          const auto job_id = n.at("job_id").get<std::int64_t>();
          const auto it = description_of.find(job_id);
          if (it == description_of.end()) {
            warnings.push_back(
                fmt::format("workflow {} ({}): node {} runs job {}, which is not in group {}, so the "
                            "workflow is left out "
                            "(nodes name their jobs by description within one group)",
                            w->at("id").get<std::int64_t>(), Quoted(w->at("name").get<std::string>()),
                            Quoted(n.value("key", std::string())), job_id, group.value("id", 0)));
            portable = false;
            break;
          }
          const auto param = n.value("param", json());
          nodes.push_back({{"key", n.at("key")},
                           {"job", it->second},
                           {"param", param.is_string() ? ordered_json(param.get<std::string>())
                                                       : ordered_json(nullptr)}});
        }
        item[name] = std::move(nodes);
      } else if (f == kEdges) {
        ordered_json edges = ordered_json::array();
        for (const auto& e : w->value("edges", json::array())) {
          ordered_json edge = ordered_json::object();  // from, to, condition: as they read
          for (const auto* k : {"from", "to", "condition"}) {
            if (e.contains(k)) edge[k] = ordered_json::parse(e.at(k).dump());
          }
          edges.push_back(std::move(edge));
        }
        item[name] = std::move(edges);
      } else if (const auto v = w->find(name); v != w->end()) {
        item[name] = ordered_json::parse(v->dump());
      }
    }
    if (portable) items.push_back(std::move(item));
  }
  return items;
}

}  // namespace detail

std::optional<std::vector<ImportStep>> PlanWorkflowImport(const JobDocument& doc,
                                                          const std::vector<json>& target_workflows,
                                                          OnConflict on_conflict, Problems& problems) {
  std::map<std::string, std::vector<int>> existing;
  for (const auto& w : target_workflows)
    existing[w.at("name").get<std::string>()].push_back(w.at("id").get<int>());
  std::vector<std::string> keys;
  for (const auto& w : doc.workflows)
    keys.push_back(w.name());
  return detail::PlanByKey(keys, existing, on_conflict, {"workflows", "workflow", "name"}, problems);
}

std::optional<json> WorkflowImportBody(const PortableWorkflow& workflow,
                                       const std::map<std::string, std::vector<int>>& job_ids,
                                       std::optional<int> group_id, bool stopped, Problems& problems) {
  const auto before = problems.size();
  json body = workflow.fields;
  json nodes = json::array();
  for (const auto& n : workflow.nodes) {
    const auto it = job_ids.find(n.job);
    if (it == job_ids.end() || it->second.size() != 1) {
      problems.push_back({fmt::format("node {}", detail::Quoted(n.key)),
                          fmt::format("its job {} is {} in the target group", detail::Quoted(n.job),
                                      it == job_ids.end() || it->second.empty() ? "missing" : "ambiguous")});
      continue;
    }
    nodes.push_back({{"key", n.key},
                     {"job_id", it->second.front()},
                     {"param", n.param ? json(*n.param) : json(nullptr)}});
  }
  if (problems.size() != before) return std::nullopt;
  body["nodes"] = std::move(nodes);
  body["edges"] = workflow.edges;
  if (group_id) {
    body["group_id"] = *group_id;
    if (stopped) body["enabled"] = false;
  } else if (stopped) {
    body.erase("enabled");
  }
  return body;
}

}  // namespace cronwheel::cli
