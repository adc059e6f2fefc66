// /api/v1/jobs: jobs (admins, or users permitted on the job's group): list, create, read, update, delete,
// start, stop, manual trigger, copy, and the versions of a script job's source. A job may name as child jobs
// only jobs the caller may see (catalog/job_service.hpp); script jobs are created and changed by global
// admins, and by DEVELOPERs of groups where an admin allowed scripts (docs/security.md, "Script jobs").
#include <algorithm>
#include <optional>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/model/validation.hpp"
#include "api/routes.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::api {
namespace {

// The group a job body asks for, if it names one (for the permission check before validation).
std::optional<int> BodyGroupId(const json& body) {
  if (!body.is_object()) return std::nullopt;
  auto it = body.find("group_id");
  if (it == body.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v <= 0 || v > INT32_MAX) return std::nullopt;
  return static_cast<int>(v);
}

// The groups whose jobs `who` may name as child jobs (an admin: all): a child fires when its parent
// succeeds, so naming one needs what triggering it needs, OPERATOR in its group.
JobService::Visible VisibleTo(const Principal& who) {
  if (who.admin) return {};
  return [groups = who.GroupIds(GroupRole::kOperator)](int g) {
    return std::find(groups.begin(), groups.end(), g) != groups.end();
  };
}

// The answer to a body that names group `g` for a job (`what`: "create jobs in", "move jobs to"): 403 "you
// may not ..." where the caller does not see the group (as before roles), RoleRefusal's 403 where its role
// there is less than the route needs; nullopt when it may.
std::optional<Error> BodyGroupRefusal(const Principal& who, int g, std::string_view what) {
  if (!who.SeesGroup(g)) return Error::Forbidden(fmt::format("you may not {} group {}", what, g));
  return RoleRefusal(who, g, RoleFor(who.route_scope));
}

// A script job (any glue type but BEAN) runs the code its author wrote on the executors of its group:
// creating or changing one in group `group_id` needs the global ADMIN role, or DEVELOPER there when a global
// ADMIN allowed scripts in the group (JobGroup::allow_scripts; docs/security.md, "Script jobs"). nullopt when
// `who` may.
std::optional<Error> ScriptRefusal(const RouteContext& ctx, const Principal& who, GlueType type,
                                   int group_id) {
  if (who.admin || type == GlueType::kBean) return std::nullopt;
  const auto group = ctx.services.groups.GetGroup(group_id);
  const bool allowed = group && group->allow_scripts;
  if (allowed && who.HasRole(group_id, GroupRole::kDeveloper)) return std::nullopt;
  const std::string name(ToString(type));
  return Error{
      ErrorKind::kForbidden,
      fmt::format("a {} job is a script: creating or changing one needs the global ADMIN role, or "
                  "DEVELOPER in a group where an ADMIN allowed scripts",
                  name),
      {{"glue_type",
        fmt::format("{} is a script type: in job group {} {}; you may trigger, start and stop a script job, "
                    "and use BEAN jobs",
                    name, group_id,
                    allowed ? "writing one needs the DEVELOPER role"
                            : "scripts are not allowed, so writing one needs the global ADMIN role (a global "
                              "ADMIN may allow scripts in the group)"),
        "role",
        {{"role", allowed ? "DEVELOPER" : "ADMIN"}, {"group_id", group_id}}}}};
}

// The job body read over `base` and its webhook checked against the operator's prefixes.
Result<Job> ReadJob(const json& body, const Job& base, bool create, const std::vector<std::string>& allow) {
  auto job = ReadJobBody(body, base, create);
  if (!job) return job;
  FieldErrors errors;
  CheckWebhook(*job, create ? nullptr : &base, allow, errors);
  if (!errors.empty()) return Error::Invalid("the job is not valid", std::move(errors));
  return job;
}

Result<JobQuery> ReadJobQuery(const net::Request& req) {
  FieldErrors errors;
  JobQuery q;
  if (const auto g = QueryInt(req, "group_id", 1, INT32_MAX, errors)) q.group_id = static_cast<int>(*g);
  q.offset = static_cast<int>(QueryInt(req, "offset", 0, INT32_MAX, errors).value_or(0));
  q.limit = static_cast<int>(QueryInt(req, "limit", 1, 1000, errors).value_or(50));
  if (req.has_param("enabled")) {
    const auto e = req.get_param_value("enabled");
    if (e == "true" || e == "false") {
      q.enabled = e == "true";
    } else {
      errors.push_back({"enabled",
                        fmt::format("'{}' is not valid: use true or false", Shorten(e)),
                        "enum",
                        {{"allowed", "true, false"}}});
    }
  }
  if (req.has_param("q")) q.text = req.get_param_value("q").substr(0, 200);
  // tag=a&tag=b or tag=a,b: jobs having every one of them.
  const auto [first, last] = req.params.equal_range("tag");
  for (auto it = first; it != last; ++it) {
    for (const auto& tag : SplitCommas(it->second)) {
      auto lower = NormalTag(tag);
      if (!lower) {
        errors.push_back({"tag",
                          fmt::format("'{}' is not a tag: 1 to {} letters, digits, '-', '_', '.', ':' or '/'",
                                      Shorten(tag), kMaxTagLength),
                          "format",
                          {{"what", "tag"}, {"tag", Shorten(tag)}}});
        continue;
      }
      if (std::find(q.tags.begin(), q.tags.end(), *lower) == q.tags.end())
        q.tags.push_back(std::move(*lower));
    }
  }
  if (q.tags.size() > kMaxJobTags) {
    errors.push_back({"tag", fmt::format("at most {} tags, got {}", kMaxJobTags, q.tags.size())});
  }
  if (!errors.empty()) return Error::Invalid("invalid query", std::move(errors));
  return q;
}

// Run once (docs/operations.md, "Run once"): ask for one fire of a job at an instant or after a delay, list a
// job's requests, cancel one. Whoever may trigger the job may do each.
void RegisterRunOnce(Routes& s, const RouteContext& ctx) {
  auto& jobs = ctx.services.jobs;
  s.Post(
      "/api/v1/jobs/{id}/run-once",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto job = ctx.VisibleJob(who, req.matches[1], res);
        if (!job) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto asked = ReadRunOnceBody(*body, ctx.clock.NowMs());
        if (Failed(res, asked)) return;
        const auto created = jobs.CreateRunOnce(job->id, asked->fire_at_ms, asked->param, who.username);
        if (Failed(res, created)) return;
        ctx.Audit(who, "job.run_once", "job", std::to_string(job->id), nullptr, ToJson(*created));
        SendJson(res, 201, ToJson(*created));
      },
      Access::kUser, TokenScope::kOperate);
  s.Get("/api/v1/jobs/{id}/run-once", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto job = ctx.VisibleJob(who, req.matches[1], res);
    if (!job) return;
    FieldErrors errors;
    const auto limit = QueryInt(req, "limit", 1, 1000, errors).value_or(100);
    if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
    json items = json::array();
    for (const auto& r : jobs.ListRunOnce(job->id, static_cast<int>(limit)))
      items.push_back(ToJson(r));
    SendJson(res, 200, {{"items", items}});
  });
  s.Delete(
      "/api/v1/jobs/{id}/run-once/{run_id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto job = ctx.VisibleJob(who, req.matches[1], res);
        if (!job) return;
        const auto id = ParseId(req.matches[2], INT64_MAX);
        if (!id) {
          return SendError(res, Error::NotFound(fmt::format("run once '{}' of job {} not found",
                                                            Shorten(req.matches[2]), job->id)));
        }
        const auto cancelled = jobs.CancelRunOnce(job->id, *id, who.username);
        if (Failed(res, cancelled)) return;
        ctx.Audit(who, "job.run_once_cancel", "job", std::to_string(job->id), nullptr, ToJson(*cancelled));
        SendJson(res, 200, ToJson(*cancelled));
      },
      Access::kUser, TokenScope::kOperate);
}

