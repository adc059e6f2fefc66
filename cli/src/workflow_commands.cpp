// `cronwheel workflows ...` (docs/cli.md, "Workflows"): /api/v1/workflows and /api/v1/workflow-runs.
// `workflows trigger --wait` polls the run once a second on the injected clock (never a sleep of its own).
#include <fmt/format.h>

#include <map>
#include <ostream>

#include "commands_internal.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cwcli/job_file.hpp"
#include "cwcli/table.hpp"
#include "cwcli/text_util.hpp"

namespace cronwheel::cli::detail {

using nlohmann::json;

namespace {

constexpr std::chrono::seconds kPollInterval{1};

std::string WorkflowPath(int id) {
  return fmt::format("/api/v1/workflows/{}", id);
}

std::string RunPath(std::int64_t id) {
  return fmt::format("/api/v1/workflow-runs/{}", id);
}

// An epoch-ms field as UTC ("-" for 0, null or missing).
std::string Utc(const json& j, const char* field) {
  const auto it = j.find(field);
  return FormatUtcMs(it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0);
}

std::string Enabled(const json& w) {
  return w.value("enabled", false) ? "yes" : "no";
}

// A run node's fires: "77", "77, 80" (a retry or a re-run fires again); "-" for none yet.
std::string Fires(const json& node) {
  std::string out;
  for (const auto& id : node.value("log_ids", json::array()))
    out += (out.empty() ? "" : ", ") + DumpLossy(id);
  return out.empty() ? "-" : out;
}

// The field rows of an object: `order` first (those it has), then any other field but `skip`; epoch-ms
// fields in UTC.
std::vector<std::pair<std::string, std::string>> FieldRows(const json& j, std::vector<std::string> order,
                                                           const std::vector<std::string>& skip) {
  for (const auto& [name, _] : j.items()) {
    if (std::find(order.begin(), order.end(), name) == order.end() &&
        std::find(skip.begin(), skip.end(), name) == skip.end()) {
      order.push_back(name);
    }
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& name : order) {
    if (!j.contains(name)) continue;
    rows.emplace_back(name, name.ends_with("_ms") ? Utc(j, name.c_str()) : Text(j, name.c_str()));
  }
  return rows;
}

void PrintEdges(Console& c, const json& edges) {
  if (edges.empty()) return;
  Table t({"FROM", "TO", "CONDITION"});
  for (const auto& e : edges)
    t.AddRow({Text(e, "from"), Text(e, "to"), Text(e, "condition")});
  c.out << '\n' << t.Render();
}

json WorkflowBodyFromFile(const Invocation& inv) {
  Problems problems;
  auto body = ReadWorkflowFile(inv.file, inv.format, problems);
  if (!body) {
    throw CommandError(kExitRefused,
                       fmt::format("{} is not a valid workflow:\n{}", inv.file, FormatProblems(problems)));
  }
  return *std::move(body);
}

void List(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "GET", "/api/v1/workflows");
  std::vector<json> items;
  for (const auto& w : r.at("items")) {
    if (!inv.group_id || w.value("group_id", 0) == *inv.group_id) items.push_back(w);
  }
  if (inv.json) return PrintJson(c, {{"total", items.size()}, {"items", items}});
  Table t({"ID", "GROUP", "NAME", "SCHEDULE", "NODES", "ENABLED", "NEXT FIRE (UTC)"});
  t.AlignRight(0).AlignRight(1).AlignRight(4).LimitWidth(2, 48).LimitWidth(3, 40);
  for (const auto& w : items) {
    t.AddRow({Text(w, "id"), Text(w, "group_id"), Text(w, "name"), Schedule(w),
              std::to_string(w.value("nodes", json::array()).size()), Enabled(w), Utc(w, "next_fire_ms")});
  }
  c.out << t.Render();
}

void Show(const Invocation& inv, Api& api, Console& c) {
  const auto w = Call(api, "GET", WorkflowPath(inv.workflow_id));
  if (inv.json) return PrintJson(c, w);
  c.out << RenderFields(FieldRows(
      w,
      {"id", "group_id", "name", "param", "schedule_type", "schedule_conf", "time_zone", "misfire_strategy",
       "enabled", "next_fire_ms", "last_fire_ms", "stop_reason", "created_ms", "updated_ms"},
      {"nodes", "edges"}));
  Table nodes({"NODE", "JOB", "PARAM"});
  nodes.AlignRight(1).LimitWidth(2, 60);
  for (const auto& n : w.value("nodes", json::array())) {
    const auto param = n.value("param", json());
    nodes.AddRow(
        {Text(n, "key"), Text(n, "job_id"), param.is_string() ? param.get<std::string>() : "(the job's)"});
  }
  c.out << '\n' << nodes.Render();
  PrintEdges(c, w.value("edges", json::array()));
}

void Create(const Invocation& inv, Api& api, Console& c) {
  auto body = WorkflowBodyFromFile(inv);
  if (inv.group_id) body["group_id"] = *inv.group_id;
  const auto w = Call(api, "POST", "/api/v1/workflows", body);
  if (inv.json) return PrintJson(c, w);
  c.out << fmt::format("created workflow {} in group {} (enabled: {}): {}\n", Text(w, "id"),
                       Text(w, "group_id"), Enabled(w), Text(w, "name"));
}

void Update(const Invocation& inv, Api& api, Console& c) {
  const auto w = Call(api, "PUT", WorkflowPath(inv.workflow_id), WorkflowBodyFromFile(inv));
  if (inv.json) return PrintJson(c, w);
  c.out << fmt::format("updated workflow {} (enabled: {}): {}\n", Text(w, "id"), Enabled(w), Text(w, "name"));
}

void Delete(const Invocation& inv, Api& api, Console& c) {
  if (!inv.yes) {
    NeedTerminal(c, fmt::format("workflow {}", inv.workflow_id));
    const auto w = Call(api, "GET", WorkflowPath(inv.workflow_id));
    if (!Confirmed(c,
                   fmt::format("Delete workflow {} '{}' with its runs?", inv.workflow_id, Text(w, "name")))) {
      return;
    }
  }
  const auto r = Call(api, "DELETE", WorkflowPath(inv.workflow_id));
  if (inv.json) return PrintJson(c, r);
  c.out << fmt::format("deleted workflow {}\n", inv.workflow_id);
}

// Polls the run until it is no longer RUNNING (or `inv.wait_timeout` passes), printing each node whose state
// or fires changed; the run's end on stdout. Throws CommandError(kExitRefused) unless it ended SUCCESS.
void Wait(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c, std::int64_t run_id) {
  const auto deadline = clock.SteadyNow() + inv.wait_timeout;
  std::map<std::string, std::string> shown;  // node key -> "STATE fires" last printed
  for (;;) {
    const auto run = Call(api, "GET", RunPath(run_id));
    const auto state = Text(run, "state");
    if (!inv.json) {
      for (const auto& n : run.value("nodes", json::array())) {
        const auto now = Text(n, "state");
        const auto fires = Fires(n);
        auto& before = shown[Text(n, "key")];
        const auto seen = fmt::format("{} {}", now, fires);
        if (seen == before) continue;
        const bool first_look_waiting = before.empty() && now == "WAITING";
        before = seen;
        if (first_look_waiting) continue;
        c.out << fmt::format("node {}: {}{}\n", Text(n, "key"), now,
                             fires == "-" ? "" : fmt::format(" (fire {})", fires));
      }
    }
    if (state != "RUNNING") {
      if (inv.json) {
        PrintJson(c, run);
      } else {
        const auto note = Text(run, "note");
        c.out << fmt::format("workflow run {}: {}{}\n", run_id, state,
                             state == "SUCCESS" || note.empty() ? "" : " (" + OneLine(note) + ")");
      }
      if (state != "SUCCESS")
        throw CommandError(kExitRefused, fmt::format("workflow run {} ended {}", run_id, state));
      return;
    }
    c.out.flush();
    if (clock.SteadyNow() >= deadline) {
      throw CommandError(
          kExitRefused,
          fmt::format("workflow run {} is still RUNNING after {} s; it goes on (follow it: cronwheel "
                      "workflows run {}, stop it: cronwheel workflows kill {})",
                      run_id, inv.wait_timeout.count(), run_id, run_id));
    }
    clock.WaitFor(kPollInterval, {});
  }
}

void Trigger(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c) {
  std::optional<json> body;  // none at all without --param (a bodiless action POST)
  if (inv.param) body = json{{"param", *inv.param}};
  const auto r = Call(api, "POST", fmt::format("{}/trigger", WorkflowPath(inv.workflow_id)), body);
  const auto run_id = r.at("run_id").get<std::int64_t>();
  if (inv.json) {
    PrintJson(c, r);
  } else {
    c.out << fmt::format("triggered workflow {}: run {} (follow it: cronwheel workflows run {})\n",
                         inv.workflow_id, run_id, run_id);
  }
  c.out.flush();
  if (inv.wait) Wait(inv, api, clock, c, run_id);
}

void Runs(const Invocation& inv, Api& api, Console& c) {
  const auto r = Call(api, "GET", fmt::format("{}/runs?limit={}", WorkflowPath(inv.workflow_id), inv.limit));
  if (inv.json) return PrintJson(c, r);
  Table t({"ID", "TYPE", "SCHEDULED (UTC)", "STATE", "STARTED (UTC)", "ENDED (UTC)", "BY", "NOTE"});
  t.AlignRight(0).LimitWidth(6, 24).LimitWidth(7, 60);
  for (const auto& run : r.at("items")) {
    t.AddRow({Text(run, "id"), Text(run, "trigger_type"), Utc(run, "scheduled_ms"), Text(run, "state"),
              Utc(run, "start_ms"), Utc(run, "end_ms"), Text(run, "created_by"), Text(run, "note")});
  }
  c.out << t.Render();
}

void PrintRun(Console& c, const json& run) {
  c.out << RenderFields(FieldRows(run,
                                  {"id", "workflow_id", "group_id", "trigger_type", "scheduled_ms", "param",
                                   "state", "start_ms", "end_ms", "note", "created_by"},
                                  {"nodes", "edges", "kill_notes"}));
  Table nodes({"NODE", "JOB", "STATE", "FIRES", "STARTED (UTC)", "ENDED (UTC)"});
  nodes.AlignRight(1).LimitWidth(3, 40);
  for (const auto& n : run.value("nodes", json::array())) {
    nodes.AddRow({Text(n, "key"), Text(n, "job_id"), Text(n, "state"), Fires(n), Utc(n, "start_ms"),
                  Utc(n, "end_ms")});
  }
  c.out << '\n' << nodes.Render();
  PrintEdges(c, run.value("edges", json::array()));
}

void ShowRun(const Invocation& inv, Api& api, Console& c) {
  const auto run = Call(api, "GET", RunPath(inv.run_id));
  if (inv.json) return PrintJson(c, run);
  PrintRun(c, run);
}

void Kill(const Invocation& inv, Api& api, Console& c) {
  const auto run = Call(api, "POST", fmt::format("{}/kill", RunPath(inv.run_id)));
  if (inv.json) return PrintJson(c, run);
  c.out << fmt::format("workflow run {} killed: {}\n", inv.run_id, Text(run, "state"));
  std::vector<std::string> notes;
  for (const auto& n : run.value("kill_notes", json::array()))
    notes.push_back(n.is_string() ? n.get<std::string>() : DumpLossy(n));
  Warn(c, notes);
}

void Rerun(const Invocation& inv, Api& api, Console& c) {
  const auto run = Call(
      api, "POST", fmt::format("{}/nodes/{}/rerun", RunPath(inv.run_id), net::PercentEncode(inv.node_key)));
  if (inv.json) return PrintJson(c, run);
  c.out << fmt::format(
      "workflow run {}: node {} re-run, the run is {} (follow it: cronwheel workflows run {})\n", inv.run_id,
      inv.node_key, Text(run, "state"), inv.run_id);
}

}  // namespace

void RunWorkflowCommand(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c) {
  switch (inv.command) {
    case Command::kWorkflowsList:
      return List(inv, api, c);
    case Command::kWorkflowsShow:
      return Show(inv, api, c);
    case Command::kWorkflowsCreate:
      return Create(inv, api, c);
    case Command::kWorkflowsUpdate:
      return Update(inv, api, c);
    case Command::kWorkflowsDelete:
      return Delete(inv, api, c);
    case Command::kWorkflowsTrigger:
      return Trigger(inv, api, clock, c);
    case Command::kWorkflowsRuns:
      return Runs(inv, api, c);
    case Command::kWorkflowsRun:
      return ShowRun(inv, api, c);
    case Command::kWorkflowsKill:
      return Kill(inv, api, c);
    case Command::kWorkflowsRerun:
      return Rerun(inv, api, c);
    default:
      throw CommandError(kExitUsage, "not a workflows command");
  }
}

}  // namespace cronwheel::cli::detail
