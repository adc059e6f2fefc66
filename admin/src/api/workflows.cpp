// /api/v1/workflows and /api/v1/workflow-runs (docs/operations.md, "Workflows"): a workflow is seen and
// changed by the users of its group; each of its nodes must be a job of a group the saver may use. A trigger,
// a re-run and a kill act for the caller, who must be able to fire (operate) every node's job they reach
// (admin/model/workflow_access.hpp; security review 2, N4). A trigger answers the run's id at once; the run
// is then followed at /api/v1/workflow-runs/{id}.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/catalog/workflow_service.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "admin/schedule/scheduler.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

namespace {

// The workflow `text` names if the caller may see it; else a 404 answered.
std::optional<Workflow> Visible(WorkflowService& workflows, const Principal& who, const std::string& text,
                                net::Response& res) {
  const auto id = ParseId(text);
  auto w = id ? workflows.Get(static_cast<int>(*id)) : std::nullopt;
  if (!Admitted(who, w ? std::optional(w->group_id) : std::nullopt,
                fmt::format("workflow '{}' not found", Shorten(text)), res)) {
    return std::nullopt;
  }
  return w;
}

std::optional<WorkflowRun> VisibleRun(WorkflowService& workflows, const Principal& who,
                                      const std::string& text, net::Response& res) {
  const auto id = ParseId(text, INT64_MAX);
  auto run = id ? workflows.GetRun(*id) : std::nullopt;
  if (!Admitted(who, run ? std::optional(run->group_id) : std::nullopt,
                fmt::format("workflow run '{}' not found", Shorten(text)), res)) {
    return std::nullopt;
  }
  return run;
}

// The caller may own a workflow in its group (the route's role there: DEVELOPER to save it) and fire each
// node's job (OPERATOR in the job's group, as triggering it would need): a group or job the caller does not
// see is refused as one that does not exist (its existence is not told).
Result<void> CheckAccess(WorkflowService& workflows, const Principal& who, const Workflow& w) {
  if (!who.SeesGroup(w.group_id)) {
    return Error::Invalid(
        "the workflow is not valid",
        {{"group_id", fmt::format("job group {} does not exist", w.group_id), "not_found"}});
  }
  if (auto refused = RoleRefusal(who, w.group_id, RoleFor(who.route_scope))) return *std::move(refused);
  if (who.admin) return {};
  std::vector<int> ids;
  for (const auto& n : w.graph.nodes)
    ids.push_back(n.job_id);
  const auto groups = workflows.JobGroups(ids);
  FieldErrors errors;
  for (std::size_t i = 0; i < w.graph.nodes.size(); ++i) {
    const auto it = groups.find(w.graph.nodes[i].job_id);
    if (it == groups.end()) continue;  // reported by the save itself
    if (!who.SeesGroup(it->second)) {
      errors.push_back({fmt::format("nodes[{}].job_id", i),
                        fmt::format("nodes[{}].job_id: job {} does not exist", i, w.graph.nodes[i].job_id),
                        "not_found",
                        {{"id", w.graph.nodes[i].job_id}}});
    } else if (!who.HasRole(it->second, GroupRole::kOperator)) {
      errors.push_back({fmt::format("nodes[{}].job_id", i),
                        fmt::format("nodes[{}].job_id: job {} is in job group {}, where firing it needs the "
                                    "OPERATOR role",
                                    i, w.graph.nodes[i].job_id, it->second),
                        "role",
                        {{"role", "OPERATOR"}, {"group_id", it->second}}});
    }
  }
  if (!errors.empty()) return Error::Invalid("the workflow is not valid", std::move(errors));
  return {};
}

// The caller, as the one a run fires (or kills) its nodes' jobs for.
NodeFirer FirerOf(const Principal& who) {
  return NodeFirer{.username = who.username, .admin = who.admin, .groups = who.groups};
}

// Asks the executors to kill the fires of run `run_id` that they run (`killed`), and only those: a
// cronwheel executor by their log ids (/killFires); one that does not know that path (an XXL-JOB executor)
// with /kill of the job, which ends the job's whole thread, only when the admin knows of no other fire of
// that job there. Returns a note per fire not confirmed killed.
json KillOnExecutors(const RouteContext& ctx, WorkflowService& workflows, std::int64_t run_id,
                     const std::vector<KilledFire>& killed) {
  json notes = json::array();
  if (ctx.services.console == nullptr) return notes;
  auto& executors = ctx.services.console->executors;
  std::map<std::pair<std::string, int>, std::vector<const KilledFire*>> by_executor;  // (address, group)
  for (const auto& k : killed)
    by_executor[{k.executor_address, k.group_id}].push_back(&k);
  for (const auto& [where, fires] : by_executor) {
    const auto& [address, group_id] = where;
    const auto token = ctx.ExecutorToken(group_id);
    xxljob::CancelParam ids;
    for (const auto* k : fires)
      ids.log_ids.push_back(k->log_id);
    const auto env = executors.KillFires(address, token, ids);
    if (env.ok()) {
      std::set<std::int64_t> confirmed;
      if (env.content.is_object() && env.content.contains(xxljob::kKilledField)) {
        for (const auto& id : env.content.at(xxljob::kKilledField))
          if (id.is_number_integer()) confirmed.insert(id.get<std::int64_t>());
      }
      for (const auto* k : fires) {
        if (!confirmed.contains(k->log_id)) {
          notes.push_back(
              fmt::format("fire {}: the executor {} did not have it running any more", k->log_id, address));
        }
      }
      continue;
    }
    if (env.msg.value_or("").find("uri-mapping") == std::string::npos) {
      for (const auto* k : fires) {
        notes.push_back(fmt::format("fire {}: the executor {} did not kill it: {}", k->log_id, address,
                                    env.msg.value_or("no message")));
      }
      continue;
    }
    // An XXL-JOB executor: /kill ends all of a job's fires there.
    std::set<int> jobs;
    for (const auto* k : fires)
      jobs.insert(k->job_id);
    for (const int job : jobs) {
      const auto others = workflows.OtherOpenFires(job, address, run_id);
      if (!others.empty()) {
        notes.push_back(fmt::format(
            "job {}: not killed on the executor {}: it does not kill single fires (an XXL-JOB executor), and "
            "its /kill would also end fire(s) {} of job {}, which are not this run's; the run's fire is "
            "recorded killed and its result will be ignored",
            job, address, fmt::join(others, ", "), job));
        continue;
      }
      const auto env_job = executors.Kill(address, token, job);
      if (!env_job.ok()) {
        notes.push_back(fmt::format("job {}: the executor {} did not kill it: {}", job, address,
                                    env_job.msg.value_or("no message")));
      }
    }
  }
  return notes;
}

}  // namespace