// What one action on one job answers: the single-job routes send it, the bulk route collects it per job. Each
// action is checked, done, audited and answered alike both ways. `job` is one the caller may see.
struct ActionAnswer {
  int status = 200;
  json body;
};

ActionAnswer Refused(const Error& e) {
  return {HttpStatus(e.kind), ErrorBody(e)};
}

ActionAnswer StartOrStop(const RouteContext& ctx, const Principal& who, const Job& job, bool start) {
  auto& jobs = ctx.services.jobs;
  // The acceptances of fires sent ahead, written first: the stop's withdrawal then leaves those fires to
  // WithdrawSentAhead below, which cancels them where they are held.
  if (!start) ctx.WriteTriggerResults();
  if (const auto done = start ? jobs.StartJob(job.id) : jobs.StopJob(job.id); !done)
    return Refused(done.error());
  if (!start) {
    ctx.WithdrawSentAhead(ctx.SentAhead(job.id), job.group_id, "the job was stopped");
    ctx.CancelWithdrawnClaims(job.id, job.group_id);
  }
  const auto now = jobs.GetJob(job.id);
  if (!now) return Refused(Error::NotFound(fmt::format("job {} not found", job.id)));  // deleted meanwhile
  const auto after = ToJson(*now);
  ctx.Audit(who, start ? "job.start" : "job.stop", "job", std::to_string(job.id), ToJson(job), after);
  return {200, after};
}

