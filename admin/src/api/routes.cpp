#include "api/routes.hpp"

#include <fmt/format.h>

#include <charconv>

#include "admin/api/json_views.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::api {

void SendJson(net::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpLossy(body), "application/json");
}

void SendError(net::Response& res, const Error& error) {
  json body{{"error", error.message}, {"code", ToString(error.kind)}};
  if (!error.fields.empty()) body["errors"] = ToJson(error.fields);
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
  std::string error;
  auto body = ParseJson(req.body, &error);
  if (!body) return Error::Invalid(error);
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

httplib::Server::Handler Routes::Authed(Handler h, Access access) {
  return [&auth = auth_, h = std::move(h), access](const net::Request& req, net::Response& res) {
    const auto who = auth.Authenticate(req);
    if (Failed(res, who)) return;
    if (access == Access::kAdmin && !who->admin)
      return SendError(res, Error::Forbidden("this needs the ADMIN role"));
    h(*who, req, res);
  };
}

void Routes::Add(const char* method, const std::string& path, httplib::Server::Handler h, Body body) {
  const auto pattern = Pattern(path);
  const std::string m = method;
  if (m == "GET") {
    server_.Get(pattern, std::move(h));
  } else if (m == "POST") {
    posts_.push_back({std::regex(pattern), h, body});
    server_.Post(pattern, std::move(h));
  } else if (m == "PUT") {
    server_.Put(pattern, std::move(h));
  } else {
    server_.Delete(pattern, std::move(h));
  }
  if (record_ != nullptr) record_->push_back({m, path});
}

void Routes::Get(const std::string& path, Handler h, Access access) {
  Add("GET", path, Authed(std::move(h), access));
}
void Routes::Post(const std::string& path, Handler h, Access access) {
  Add("POST", path, Authed(std::move(h), access));
}
void Routes::Action(const std::string& path, Handler h, Access access) {
  Add("POST", path, Authed(std::move(h), access), Body::kOptional);
}
void Routes::Put(const std::string& path, Handler h, Access access) {
  Add("PUT", path, Authed(std::move(h), access));
}
void Routes::Delete(const std::string& path, Handler h, Access access) {
  Add("DELETE", path, Authed(std::move(h), access));
}
void Routes::PublicGet(const std::string& path, httplib::Server::Handler h) {
  Add("GET", path, std::move(h));
}
void Routes::PublicPost(const std::string& path, httplib::Server::Handler h) {
  Add("POST", path, std::move(h));
}

bool Routes::ServeBodilessPost(const net::Request& req, net::Response& res) const {
  for (const auto& route : posts_) {
    net::Request copy = req;  // matches point into the copy's path
    if (std::regex_match(copy.path, copy.matches, route.pattern)) {
      if (route.body == Body::kRequired) {
        // Any body bytes that follow would be read as the next request: answer, and close.
        res.set_header("Connection", "close");
        SendError(
            res, 411,
            fmt::format("POST {} needs a Content-Length header (or Transfer-Encoding: chunked): its JSON "
                        "body cannot be read without one",
                        req.path.substr(0, 200)));
      } else {
        route.handler(copy, res);
      }
      return true;
    }
  }
  return false;
}

// --- RouteContext
// --------------------------------------------------------------------------------------------

void RouteContext::Audit(const Principal& who, std::string_view action, std::string_view entity,
                         const std::string& id, const json& before, const json& after) const {
  if (services.console != nullptr) services.console->audit.Record(who, action, entity, id, before, after);
}

std::optional<Job> RouteContext::VisibleJob(const Principal& who, const std::string& text,
                                            net::Response& res) const {
  const auto id = ParseId(text);
  auto job = id ? services.jobs.GetJob(static_cast<int>(*id)) : std::nullopt;
  if (!job || !who.CanAccessGroup(job->group_id)) {
    SendError(res, Error::NotFound(fmt::format("job '{}' not found", Shorten(text))));
    return std::nullopt;
  }
  return job;
}

std::optional<JobLog> RouteContext::VisibleLog(const Principal& who, const std::string& text,
                                               net::Response& res) const {
  const auto id = ParseId(text, INT64_MAX);
  auto log = id ? services.logs.GetLog(*id) : std::nullopt;
  if (!log || !who.CanAccessGroup(log->group_id)) {
    SendError(res, Error::NotFound(fmt::format("log '{}' not found", Shorten(text))));
    return std::nullopt;
  }
  return log;
}

std::optional<JobGroup> RouteContext::VisibleGroup(const Principal& who, const std::string& text,
                                                   net::Response& res) const {
  const auto id = ParseId(text);
  auto group = id && who.CanAccessGroup(static_cast<int>(*id))
                   ? services.groups.GetGroup(static_cast<int>(*id))
                   : std::nullopt;
  if (!group) {
    SendError(res, Error::NotFound(fmt::format("group '{}' not found", Shorten(text))));
    return std::nullopt;
  }
  return group;
}

std::string RouteContext::ExecutorToken(int group_id) const {
  const auto group = services.catalog.GetGroup(group_id);
  return group && group->access_token ? *group->access_token : settings.access_token;
}

}  // namespace cronwheel::admin::api
