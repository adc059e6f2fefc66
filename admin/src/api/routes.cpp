#include "api/routes.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "admin/api/json_views.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::api {

void SendJson(net::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpLossy(body), "application/json");
}

int HttpStatus(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalid:
      return 400;
    case ErrorKind::kUnauthenticated:
      return 401;
    case ErrorKind::kForbidden:
      return 403;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kConflict:
      return 409;
    case ErrorKind::kThrottled:
      return 429;
    case ErrorKind::kUnavailable:
      return 503;
  }
  return 400;
}

json FieldErrorsJson(const FieldErrors& errors) {
  auto arr = json::array();
  for (const auto& e : errors) {
    json j{{"field", e.field}, {"message", e.message}};
    if (!e.code.empty()) {
      j["code"] = e.code;
      j["params"] = e.params;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

json ErrorBody(const Error& error) {
  json body{{"error", error.message}, {"code", ToString(error.kind)}};
  if (!error.fields.empty()) body["errors"] = FieldErrorsJson(error.fields);
  return body;
}

void SendError(net::Response& res, const Error& error) {
  json body = ErrorBody(error);
  if (error.kind == ErrorKind::kThrottled) {
    const auto seconds = std::max<std::int64_t>(1, (error.retry_after.count() + 999) / 1000);
    res.set_header("Retry-After", std::to_string(seconds));
    body["error"] = fmt::format("{}; try again in {} s", error.message, seconds);
  }
  SendJson(res, HttpStatus(error.kind), body);
}

void SendError(net::Response& res, int status, const std::string& message) {
  SendJson(res, status, {{"error", message}});
}

void SendEnvelope(net::Response& res, const xxljob::Envelope& e) {
  res.status = 200;
  res.set_content(xxljob::ToJson(e).dump(), "application/json;charset=UTF-8");
}

Result<json> ParseBody(const net::Request& req, bool allow_empty) {
  if (req.body.empty() && allow_empty) return json::object();
  auto body = ParseJson(req.body);
  if (!body.ok()) return Error::Invalid(std::string(body.status().message()));
  return *std::move(body);
}

std::optional<std::int64_t> ParseId(const std::string& text, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v <= 0 || v > max) return std::nullopt;
  return v;
}

std::optional<std::int64_t> QueryInt(const net::Request& req, const char* name, std::int64_t min,
                                     std::int64_t max, FieldErrors& errors) {
  if (!req.has_param(name)) return std::nullopt;
  const auto text = req.get_param_value(name);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < min || v > max) {
    errors.push_back(
        {name,
         fmt::format("'{}' is not valid: an integer from {} to {}", Utf8Prefix(text, 40), min, max),
         "range",
         {{"min", min}, {"max", max}}});
    return std::nullopt;
  }
  return v;
}

std::string Shorten(const std::string& text) {
  return std::string(Utf8Prefix(text, 40));
}

// --- Routes ------------------------------------------------------------------------------------------------

std::string Routes::Pattern(const std::string& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '{') {
      i = path.find('}', i);
      out += "([^/]+)";
    } else if (path[i] == '.') {
      out += "\\.";
    } else {
      out += path[i];
    }
  }
  return out;
}

bool RefusedByScope(const Principal& who, TokenScope needed, std::string_view what, net::Response& res) {
  if (who.Allows(needed)) return false;
  SendError(res,
            Error{.kind = ErrorKind::kForbidden,
                  .message = fmt::format("this API token's scope is '{}'; {} needs '{}' (read < operate < "
                                         "write < admin): use a token with that scope",
                                         ToString(who.scope), what, ToString(needed)),
                  .fields = {{.field = "",
                              .message = fmt::format("scope '{}' is less than '{}'", ToString(who.scope),
                                                     ToString(needed)),
                              .code = "scope",
                              .params = {{"scope", ToString(who.scope)}, {"needed", ToString(needed)}}}}});
  return true;
}

void Routes::Add(const char* method, const std::string& path, net::HttpServer::Handler h,
                 net::HttpServer::RouteOptions options, std::string scope) {
  server_.Route(method, Pattern(path), std::move(h), std::move(options));
  if (record_ != nullptr) record_->push_back({method, path, std::move(scope)});
}