ActionAnswer TriggerOnce(const RouteContext& ctx, const Principal& who, const Job& job,
                         const TriggerBody& trigger) {
  std::optional<std::string> address;
  if (trigger.address) {
    // Only an address registered for or configured on the job's group: never one the caller typed.
    const auto group = ctx.services.catalog.GetGroup(job.group_id);
    if (group) address = ctx.GroupAddress(*group, *trigger.address);
    if (!address) {
      return Refused(Error::Invalid(
          "the trigger request is not valid",
          {{"address", fmt::format("'{}' is not an online or configured address of the job's group",
                                   trigger.address->substr(0, 200))}}));
    }
  }
  auto fire =
      ctx.services.jobs.CreateManualFire(job.id, TriggerType::kManual, trigger.param, ctx.settings.node_id);
  if (!fire) return Refused(fire.error());
  const auto log_id = fire->log_id;
  if (!fire->param) fire->param = job.param;
  fire->address = address;
  ctx.services.scheduler.Submit({std::move(*fire)});
  ctx.Audit(who, "job.trigger", "job", std::to_string(job.id), nullptr,
            {{"log_id", log_id},
             {"param", trigger.param ? json(*trigger.param) : json(nullptr)},
             {"address", trigger.address ? json(*trigger.address) : json(nullptr)}});
  return {202, {{"log_id", log_id}}};
}

// Adds `tags` to the job's (after its own, in the order given), or removes them; a job left unchanged is not
// written. At most kMaxJobTags per job: adding past that is refused for that job.
ActionAnswer Retag(const RouteContext& ctx, const Principal& who, const Job& job,
                   const std::vector<std::string>& tags, bool add) {
  const auto retagged = [&](std::vector<std::string> now) {
    for (const auto& t : tags) {
      const auto at = std::find(now.begin(), now.end(), t);
      if (add && at == now.end()) now.push_back(t);
      if (!add && at != now.end()) now.erase(at);
    }
    return now;
  };
  if (retagged(job.tags) == job.tags) return {200, ToJson(job)};
  // As PUT /api/v1/jobs/{id}: a script job is an admin's to change.
  if (auto refused = ScriptRefusal(ctx, who, job.glue_type, job.group_id)) return Refused(*refused);
  const auto updated = ctx.services.jobs.UpdateJob(job.id, [&](Job& stored) -> Result<void> {
    stored.tags = retagged(stored.tags);
    return {};
  });
  if (!updated) return Refused(updated.error());
  auto after = ToJson(*updated);
  ctx.Audit(who, "job.update", "job", std::to_string(job.id), ToJson(job), after);
  return {200, std::move(after)};
}

ActionAnswer DeleteOne(const RouteContext& ctx, const Principal& who, const Job& job) {
  const auto held = ctx.SentAhead(job.id);  // its rows go with it
  if (const auto done = ctx.services.jobs.DeleteJob(job.id); !done) return Refused(done.error());
  ctx.WithdrawSentAhead(held, job.group_id, "the job was deleted");
  ctx.CancelWithdrawnClaims(job.id, job.group_id);
  ctx.Audit(who, "job.delete", "job", std::to_string(job.id), ToJson(job), nullptr);
  return {200, {{"deleted", job.id}}};
}

void Send(net::Response& res, const ActionAnswer& a) {
  SendJson(res, a.status, a.body);
}