void RegisterWorkflowRoutes(Routes& s, const RouteContext& ctx) {
  if (ctx.services.workflows == nullptr) return;
  auto& workflows = *ctx.services.workflows;

  s.Get("/api/v1/workflows", [&](const Principal& who, const net::Request&, net::Response& res) {
    json items = json::array();
    for (const auto& w : workflows.List(who.admin ? std::nullopt : std::optional(who.GroupIds())))
      items.push_back(ToJson(w));
    SendJson(res, 200, {{"total", items.size()}, {"items", items}});
  });
  s.Post("/api/v1/workflows", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    auto read = ReadWorkflowBody(*body, Workflow{}, true);
    if (Failed(res, read)) return;
    if (Failed(res, CheckAccess(workflows, who, *read))) return;
    read->run_as_user_id = who.user_id;  // its scheduled runs fire for the saver
    const auto w = workflows.Create(*read);
    if (Failed(res, w)) return;
    ctx.Audit(who, "workflow.create", "workflow", std::to_string(w->id), nullptr, ToJson(*w));
    SendJson(res, 201, ToJson(*w));
  });
  s.Get("/api/v1/workflows/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    if (const auto w = Visible(workflows, who, req.matches[1], res)) SendJson(res, 200, ToJson(*w));
  });
  s.Put("/api/v1/workflows/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto before = Visible(workflows, who, req.matches[1], res);
    if (!before) return;
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    const auto w = workflows.Update(before->id, [&](Workflow& stored) -> Result<void> {
      auto read = ReadWorkflowBody(*body, stored, false);
      if (!read) return read.error();
      if (auto access = CheckAccess(workflows, who, *read); !access) return access;
      stored = std::move(*read);
      stored.run_as_user_id = who.user_id;
      return {};
    });
    if (Failed(res, w)) return;
    ctx.Audit(who, "workflow.update", "workflow", std::to_string(w->id), ToJson(*before), ToJson(*w));
    SendJson(res, 200, ToJson(*w));
  });
  s.Delete("/api/v1/workflows/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto before = Visible(workflows, who, req.matches[1], res);
    if (!before) return;
    if (Failed(res, workflows.Delete(before->id))) return;
    ctx.Audit(who, "workflow.delete", "workflow", std::to_string(before->id), ToJson(*before), nullptr);
    SendJson(res, 200, {{"deleted", before->id}});
  });
  s.Action("/api/v1/workflows/{id}/trigger", [&](const Principal& who, const net::Request& req,
                                                 net::Response& res) {
    const auto w = Visible(workflows, who, req.matches[1], res);
    if (!w) return;
    const auto body = ParseBody(req, true);
    if (Failed(res, body)) return;
    const auto param = ReadWorkflowTriggerBody(*body);
    if (Failed(res, param)) return;
    auto run = workflows.Trigger(w->id, who.via == "token", *param, FirerOf(who), ctx.settings.node_id);
    if (Failed(res, run)) return;
    if (!run->fires.empty()) ctx.services.scheduler.Submit(std::move(run->fires));
    ctx.Audit(who, "workflow.trigger", "workflow", std::to_string(w->id), nullptr,
              {{"run_id", run->run_id}, {"param", *param ? json(**param) : json(nullptr)}});
    SendJson(res, 202, {{"run_id", run->run_id}});
  });
  s.Get("/api/v1/workflows/{id}/runs",
        [&](const Principal& who, const net::Request& req, net::Response& res) {
          const auto w = Visible(workflows, who, req.matches[1], res);
          if (!w) return;
          FieldErrors errors;
          const auto limit = QueryInt(req, "limit", 1, 200, errors).value_or(20);
          if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
          json items = json::array();
          for (const auto& run : workflows.ListRuns(w->id, static_cast<int>(limit)))
            items.push_back(ToJson(run));
          SendJson(res, 200, {{"total", items.size()}, {"items", items}});
        });
  s.Get("/api/v1/workflow-runs/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    if (const auto run = VisibleRun(workflows, who, req.matches[1], res)) SendJson(res, 200, ToJson(*run));
  });
  s.Action("/api/v1/workflow-runs/{id}/kill",
           [&](const Principal& who, const net::Request& req, net::Response& res) {
             const auto run = VisibleRun(workflows, who, req.matches[1], res);
             if (!run) return;
             ctx.WriteTriggerResults();  // where its running fires went
             const auto killed = workflows.KillRun(run->id, FirerOf(who));
             if (Failed(res, killed)) return;
             // The run is recorded killed; the executors are asked to stop the run's fires they run, and no
             // other (best effort: a fire that finishes meanwhile changes nothing, its node is KILLED
             // already).
             const auto notes = KillOnExecutors(ctx, workflows, run->id, *killed);
             const auto after = workflows.GetRun(run->id);
             ctx.Audit(who, "workflow_run.kill", "workflow_run", std::to_string(run->id), ToJson(*run),
                       after ? ToJson(*after) : json(nullptr));
             auto out = after ? ToJson(*after) : json::object();
             out["kill_notes"] = notes;
             SendJson(res, 200, out);
           });
  s.Action("/api/v1/workflow-runs/{id}/nodes/{key}/rerun",
           [&](const Principal& who, const net::Request& req, net::Response& res) {
             const auto run = VisibleRun(workflows, who, req.matches[1], res);
             if (!run) return;
             auto fires = workflows.RerunNode(run->id, req.matches[2], FirerOf(who), ctx.settings.node_id);
             if (Failed(res, fires)) return;
             if (!fires->empty()) ctx.services.scheduler.Submit(std::move(*fires));
             const auto after = workflows.GetRun(run->id);
             ctx.Audit(who, "workflow_run.rerun", "workflow_run", std::to_string(run->id), ToJson(*run),
                       after ? ToJson(*after) : json(nullptr));
             SendJson(res, 200, after ? ToJson(*after) : json::object());
           });
}

}  // namespace cronwheel::admin::api