void Routes::AddAuthed(const char* method, const std::string& path, Handler h, Access access,
                       bool body_required, TokenScope scope) {
  if (access == Access::kAdmin) scope = TokenScope::kAdmin;
  // Authentication is the route's admission step: it runs once the head is read and before the body is.
  auto admit = [&auth = auth_, access, scope, what = fmt::format("{} {}", method, path)](net::Request& req,
                                                                                         net::Response& res) {
    auto who = auth.Authenticate(req);
    if (Failed(res, who)) return false;
    req.authenticated = true;  // a session or an API token: the connection counts as authenticated
    if (access == Access::kAdmin && !who->admin) {
      SendError(res, Error::Forbidden("this needs the ADMIN role"));
      return false;
    }
    if (RefusedByScope(*who, scope, what, res)) return false;
    who->route_scope = scope;
    req.admitted = *std::move(who);
    return true;
  };
  auto handler = [h = std::move(h)](const net::Request& req, net::Response& res) {
    h(std::any_cast<const Principal&>(req.admitted), req, res);
  };
  Add(method, path, std::move(handler), {.body_required = body_required, .admit = std::move(admit)},
      std::string(ToString(scope)));
}

void Routes::Get(const std::string& path, Handler h, Access access, std::optional<TokenScope> scope) {
  AddAuthed("GET", path, std::move(h), access, false, scope.value_or(TokenScope::kRead));
}
void Routes::Post(const std::string& path, Handler h, Access access, std::optional<TokenScope> scope) {
  AddAuthed("POST", path, std::move(h), access, true, scope.value_or(TokenScope::kWrite));
}
void Routes::Action(const std::string& path, Handler h, Access access, std::optional<TokenScope> scope) {
  AddAuthed("POST", path, std::move(h), access, false, scope.value_or(TokenScope::kOperate));
}
void Routes::Put(const std::string& path, Handler h, Access access, std::optional<TokenScope> scope) {
  AddAuthed("PUT", path, std::move(h), access, true, scope.value_or(TokenScope::kWrite));
}
void Routes::Delete(const std::string& path, Handler h, Access access, std::optional<TokenScope> scope) {
  AddAuthed("DELETE", path, std::move(h), access, false, scope.value_or(TokenScope::kWrite));
}
void Routes::PublicGet(const std::string& path, net::HttpServer::Handler h) {
  Add("GET", path, std::move(h), {}, "");
}
void Routes::PublicPost(const std::string& path, net::HttpServer::Handler h) {
  Add("POST", path, std::move(h), {.body_max_bytes = kPublicBodyMaxBytes, .body_required = true}, "");
}

// --- RouteContext
// --------------------------------------------------------------------------------------------

void RouteContext::Audit(const Principal& who, std::string_view action, std::string_view entity,
                         const std::string& id, const json& before, const json& after) const {
  if (services.console != nullptr) services.console->audit.Record(who, action, entity, id, before, after);
}

std::optional<Error> RoleRefusal(const Principal& who, int group_id, GroupRole needed) {
  const auto role = who.RoleIn(group_id);
  if (!role || *role >= needed) return std::nullopt;
  return Error{
      .kind = ErrorKind::kForbidden,
      .message = fmt::format("your role in job group {} is {}; this needs {} (VIEWER < OPERATOR < "
                             "DEVELOPER < ADMIN): ask an admin for that role",
                             group_id, ToString(*role), ToString(needed)),
      .fields = {{.field = "",
                  .message = fmt::format("role {} is less than {}", ToString(*role), ToString(needed)),
                  .code = "role",
                  .params = {{"role", ToString(needed)}, {"group_id", group_id}}}}};
}

bool Admitted(const Principal& who, std::optional<int> group_id, const std::string& not_found,
              net::Response& res) {
  if (!group_id || !who.SeesGroup(*group_id)) {
    SendError(res, Error::NotFound(not_found));
    return false;
  }
  if (const auto refused = RoleRefusal(who, *group_id, RoleFor(who.route_scope))) {
    SendError(res, *refused);
    return false;
  }
  return true;
}

std::optional<Job> RouteContext::VisibleJob(const Principal& who, const std::string& text,
                                            net::Response& res) const {
  const auto id = ParseId(text);
  auto job = id ? services.jobs.GetJob(static_cast<int>(*id)) : std::nullopt;
  if (!Admitted(who, job ? std::optional(job->group_id) : std::nullopt,
                fmt::format("job '{}' not found", Shorten(text)), res)) {
    return std::nullopt;
  }
  return job;
}

std::optional<Job> RouteContext::JobSeenBy(const Principal& who, int id) const {
  auto job = services.jobs.GetJob(id);
  if (job && !who.SeesGroup(job->group_id)) return std::nullopt;
  return job;
}

std::optional<JobLog> RouteContext::VisibleLog(const Principal& who, const std::string& text,
                                               net::Response& res) const {
  const auto id = ParseId(text, INT64_MAX);
  auto log = id ? services.logs.GetLog(*id) : std::nullopt;
  if (!Admitted(who, log ? std::optional(log->group_id) : std::nullopt,
                fmt::format("log '{}' not found", Shorten(text)), res)) {
    return std::nullopt;
  }
  // A fire without a trigger result may have one kept back for its callback: read it with it.
  if (log->trigger_code == 0 && log->handle_code == 0 && services.write_trigger_results) {
    services.write_trigger_results();
    if (auto again = services.logs.GetLog(log->id)) log = std::move(again);
  }
  return log;
}