void RegisterJobActions(Routes& s, const RouteContext& ctx) {
  const auto start_stop = [&ctx](bool start) {
    return [&ctx, start](const Principal& who, const net::Request& req, net::Response& res) {
      if (const auto job = ctx.VisibleJob(who, req.matches[1], res))
        Send(res, StartOrStop(ctx, who, *job, start));
    };
  };
  s.Action("/api/v1/jobs/{id}/start", start_stop(true));
  s.Action("/api/v1/jobs/{id}/stop", start_stop(false));
  s.Action("/api/v1/jobs/{id}/trigger",
           [&](const Principal& who, const net::Request& req, net::Response& res) {
             const auto job = ctx.VisibleJob(who, req.matches[1], res);
             if (!job) return;
             const auto body = ParseBody(req, true);
             if (Failed(res, body)) return;
             const auto trigger = ReadTriggerBody(*body);
             if (Failed(res, trigger)) return;
             Send(res, TriggerOnce(ctx, who, *job, *trigger));
           });
  // Many jobs at once (docs/operations.md, "Jobs in bulk"): each is done as its own route would do it, in the
  // order given, and answered on its own; a job the caller may not see is not found, as on its own route.
  // Tagging is a write like PUT /api/v1/jobs/{id} (a token of scope operate may start, stop and trigger).
  s.Post(
      "/api/v1/jobs/bulk",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto bulk = ReadBulkBody(*body);
        if (Failed(res, bulk)) return;
        // The route needs operate (start, stop, trigger); deleting and tagging are writes, as on their own
        // routes.
        const bool writes = bulk->action == BulkAction::kDelete || bulk->action == BulkAction::kTag ||
                            bulk->action == BulkAction::kUntag;
        if (writes &&
            RefusedByScope(who, TokenScope::kWrite,
                           fmt::format("POST /api/v1/jobs/bulk with action {}", ToString(bulk->action)), res))
          return;
        json results = json::array();
        int succeeded = 0;
        // Each job needs the role of the action's scope in its group.
        const auto needed = RoleFor(writes ? TokenScope::kWrite : TokenScope::kOperate);
        for (const int id : bulk->job_ids) {
          const auto job = ctx.JobSeenBy(who, id);
          ActionAnswer a;
          if (!job) {
            a = Refused(Error::NotFound(fmt::format("job {} not found", id)));
          } else if (const auto refused = RoleRefusal(who, job->group_id, needed)) {
            a = Refused(*refused);
          } else if (bulk->action == BulkAction::kStart || bulk->action == BulkAction::kStop) {
            a = StartOrStop(ctx, who, *job, bulk->action == BulkAction::kStart);
          } else if (bulk->action == BulkAction::kTrigger) {
            a = TriggerOnce(ctx, who, *job, TriggerBody{.param = bulk->param});
          } else if (bulk->action == BulkAction::kTag || bulk->action == BulkAction::kUntag) {
            a = Retag(ctx, who, *job, bulk->tags, bulk->action == BulkAction::kTag);
          } else {
            a = DeleteOne(ctx, who, *job);
          }
          json item{{"job_id", id}, {"status", a.status}};
          if (a.status < 400) ++succeeded;
          if (a.status < 400 && bulk->action != BulkAction::kTrigger && bulk->action != BulkAction::kDelete) {
            item["job"] = std::move(a.body);
          } else {
            item.update(a.body);
          }
          results.push_back(std::move(item));
        }
        SendJson(res, 200,
                 {{"action", ToString(bulk->action)},
                  {"succeeded", succeeded},
                  {"failed", static_cast<int>(bulk->job_ids.size()) - succeeded},
                  {"results", std::move(results)}});
      },
      Access::kUser, TokenScope::kOperate);
  RegisterRunOnce(s, ctx);
}

// The console's job extras: copy, and the glue versions of a script job.
void RegisterJobExtras(Routes& s, const RouteContext& ctx) {
  auto& jobs = ctx.services.jobs;
  s.Action(
      "/api/v1/jobs/{id}/copy",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto job = ctx.VisibleJob(who, req.matches[1], res);
        if (!job) return;
        if (const auto refused = ScriptRefusal(ctx, who, job->glue_type, job->group_id))
          return SendError(res, *refused);
        Job copy = *job;
        constexpr std::string_view kSuffix = " (copy)";
        copy.id = 0;
        copy.description =
            std::string(Utf8Prefix(job->description, 255 - kSuffix.size())) + std::string(kSuffix);
        copy.enabled = false;
        copy.next_fire_ms = 0;
        copy.last_fire_ms = 0;
        copy.stop_reason.clear();
        FieldErrors errors;
        CheckWebhook(copy, nullptr, ctx.settings.webhook_allow, errors);
        // A copy is a new job: each of its children must be one the caller may see.
        auto created = errors.empty() ? jobs.CreateJob(copy, VisibleTo(who))
                                      : Result<Job>(Error::Invalid("", std::move(errors)));
        if (!created) {
          return SendError(res,
                           Error{ErrorKind::kConflict, "the job cannot be copied", created.error().fields});
        }
        auto after = ToJson(*created);
        after["copied_from"] = job->id;
        ctx.Audit(who, "job.copy", "job", std::to_string(created->id), nullptr, after);
        SendJson(res, 201, ToJson(*created));
      },
      Access::kUser, TokenScope::kWrite);
  s.Get("/api/v1/jobs/{id}/glue", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto job = ctx.VisibleJob(who, req.matches[1], res);
    if (!job) return;
    json items = json::array();
    for (const auto& g : ctx.services.console->store.GlueHistory(job->id)) {
      items.push_back({{"id", g.id},
                       {"glue_type", g.glue_type},
                       {"glue_source", g.glue_source},
                       {"glue_remark", g.glue_remark},
                       {"glue_updated_ms", g.glue_updated_ms},
                       {"created_ms", g.created_ms}});
    }
    SendJson(res, 200, {{"items", items}});
  });
}

}  // namespace

