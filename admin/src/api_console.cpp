// The console's REST routes (console.hpp): auth, users, API tokens, audit, dashboard, schedule preview,
// job copy and glue versions, a fire's executor output, kill, clearing fires, and the OpenAPI document.
// Rules as in api_rest.cpp: every route but login and the OpenAPI document needs a principal; a resource
// outside the caller's groups answers 404, a forbidden action 403; bad input is a 4xx naming the field;
// every state-changing route writes an audit entry (never a password or a token).

#include <cmath>
#include <set>

#include "admin/console.hpp"
#include "api_routes.hpp"
#include "api_util.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {

using nlohmann::json;
using namespace api;

namespace {

std::string Shorten(const std::string& s) {
  return s.substr(0, 40);
}

// `text` cut to at most `max` bytes without splitting a UTF-8 sequence.
std::string Utf8Prefix(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U)
    --n;
  return text.substr(0, n);
}

void SendRetryAfter(httplib::Response& res, std::chrono::milliseconds wait, const std::string& what) {
  const auto seconds = std::max<std::int64_t>(1, (wait.count() + 999) / 1000);
  res.set_header("Retry-After", std::to_string(seconds));
  SendError(res, 429, fmt::format("{}; try again in {} s", what, seconds));
}

}  // namespace

void RegisterConsoleRoutes(Routes& s, ApiServer::Services& services, const ApiServer::Settings& settings,
                           ringwheel::Clock& clock) {
  auto& console = *services.console;
  auto& accounts = console.auth;
  auto& audit = console.audit;
  auto& store = console.store;
  auto& executors = console.executors;
  auto& repo = services.repository;
  auto& auth = services.authenticator;
  auto& catalog = services.catalog;

  // The fire if it exists and the caller may see it; otherwise answers 404.
  auto visible_log = [&repo](const Principal& who, const std::string& text,
                             httplib::Response& res) -> std::optional<JobLog> {
    const auto id = ParseId<std::int64_t>(text);
    auto log = id ? repo.GetLog(*id) : std::nullopt;
    if (!log || !who.CanAccessGroup(log->group_id)) {
      SendError(res, 404, fmt::format("log '{}' not found", Shorten(text)));
      return std::nullopt;
    }
    return log;
  };
  auto visible_job = [&repo](const Principal& who, const std::string& text,
                             httplib::Response& res) -> std::optional<Job> {
    const auto id = ParseId<int>(text);
    auto job = id ? repo.GetJob(*id) : std::nullopt;
    if (!job || !who.CanAccessGroup(job->group_id)) {
      SendError(res, 404, fmt::format("job '{}' not found", Shorten(text)));
      return std::nullopt;
    }
    return job;
  };
  // The token the fire's executor expects: its group's, else the global one.
  auto executor_token = [&catalog, &settings](int group_id) {
    const auto group = catalog.GetGroup(group_id);
    return group && group->access_token ? *group->access_token : settings.access_token;
  };

  // --- authentication ------------------------------------------------------------------------------------
  s.Post("/api/v1/auth/login", [&](const httplib::Request& req, httplib::Response& res) {
    // A JSON body only: a cross-site HTML form cannot send one, so nobody is logged in by a foreign page.
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      return SendError(res, 415, "send the credentials as a JSON body (Content-Type: application/json)");
    }
    auto body = ParseBody(req, res, false);
    if (!body) return;
    FieldErrors errors;
    const auto [username, password] = ReadLoginBody(*body, errors);
    if (!errors.empty()) return SendError(res, 400, "the login request is not valid", errors);
    const auto result = accounts.Login(username, password, req.remote_addr);
    switch (result.status) {
      case AuthService::LoginStatus::kThrottled:
        return SendRetryAfter(res, result.retry_after, "too many failed logins");
      case AuthService::LoginStatus::kWrongCredentials:
        audit.Record(Principal{.username = Utf8Prefix(username, 100)}, "user.login_failed", "user", "",
                     nullptr, {{"client", req.remote_addr}});
        return SendError(res, 401, "wrong username or password");
      case AuthService::LoginStatus::kOk:
        break;
    }
    audit.Record(Principal{.user_id = result.user.id, .username = result.user.username}, "user.login", "user",
                 std::to_string(result.user.id), nullptr, {{"client", req.remote_addr}});
    res.set_header("Set-Cookie", accounts.SessionCookie(result.session_token));
    SendJson(res, 200, {{"csrf_token", result.csrf_token}, {"user", ToJson(result.user)}});
  });
  s.Post("/api/v1/auth/logout", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const bool ended = who->via == "session" && accounts.Logout(req);
    if (ended) audit.Record(*who, "user.logout", "user", std::to_string(who->user_id), nullptr, nullptr);
    res.set_header("Set-Cookie", accounts.ExpiredCookie());
    SendJson(res, 200, {{"logged_out", ended}});
  });
  s.Get("/api/v1/auth/me", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    json body{{"user",
               {{"id", who->user_id},
                {"username", who->username},
                {"role", who->admin ? "ADMIN" : "USER"},
                {"permitted_group_ids", who->group_ids}}},
              {"via", who->via}};
    if (who->via == "session") body["csrf_token"] = who->csrf_token;
    SendJson(res, 200, body);
  });

  // --- users (admins; any user may change their own password) -----------------------------------------
  auto send_user_change = [&audit](const Principal& who, const UserChange& c, const char* action,
                                   int success_status, httplib::Response& res) {
    switch (c.outcome) {
      case Outcome::kNotFound:
        return SendError(res, 404, "user not found");
      case Outcome::kInvalid:
        return SendError(res, 400, "the user is not valid", c.errors);
      case Outcome::kConflict:
        return SendError(res, 409, c.why);
      case Outcome::kOk:
        break;
    }
    const int id = c.after ? c.after->id : c.before->id;
    audit.Record(who, action, "user", std::to_string(id), c.before ? ToJson(*c.before) : json(nullptr),
                 c.after ? ToJson(*c.after) : json(nullptr));
    if (c.after) return SendJson(res, success_status, ToJson(*c.after));
    SendJson(res, success_status, {{"deleted", id}});
  };
  s.Get("/api/v1/users", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    json items = json::array();
    for (const auto& u : accounts.ListUsers())
      items.push_back(ToJson(u));
    SendJson(res, 200, {{"items", items}});
  });
  s.Post("/api/v1/users", [&, send_user_change](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    send_user_change(*who, accounts.CreateUser(*body), "user.create", 201, res);
  });
  s.Get("/api/v1/users/{id}", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto id = ParseId<int>(req.matches[1]);
    const auto u = id ? accounts.GetUser(*id) : std::nullopt;
    if (!u) return SendError(res, 404, fmt::format("user '{}' not found", Shorten(req.matches[1])));
    SendJson(res, 200, ToJson(*u));
  });
  s.Put("/api/v1/users/{id}", [&, send_user_change](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, fmt::format("user '{}' not found", Shorten(req.matches[1])));
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    send_user_change(*who, accounts.UpdateUser(*id, *body, who->user_id), "user.update", 200, res);
  });
  s.Delete("/api/v1/users/{id}", [&, send_user_change](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, fmt::format("user '{}' not found", Shorten(req.matches[1])));
    send_user_change(*who, accounts.DeleteUser(*id, who->user_id), "user.delete", 200, res);
  });
  s.Post("/api/v1/users/me/password", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    const auto c = accounts.ChangeOwnPassword(who->user_id, *body, req);
    if (c.throttled) return SendRetryAfter(res, c.retry_after, "too many wrong passwords");
    if (c.outcome == Outcome::kNotFound) return SendError(res, 404, "user not found");
    if (c.outcome != Outcome::kOk) return SendError(res, 400, "the password was not changed", c.errors);
    audit.Record(*who, "user.password", "user", std::to_string(who->user_id), nullptr, nullptr);
    SendJson(res, 200, {{"changed", true}});
  });

  // --- API tokens (own; admins may list and delete all) ------------------------------------------------
  s.Get("/api/v1/tokens", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto all = req.get_param_value("all");
    if (!all.empty() && all != "true" && all != "false") {
      return SendError(res, 400, "invalid query",
                       {{"all", fmt::format("'{}' is not valid: use true or false", Shorten(all))}});
    }
    if (all == "true" && !RequireAdmin(*who, res)) return;
    json items = json::array();
    for (const auto& t : accounts.ListTokens(all == "true" ? std::nullopt : std::optional(who->user_id)))
      items.push_back(ToJson(t));
    SendJson(res, 200, {{"items", items}});
  });
  s.Post("/api/v1/tokens", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = accounts.CreateToken(who->user_id, *body);
    if (auto* errors = std::get_if<FieldErrors>(&v))
      return SendError(res, 400, "the token is not valid", *errors);
    const auto& [token, secret] = std::get<0>(v);
    audit.Record(*who, "token.create", "token", std::to_string(token.id), nullptr, ToJson(token));
    auto body_out = ToJson(token);
    body_out["token"] = secret;  // shown once
    SendJson(res, 201, body_out);
  });
  s.Delete("/api/v1/tokens/{id}", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto id = ParseId<int>(req.matches[1]);
    const auto deleted =
        id ? accounts.DeleteToken(*id, who->admin ? std::nullopt : std::optional(who->user_id))
           : std::nullopt;
    if (!deleted) return SendError(res, 404, fmt::format("token '{}' not found", Shorten(req.matches[1])));
    audit.Record(*who, "token.delete", "token", std::to_string(deleted->id), ToJson(*deleted), nullptr);
    SendJson(res, 200, {{"deleted", deleted->id}});
  });

  // --- audit (admins) --------------------------------------------------------------------------------------
  s.Get("/api/v1/audit", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who || !RequireAdmin(*who, res)) return;
    FieldErrors errors;
    AuditQuery q;
    q.offset = QueryInt<int>(req, "offset", 0, INT32_MAX, errors).value_or(0);
    q.limit = QueryInt<int>(req, "limit", 1, 1000, errors).value_or(50);
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    const auto text = [&req](const char* name) -> std::optional<std::string> {
      if (!req.has_param(name) || req.get_param_value(name).empty()) return std::nullopt;
      return req.get_param_value(name).substr(0, 200);
    };
    q.entity = text("entity");
    q.entity_id = text("entity_id");
    q.action = text("action");
    q.username = text("username");
    const auto page = audit.List(q);
    SendPage(res, page);
  });

  // --- dashboard -----------------------------------------------------------------------------------------
  s.Get("/api/v1/dashboard", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    FieldErrors errors;
    const int days = QueryInt<int>(req, "days", 1, 90, errors).value_or(7);
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    const auto counts =
        store.Dashboard(days, who->admin ? std::nullopt : std::optional<std::vector<int>>(who->group_ids));
    // Executors online: registered addresses of the groups the caller may see (admins: every registration).
    std::set<std::string> online;
    const auto registry = catalog.Registry();
    if (who->admin) {
      for (const auto& [app, addresses] : registry)
        online.insert(addresses.begin(), addresses.end());
    } else {
      for (const auto& g : repo.ListGroups()) {
        if (!who->CanAccessGroup(g.id)) continue;
        if (auto it = registry.find(g.app_name); it != registry.end())
          online.insert(it->second.begin(), it->second.end());
      }
    }
    json per_day = json::array();
    for (const auto& d : counts.days) {
      per_day.push_back(
          {{"day", d.day}, {"running", d.running}, {"success", d.success}, {"failed", d.failed}});
    }
    SendJson(res, 200,
             {{"totals",
               {{"jobs", counts.jobs},
                {"enabled_jobs", counts.enabled_jobs},
                {"fires_today", counts.fires_today},
                {"executors_online", online.size()}}},
              {"days", per_day}});
  });

  // --- schedule preview --------------------------------------------------------------------------------
  s.Post("/api/v1/schedules/preview", [&](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    FieldErrors errors;
    const auto preview = ReadPreviewBody(*body, errors);
    if (!errors.empty()) return SendError(res, 400, "the preview request is not valid", errors);
    const auto fires = PreviewFires(preview, clock.NowMs(), errors);
    if (!fires) return SendError(res, 400, "the schedule is not valid", errors);
    SendJson(res, 200, *fires);
  });

  // --- jobs: copy and glue versions ----------------------------------------------------------------------
  s.Post("/api/v1/jobs/{id}/copy", [&, visible_job](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto job = visible_job(*who, req.matches[1], res);
    if (!job) return;
    json body = ToJson(*job);
    for (const char* owned : {"id", "glue_updated_ms", "next_fire_ms", "last_fire_ms", "stop_reason",
                              "created_ms", "updated_ms"}) {
      body.erase(owned);
    }
    constexpr std::string_view kSuffix = " (copy)";
    body["description"] = Utf8Prefix(job->description, 255 - kSuffix.size()) + std::string(kSuffix);
    body["enabled"] = false;
    auto v = repo.CreateJob(body);
    if (auto* errors = std::get_if<FieldErrors>(&v))
      return SendError(res, 409, "the job cannot be copied", *errors);
    const auto& copy = std::get<Job>(v);
    auto after = ToJson(copy);
    after["copied_from"] = job->id;
    audit.Record(*who, "job.copy", "job", std::to_string(copy.id), nullptr, after);
    SendJson(res, 201, ToJson(copy));
  });
  s.Get("/api/v1/jobs/{id}/glue", [&, visible_job](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto job = visible_job(*who, req.matches[1], res);
    if (!job) return;
    json items = json::array();
    for (const auto& g : store.GlueHistory(job->id)) {
      items.push_back({{"id", g.id},
                       {"glue_type", g.glue_type},
                       {"glue_source", g.glue_source},
                       {"glue_remark", g.glue_remark},
                       {"glue_updated_ms", g.glue_updated_ms},
                       {"created_ms", g.created_ms}});
    }
    SendJson(res, 200, {{"items", items}});
  });

  // --- logs: executor output, kill, clear -------------------------------------------------------------
  // XXL-JOB logDetailCat (xxl-job-protocol.md §2): only to the address recorded on the fire, which the
  // admin chose itself. The content is plain text (the console shows it as text; nothing is escaped here).
  s.Get("/api/v1/logs/{id}/output", [&, visible_log, executor_token](const httplib::Request& req,
                                                                     httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    FieldErrors errors;
    const int from_line = QueryInt<int>(req, "from_line", 1, INT32_MAX, errors).value_or(1);
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    const auto log = visible_log(*who, req.matches[1], res);
    if (!log) return;
    json out{{"from_line", from_line}, {"to_line", 0}, {"content", ""}, {"end", false}};
    if (log->trigger_code != xxljob::kCodeSuccess || log->executor_address.empty()) {
      // Never sent, or refused: no executor has output. Pending fires may still be sent.
      out["end"] = log->status != "PENDING";
      return SendJson(res, 200, out);
    }
    const auto env = executors.Log(
        log->executor_address, executor_token(log->group_id),
        xxljob::LogParam{.log_date_tim = log->trigger_ms, .log_id = log->id, .from_line_num = from_line});
    std::string why;
    const auto result = env.ok() ? xxljob::ParseLogResult(env.content, &why) : std::nullopt;
    if (!result) {
      return SendError(res, 502,
                       fmt::format("the executor {} did not return the output: {}", log->executor_address,
                                   env.ok() ? why : env.msg.value_or("no message")));
    }
    out["to_line"] = result->to_line_num;
    out["content"] = result->log_content;
    out["end"] = result->is_end || (from_line > result->to_line_num && log->handle_code > 0);
    SendJson(res, 200, out);
  });
  s.Post("/api/v1/logs/{id}/kill", [&, visible_log, executor_token](const httplib::Request& req,
                                                                    httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto log = visible_log(*who, req.matches[1], res);
    if (!log) return;
    if (log->trigger_code != xxljob::kCodeSuccess) {
      return SendError(res, 409,
                       fmt::format("fire {} was not accepted by an executor (trigger_code {}): nothing runs",
                                   log->id, log->trigger_code));
    }
    if (log->handle_code != 0) {
      return SendError(
          res, 409, fmt::format("fire {} has finished already (handle_code {})", log->id, log->handle_code));
    }
    const auto env = executors.Kill(log->executor_address, executor_token(log->group_id), log->job_id);
    if (!env.ok()) {
      return SendError(res, 502,
                       fmt::format("the executor {} did not kill job {}: {}", log->executor_address,
                                   log->job_id, env.msg.value_or("no message")));
    }
    const std::string msg = env.msg && !env.msg->empty() ? *env.msg : fmt::format("by {}", who->username);
    if (!store.MarkKilled(log->id, msg)) {
      return SendError(res, 409, fmt::format("fire {} finished while it was being killed", log->id));
    }
    const auto after = repo.GetLog(log->id);
    audit.Record(*who, "log.kill", "log", std::to_string(log->id), ToJson(*log),
                 after ? ToJson(*after) : json(nullptr));
    SendJson(res, 200, after ? ToJson(*after) : json::object());
  });
  s.Post("/api/v1/logs/clear", [&, visible_job](const httplib::Request& req, httplib::Response& res) {
    const auto who = Authenticate(auth, req, res);
    if (!who) return;
    const auto body = ParseBody(req, res, false);
    if (!body) return;
    FieldErrors errors;
    LogClear c = ReadLogClearBody(*body, errors);
    if (!errors.empty()) return SendError(res, 400, "the clear request is not valid", errors);
    if (c.job_id && !visible_job(*who, std::to_string(*c.job_id), res)) return;
    if (c.group_id && (!who->CanAccessGroup(*c.group_id) || !repo.GetGroup(*c.group_id))) {
      return SendError(res, 404, fmt::format("group {} not found", *c.group_id));
    }
    if (!who->admin) c.group_ids = who->group_ids;
    const auto deleted = store.ClearLogs(c);
    auto after = *body;
    after["deleted"] = deleted;
    audit.Record(*who, "log.clear", "log",
                 c.job_id     ? fmt::format("job:{}", *c.job_id)
                 : c.group_id ? fmt::format("group:{}", *c.group_id)
                              : std::string("all"),
                 nullptr, after);
    SendJson(res, 200, {{"deleted", deleted}});
  });

  // --- the OpenAPI document (no credentials: it describes the API, it holds no data) ----------------------
  s.Get("/api/v1/openapi.json", [&console](const httplib::Request&, httplib::Response& res) {
    const auto doc = WebAsset(console.web_dir, "openapi.json");
    if (!doc) return SendError(res, 404, "the OpenAPI document is missing from this build");
    res.set_content(*doc, "application/json");
  });
}

}  // namespace cronwheel::admin