void RouteContext::WriteTriggerResults() const {
  if (services.write_trigger_results) services.write_trigger_results();
}

std::vector<SentAheadFire> RouteContext::SentAhead(int job_id) const {
  WriteTriggerResults();
  return services.jobs.SentAhead(job_id);
}

std::optional<JobGroup> RouteContext::VisibleGroup(const Principal& who, const std::string& text,
                                                   net::Response& res) const {
  const auto id = ParseId(text);
  // A group the caller does not see is not read at all.
  auto group = id && who.SeesGroup(static_cast<int>(*id)) ? services.groups.GetGroup(static_cast<int>(*id))
                                                          : std::nullopt;
  if (!Admitted(who, group ? std::optional(group->id) : std::nullopt,
                fmt::format("group '{}' not found", Shorten(text)), res)) {
    return std::nullopt;
  }
  return group;
}

std::string RouteContext::ExecutorToken(int group_id) const {
  const auto group = services.catalog.GetGroup(group_id);
  return group && group->access_token ? *group->access_token : settings.access_token;
}

void RouteContext::ReplaceSentAhead(const std::vector<SentAheadFire>& fires, int job_id,
                                    std::string_view why) const {
  if (fires.empty() || !services.send_again) return;
  // The trigger reads the change now, not when the catalog hears of it.
  services.catalog.InvalidateJob(job_id);
  std::vector<Fire> again;
  again.reserve(fires.size());
  for (const auto& f : fires) {
    Fire fire;
    fire.log_id = f.log_id;
    fire.job_id = job_id;
    fire.scheduled_ms = f.scheduled_ms;
    fire.type = TriggerType::kCron;
    fire.address = f.address;
    fire.shard_index = f.shard_index;
    fire.shard_total = f.shard_total;
    fire.replaces_held = true;
    fire.trigger_notes =
        fmt::format("{} before its instant: sent again to {} to replace the fire it held\n", why, f.address);
    again.push_back(std::move(fire));
  }
  services.send_again(std::move(again));
}

std::optional<std::string> RouteContext::GroupAddress(const JobGroup& group, const std::string& typed) const {
  const auto online = services.catalog.Addresses(group);
  const auto it = std::find(online.begin(), online.end(), net::NormalizeAddress(typed));
  if (it == online.end()) return std::nullopt;
  return *it;
}

void RouteContext::CancelWithdrawnClaims(int job_id, int group_id) const {
  if (services.console == nullptr) return;
  const auto withdrawn = services.jobs.WithdrawnClaims(job_id);
  if (withdrawn.empty()) return;
  const auto group = services.catalog.GetGroup(group_id);
  if (!group) return;
  xxljob::CancelParam param;
  param.log_ids = withdrawn;
  const auto token = ExecutorToken(group_id);
  for (const auto& address : services.catalog.Addresses(*group)) {
    if (!services.catalog.RunAtClock(address)) continue;  // holds no fire ahead: nothing to drop
    const auto answer = services.console->executors.Cancel(address, token, param);
    if (!answer.ok()) {
      spdlog::warn("{} withdrawn fire(s) of job {} could not be cancelled at {} ({}): one it holds runs",
                   withdrawn.size(), job_id, address, answer.msg.value_or(""));
    }
  }
}

void RouteContext::WithdrawSentAhead(const std::vector<SentAheadFire>& fires, int group_id,
                                     std::string_view why) const {
  if (fires.empty() || services.console == nullptr) return;
  std::map<std::string, xxljob::CancelParam> by_address;
  for (const auto& f : fires)
    by_address[f.address].log_ids.push_back(f.log_id);
  const auto token = ExecutorToken(group_id);
  const auto note = fmt::format("withdrawn before its instant: {}; the executor dropped it", why);
  for (const auto& [address, param] : by_address) {
    const auto answer = services.console->executors.Cancel(address, token, param);
    std::vector<std::int64_t> dropped;
    if (answer.ok() && answer.content.is_object() && answer.content.contains("cancelled") &&
        answer.content["cancelled"].is_array()) {
      for (const auto& id : answer.content["cancelled"])
        if (id.is_number_integer()) dropped.push_back(id.get<std::int64_t>());
    } else {
      spdlog::warn("{} fire(s) sent ahead to {} could not be withdrawn ({}): they run as sent",
                   param.log_ids.size(), address, answer.msg.value_or(""));
    }
    services.jobs.MarkWithdrawnAhead(dropped, note);
  }
}

}  // namespace cronwheel::admin::api