void RegisterJobRoutes(Routes& s, const RouteContext& ctx) {
  auto& jobs = ctx.services.jobs;
  const auto& allow = ctx.settings.webhook_allow;

  s.Get("/api/v1/jobs", [&](const Principal& who, const net::Request& req, net::Response& res) {
    auto q = ReadJobQuery(req);
    if (Failed(res, q)) return;
    if (!who.admin) q->group_ids = who.GroupIds();
    SendPage(res, jobs.ListJobs(*q));
  });
  // The tags in use on the jobs the caller may see (docs/operations.md, "Tags").
  s.Get("/api/v1/tags", [&](const Principal& who, const net::Request&, net::Response& res) {
    auto items = json::array();
    for (const auto& t :
         jobs.ListTags(who.admin ? std::nullopt : std::optional<std::vector<int>>(who.GroupIds()))) {
      items.push_back({{"tag", t.tag}, {"jobs", t.jobs}});
    }
    SendJson(res, 200, {{"items", items}});
  });
  s.Post("/api/v1/jobs", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    if (const auto g = BodyGroupId(*body)) {
      if (const auto refused = BodyGroupRefusal(who, *g, "create jobs in")) return SendError(res, *refused);
    }
    auto job = ReadJob(*body, Job{}, true, allow);
    if (Failed(res, job)) return;
    if (const auto refused = ScriptRefusal(ctx, who, job->glue_type, job->group_id))
      return SendError(res, *refused);
    const auto created = jobs.CreateJob(*std::move(job), VisibleTo(who));
    if (Failed(res, created)) return;
    ctx.Audit(who, "job.create", "job", std::to_string(created->id), nullptr, ToJson(*created));
    SendJson(res, 201, ToJson(*created));
  });
  s.Get("/api/v1/jobs/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    if (const auto job = ctx.VisibleJob(who, req.matches[1], res)) SendJson(res, 200, ToJson(*job));
  });
  s.Put("/api/v1/jobs/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto job = ctx.VisibleJob(who, req.matches[1], res);
    if (!job) return;
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    if (const auto g = BodyGroupId(*body)) {
      if (const auto refused = BodyGroupRefusal(who, *g, "move jobs to")) return SendError(res, *refused);
    }
    ctx.WriteTriggerResults();  // as for a stop (StartOrStop)
    const auto updated = jobs.UpdateJob(
        job->id,
        [&](Job& stored) -> Result<void> {
          auto read = ReadJob(*body, stored, false, allow);
          if (!read) return read.error();
          // A script job is changed, and a bean job becomes a script, only by whoever may write scripts in
          // the group it is in and the one it goes to.
          const auto type = stored.glue_type != GlueType::kBean ? stored.glue_type : read->glue_type;
          for (const int g : {stored.group_id, read->group_id}) {
            if (auto refused = ScriptRefusal(ctx, who, type, g)) return *std::move(refused);
          }
          stored = std::move(*read);
          return {};
        },
        VisibleTo(who));
    if (Failed(res, updated)) return;
    if (!updated->enabled || !SameSchedule(*job, *updated)) {
      ctx.WithdrawSentAhead(ctx.SentAhead(job->id), job->group_id,  // held by the old group's executors
                            updated->enabled ? "the job's schedule changed" : "the job was stopped");
      ctx.CancelWithdrawnClaims(job->id, job->group_id);
    } else if (const auto changed = ChangedForExecutor(*job, *updated);
               !changed.empty() && job->group_id == updated->group_id) {
      ctx.ReplaceSentAhead(ctx.SentAhead(job->id), job->id, fmt::format("the job's {} changed", changed));
    }
    ctx.Audit(who, "job.update", "job", std::to_string(job->id), ToJson(*job), ToJson(*updated));
    SendJson(res, 200, ToJson(*updated));
  });
  s.Delete("/api/v1/jobs/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    if (const auto job = ctx.VisibleJob(who, req.matches[1], res)) Send(res, DeleteOne(ctx, who, *job));
  });
  RegisterJobActions(s, ctx);
  if (ctx.services.console != nullptr) RegisterJobExtras(s, ctx);
}

}  // namespace cronwheel::admin::api
