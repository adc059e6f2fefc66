// The REST API under /api/v1 (jobs, groups, logs, health; the console's routes are in api_console.cpp).
// Every state-changing route records an audit entry (audit_log.hpp). Every route authenticates its caller and
// checks the caller's rights on the resource before touching it: groups are managed by admins; jobs and
// logs are visible and changeable by admins and by users permitted on their group. A resource the caller
// may not see answers 404, as if it did not exist.
#include <algorithm>

#include "admin/api_server.hpp"
#include "admin/console.hpp"
#include "admin/request_bodies.hpp"
#include "api_routes.hpp"
#include "api_util.hpp"
#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {

using nlohmann::json;
using namespace api;

namespace {

template <class T>
bool IsErrors(const Validated<T>& v) {
  return std::holds_alternative<FieldErrors>(v);
}

std::string Shorten(const std::string& s) {
  return s.substr(0, 40);
}

// The group a job body asks for, if it names one (for the permission check before validation).
std::optional<int> BodyGroupId(const json& body) {
  if (!body.is_object()) return std::nullopt;
  auto it = body.find("group_id");
  if (it == body.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v <= 0 || v > INT32_MAX) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

void RegisterRestRoutes(httplib::Server& server, ApiServer::Services& services,
                        const ApiServer::Settings& settings, ringwheel::Clock& clock) {
  auto& repo = services.repository;
  auto& auth = services.authenticator;
  auto& catalog = services.catalog;
  Routes s(server, services.console != nullptr ? &services.console->routes : nullptr);
  // Who changed what (audit_log), when the console's parts are there.
  auto audit = [console = services.console](const Principal& who, std::string_view action,
                                            std::string_view entity, std::string_view id, const json& before,
                                            const json& after) {
    if (console != nullptr) console->audit.Record(who, action, entity, std::string(id), before, after);
  };

  // Health needs no credentials: load balancers and the demo script poll it. It reveals no data.
  s.Get("/api/v1/health", [&services, &settings, &clock](const httplib::Request&, httplib::Response& res) {
    json body{{"status", "ok"}, {"node_id", settings.node_id}, {"now_ms", clock.NowMs()}};
    try {
      services.repository.ListGroups();  // the database answers
      if (services.health_details) body.update(services.health_details());
      SendJson(res, 200, body);
    } catch (const std::exception& e) {
      body["status"] = "unavailable";
      body["error"] = e.what();
      SendJson(res, 503, body);
    }
  });

  // --- groups (read: permitted groups; write: admins) ---
  s.Get("/api/v1/groups", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    json items = json::array();
    for (const auto& g : repo.ListGroups()) {
      if (!who->CanAccessGroup(g.id)) continue;
      auto j = ToJson(g);
      j["online_addresses"] = catalog.Addresses(g);
      items.push_back(std::move(j));
    }
    SendJson(res, 200, {{"items", items}});
  });
  s.Post("/api/v1/groups", [&, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = repo.CreateGroup(*body);
    if (IsErrors(v)) return SendError(res, 400, "the group is not valid", std::get<FieldErrors>(v));
    const auto& g = std::get<JobGroup>(v);
    audit(*who, "group.create", "group", std::to_string(g.id), nullptr, ToJson(g));
    SendJson(res, 201, ToJson(g));
  });
  s.Get("/api/v1/groups/{id}", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto id = ParseId<int>(req.matches[1]);
    const auto g = id && who->CanAccessGroup(*id) ? repo.GetGroup(*id) : std::nullopt;
    if (!g) return SendError(res, 404, fmt::format("group '{}' not found", Shorten(req.matches[1])));
    auto j = ToJson(*g, who->admin);
    j["online_addresses"] = catalog.Addresses(*g);
    SendJson(res, 200, j);
  });
  s.Put("/api/v1/groups/{id}", [&, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "group not found");
    auto body = ParseBody(req, res, false);
    if (!body) return;
    const auto before = repo.GetGroup(*id);
    auto v = repo.UpdateGroup(*id, *body);
    if (!v) return SendError(res, 404, fmt::format("group {} not found", *id));
    if (IsErrors(*v)) return SendError(res, 400, "the group is not valid", std::get<FieldErrors>(*v));
    catalog.InvalidateGroup(*id);
    const auto& g = std::get<JobGroup>(*v);
    audit(*who, "group.update", "group", std::to_string(g.id), before ? ToJson(*before) : json(nullptr),
          ToJson(g));
    SendJson(res, 200, ToJson(g));
  });
  s.Delete("/api/v1/groups/{id}", [&, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "group not found");
    std::string why;
    const auto before = repo.GetGroup(*id);
    switch (repo.DeleteGroup(*id, &why)) {
      case Outcome::kOk:
        catalog.InvalidateGroup(*id);
        audit(*who, "group.delete", "group", std::to_string(*id), before ? ToJson(*before) : json(nullptr),
              nullptr);
        return SendJson(res, 200, {{"deleted", *id}});
      case Outcome::kNotFound:
        return SendError(res, 404, fmt::format("group {} not found", *id));
      default:
        return SendError(res, 409, why);
    }
  });

  // --- jobs (admins, or users permitted on the job's group) ---
  // The job if it exists and the caller may see it; otherwise answers 404.
  auto visible_job = [&repo = services.repository](const Principal& who, const std::string& text,
                                                   httplib::Response& res) -> std::optional<Job> {
    const auto id = ParseId<int>(text);
    auto job = id ? repo.GetJob(*id) : std::nullopt;
    if (!job || !who.CanAccessGroup(job->group_id)) {
      SendError(res, 404, fmt::format("job '{}' not found", Shorten(text)));
      return std::nullopt;
    }
    return job;
  };

  s.Get("/api/v1/jobs", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    FieldErrors errors;
    JobQuery q;
    q.group_id = QueryInt<int>(req, "group_id", 1, INT32_MAX, errors);
    q.offset = QueryInt<int>(req, "offset", 0, INT32_MAX, errors).value_or(0);
    q.limit = QueryInt<int>(req, "limit", 1, 1000, errors).value_or(50);
    if (req.has_param("enabled")) {
      const auto e = req.get_param_value("enabled");
      if (e == "true" || e == "false") {
        q.enabled = e == "true";
      } else {
        errors.push_back({"enabled", fmt::format("'{}' is not valid: use true or false", Shorten(e))});
      }
    }
    if (req.has_param("q")) q.text = req.get_param_value("q").substr(0, 200);
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    if (!who->admin) q.group_ids = who->group_ids;
    const auto page = repo.ListJobs(q);
    SendPage(res, page);
  });
  s.Post("/api/v1/jobs", [&, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    auto body = ParseBody(req, res, false);
    if (!body) return;
    if (const auto g = BodyGroupId(*body); g && !who->CanAccessGroup(*g)) {
      return SendError(res, 403, fmt::format("you may not create jobs in group {}", *g));
    }
    auto v = repo.CreateJob(*body);
    if (IsErrors(v)) return SendError(res, 400, "the job is not valid", std::get<FieldErrors>(v));
    const auto& created = std::get<Job>(v);
    audit(*who, "job.create", "job", std::to_string(created.id), nullptr, ToJson(created));
    SendJson(res, 201, ToJson(created));
  });
  s.Get("/api/v1/jobs/{id}", [&, visible_job](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    if (const auto job = visible_job(*who, req.matches[1], res)) SendJson(res, 200, ToJson(*job));
  });
  s.Put("/api/v1/jobs/{id}", [&, visible_job, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto job = visible_job(*who, req.matches[1], res);
    if (!job) return;
    auto body = ParseBody(req, res, false);
    if (!body) return;
    if (const auto g = BodyGroupId(*body); g && !who->CanAccessGroup(*g)) {
      return SendError(res, 403, fmt::format("you may not move jobs to group {}", *g));
    }
    auto v = repo.UpdateJob(job->id, *body);
    if (!v) return SendError(res, 404, fmt::format("job {} not found", job->id));
    if (IsErrors(*v)) return SendError(res, 400, "the job is not valid", std::get<FieldErrors>(*v));
    catalog.InvalidateJob(job->id);
    const auto& updated = std::get<Job>(*v);
    audit(*who, "job.update", "job", std::to_string(job->id), ToJson(*job), ToJson(updated));
    SendJson(res, 200, ToJson(updated));
  });
  s.Delete("/api/v1/jobs/{id}", [&, visible_job, audit](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto job = visible_job(*who, req.matches[1], res);
    if (!job) return;
    if (repo.DeleteJob(job->id) == Outcome::kNotFound) return SendError(res, 404, "job not found");
    catalog.InvalidateJob(job->id);
    audit(*who, "job.delete", "job", std::to_string(job->id), ToJson(*job), nullptr);
    SendJson(res, 200, {{"deleted", job->id}});
  });
  s.Post("/api/v1/jobs/{id}/start",
         [&, visible_job, audit](const httplib::Request& req, httplib::Response& res) {
           const auto who = Authenticate(auth, req, res);
           if (!who) return;
           const auto job = visible_job(*who, req.matches[1], res);
           if (!job) return;
           FieldErrors errors;
           switch (repo.StartJob(job->id, &errors)) {
             case Outcome::kOk: {
               catalog.InvalidateJob(job->id);
               const auto after = ToJson(*repo.GetJob(job->id));
               audit(*who, "job.start", "job", std::to_string(job->id), ToJson(*job), after);
               return SendJson(res, 200, after);
             }
             case Outcome::kNotFound:
               return SendError(res, 404, fmt::format("job {} not found", job->id));
             default:
               return SendError(res, 400, "the job cannot be started", errors);
           }
         });
  s.Post("/api/v1/jobs/{id}/stop",
         [&, visible_job, audit](const httplib::Request& req, httplib::Response& res) {
           const auto who = Authenticate(auth, req, res);
           if (!who) return;
           const auto job = visible_job(*who, req.matches[1], res);
           if (!job) return;
           if (repo.StopJob(job->id) == Outcome::kNotFound) return SendError(res, 404, "job not found");
           catalog.InvalidateJob(job->id);
           const auto after = ToJson(*repo.GetJob(job->id));
           audit(*who, "job.stop", "job", std::to_string(job->id), ToJson(*job), after);
           SendJson(res, 200, after);
         });
  s.Post("/api/v1/jobs/{id}/trigger",
         [&, visible_job, audit](const httplib::Request& req, httplib::Response& res) {
           const auto who = Authenticate(auth, req, res);
           if (!who) return;
           const auto job = visible_job(*who, req.matches[1], res);
           if (!job) return;
           auto body = ParseBody(req, res, true);
           if (!body) return;
           FieldErrors errors;
           const auto [param, address] = ReadTriggerBody(*body, errors);
           if (address) {
             // Only an address registered for or configured on the job's group: never one the caller typed.
             const auto group = catalog.GetGroup(job->group_id);
             const auto allowed = group ? catalog.Addresses(*group) : std::vector<std::string>{};
             const auto wanted = cronwheel::net::NormalizeAddress(*address);
             if (std::find(allowed.begin(), allowed.end(), wanted) == allowed.end()) {
               errors.push_back(
                   {"address", fmt::format("'{}' is not an online or configured address of the job's group",
                                           address->substr(0, 200))});
             }
           }
           if (!errors.empty()) return SendError(res, 400, "the trigger request is not valid", errors);
           const auto log_id = repo.CreateManualFire(job->id, TriggerType::kManual, param, settings.node_id);
           if (!log_id) return SendError(res, 404, fmt::format("job {} not found", job->id));
           services.scheduler.Submit({Fire{.log_id = *log_id,
                                           .job_id = job->id,
                                           .scheduled_ms = clock.NowMs(),
                                           .type = TriggerType::kManual,
                                           .param = param ? param : std::optional<std::string>(job->param),
                                           .address = address}});
           audit(*who, "job.trigger", "job", std::to_string(job->id), nullptr,
                 {{"log_id", *log_id},
                  {"param", param ? json(*param) : json(nullptr)},
                  {"address", address ? json(*address) : json(nullptr)}});
           SendJson(res, 202, {{"log_id", *log_id}});
         });

  // --- logs (admins, or users permitted on the fire's group) ---
  s.Get("/api/v1/logs", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    FieldErrors errors;
    LogQuery q;
    q.job_id = QueryInt<int>(req, "job_id", 1, INT32_MAX, errors);
    q.group_id = QueryInt<int>(req, "group_id", 1, INT32_MAX, errors);
    q.from_ms = QueryInt<std::int64_t>(req, "from_ms", 0, INT64_MAX, errors);
    q.to_ms = QueryInt<std::int64_t>(req, "to_ms", 0, INT64_MAX, errors);
    q.offset = QueryInt<int>(req, "offset", 0, INT32_MAX, errors).value_or(0);
    q.limit = QueryInt<int>(req, "limit", 1, 1000, errors).value_or(50);
    if (req.has_param("status")) {
      const auto st = req.get_param_value("status");
      if (st == "PENDING" || st == "RUNNING" || st == "SUCCESS" || st == "FAILED" || st == "SKIPPED") {
        q.status = st;
      } else {
        errors.push_back(
            {"status", fmt::format("'{}' is not valid; use PENDING, RUNNING, SUCCESS, FAILED or SKIPPED",
                                   Shorten(st))});
      }
    }
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    if (!who->admin) q.group_ids = who->group_ids;
    const auto page = repo.ListLogs(q);
    SendPage(res, page);
  });
  s.Get("/api/v1/logs/{id}", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto id = ParseId<std::int64_t>(req.matches[1]);
    const auto l = id ? repo.GetLog(*id) : std::nullopt;
    if (!l || !who->CanAccessGroup(l->group_id)) {
      return SendError(res, 404, fmt::format("log '{}' not found", Shorten(req.matches[1])));
    }
    SendJson(res, 200, ToJson(*l));
  });

  if (services.console != nullptr) {
    RegisterConsoleRoutes(s, services, settings, clock);
    RegisterWebAssets(server, services.console->web_dir);
  }
}

}  // namespace cronwheel::admin
