#pragma once
// What every REST route file of the admin shares (private to admin/src/api):
//  * Routes registers /api/v1 routes by their OpenAPI path template ("/api/v1/jobs/{id}/start"), turned
//    into the regular expression the server matches ("{name}" -> one path segment) and recorded, so the
//    routes served and the routes documented can be compared by a test. An authenticated route gets its
//    caller (Access::kUser) or refuses anyone but an admin (Access::kAdmin): the authentication step is
//    written once, here, and runs as the route's admission step, before the server reads a byte of the
//    body (cronwheel/net/http_server.hpp): a caller without credentials costs a head, never a body.
//  * Each authenticated route needs a token scope (admin/model/accounts.hpp, TokenScope): by default GET
//    needs read, an Action operate, POST, PUT and DELETE write, and an Access::kAdmin route admin; a route
//    whose work is of another class says so when it registers (a copy is a write, a schedule's preview a
//    read). A token whose scope is less is refused with 403 at admission, before the body is read, naming
//    both scopes. The scope is recorded with the route (RouteInfo) and documented in the OpenAPI document
//    as each operation's x-cronwheel-scope.
//  * A POST that carries no body at all (neither Content-Length nor Transfer-Encoding; RFC 9112 §6.3: its
//    body is empty) is served as an empty body on a route whose body is optional (registered with Action:
//    start, stop, trigger, ..., the way `curl -X POST` sends them), and refused with 411 on one that needs
//    a body, since a body sent without a length cannot be read (its bytes would be taken for the next
//    request, so that answer closes the connection).
//  * RouteContext: the services, the settings, the clock, audit entries and the visibility rules.
//  * JSON answers: SendJson, SendError (an Error's status and body), SendPage.
#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "admin/api/server.hpp"
#include "admin/model/fire.hpp"
#include "admin/model/result.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/net/http_server.hpp"

namespace cronwheel::admin::api {

using nlohmann::json;

void SendJson(net::Response& res, int status, const json& body);
// The Error's HTTP status and {"error", "code", "errors"}; Retry-After for kThrottled.
void SendError(net::Response& res, const Error& error);
// {"error", "code", "errors"} of an Error, as SendError sends it (with HttpStatus(error.kind)).
json ErrorBody(const Error& error);
// An ErrorKind's HTTP status: 400, 401, 403, 404, 409, 429, 503.
int HttpStatus(ErrorKind kind);
// [{"field", "message", "code", "params"}] ("code" and "params" only where a code is set).
json FieldErrorsJson(const FieldErrors& errors);
// For answers that are not an Error of the admin's own (a framing problem, an executor that failed).
void SendError(net::Response& res, int status, const std::string& message);
void SendEnvelope(net::Response& res, const xxljob::Envelope& e);

// A page of items as {"total": n, "items": [ToJson(item)...]}.
template <class Page>
void SendPage(net::Response& res, const Page& page) {
  json items = json::array();
  for (const auto& item : page.items)
    items.push_back(ToJson(item));
  SendJson(res, 200, {{"total", page.total}, {"items", items}});
}

// Answers `r`'s error and returns true when it failed.
template <class T>
bool Failed(net::Response& res, const Result<T>& r) {
  if (r) return false;
  SendError(res, r.error());
  return true;
}

// The request body as JSON (any JSON value; each route checks its shape): a syntax error, a number beyond a
// double (1e400) or nesting deeper than cronwheel::kMaxJsonDepth is kInvalid. An empty body is {} when
// `allow_empty`.
Result<json> ParseBody(const net::Request& req, bool allow_empty);

// A path id: decimal digits only, positive, within the column's range.
std::optional<std::int64_t> ParseId(const std::string& text, std::int64_t max = INT32_MAX);

// Optional integer query parameter; adds an error to `errors` when present but invalid.
std::optional<std::int64_t> QueryInt(const net::Request& req, const char* name, std::int64_t min,
                                     std::int64_t max, FieldErrors& errors);

// `text` cut for an error message (40 bytes, on a UTF-8 boundary).
std::string Shorten(const std::string& text);

// 403 when `who` (a token) may not do what `needed` covers: `what` names the request ("POST
// /api/v1/jobs/bulk with action DELETE"). Routes check their own scope at admission; a route whose work
// depends on its body (the bulk route) checks the rest with this. True when it answered.
bool RefusedByScope(const Principal& who, TokenScope needed, std::string_view what, net::Response& res);

// 403 (code "role") when `who` sees `group_id` but its role there is less than `needed`; nullopt when it
// may, or when it does not see the group at all (the caller answers 404 then: what it may not see is not
// told to exist). A route's handler is checked against RoleFor(who.route_scope) by the Visible* helpers.
std::optional<Error> RoleRefusal(const Principal& who, int group_id, GroupRole needed);
// Whether the route being served may act on an object of `group_id` (nullopt: there is no such object):
// else answers 404 with `not_found` (no object, or one in a group the caller does not see) or RoleRefusal's
// 403 for RoleFor(who.route_scope), and returns false.
bool Admitted(const Principal& who, std::optional<int> group_id, const std::string& not_found,
              net::Response& res);

enum class Access { kUser, kAdmin };
using Handler = std::function<void(const Principal& who, const net::Request& req, net::Response& res)>;

class Routes {
 public:
  Routes(net::HttpServer& server, Authenticator& auth, std::vector<RouteInfo>* record)
      : server_(server), auth_(auth), record_(record) {}

  // `scope`: the token scope the route needs, when not its method's default (see above).
  void Get(const std::string& path, Handler h, Access access = Access::kUser,
           std::optional<TokenScope> scope = std::nullopt);
  void Post(const std::string& path, Handler h, Access access = Access::kUser,
            std::optional<TokenScope> scope = std::nullopt);
  // A POST whose body is optional: an action such as start, stop or trigger.
  void Action(const std::string& path, Handler h, Access access = Access::kUser,
              std::optional<TokenScope> scope = std::nullopt);
  void Put(const std::string& path, Handler h, Access access = Access::kUser,
           std::optional<TokenScope> scope = std::nullopt);
  void Delete(const std::string& path, Handler h, Access access = Access::kUser,
              std::optional<TokenScope> scope = std::nullopt);
  // A route that needs no caller (health, login, the OpenAPI document). A public POST takes a body of at
  // most kPublicBodyMaxBytes: it is read from anyone.
  void PublicGet(const std::string& path, net::HttpServer::Handler h);
  void PublicPost(const std::string& path, net::HttpServer::Handler h);

  static constexpr std::size_t kPublicBodyMaxBytes = std::size_t{64} * 1024;

  // "/api/v1/jobs/{id}" -> "/api/v1/jobs/([^/]+)"; '.' is literal.
  static std::string Pattern(const std::string& path);

 private:
  void Add(const char* method, const std::string& path, net::HttpServer::Handler h,
           net::HttpServer::RouteOptions options, std::string scope);
  void AddAuthed(const char* method, const std::string& path, Handler h, Access access, bool body_required,
                 TokenScope scope);

  net::HttpServer& server_;
  Authenticator& auth_;
  std::vector<RouteInfo>* record_;
};

struct RouteContext {
  ApiServer::Services& services;
  const ApiServer::Settings& settings;
  ringwheel::Clock& clock;

  // Records who changed what, when the console's parts are there (never a password or a token).
  void Audit(const Principal& who, std::string_view action, std::string_view entity, const std::string& id,
             const json& before, const json& after) const;
  // The job / fire / group if it exists, the caller sees its group and its role there is what the route
  // needs (RoleFor(who.route_scope)); otherwise answers 404 (not seen) or 403 (RoleRefusal) and returns
  // nullopt.
  std::optional<Job> VisibleJob(const Principal& who, const std::string& text, net::Response& res) const;
  // Job `id` if it exists and the caller sees its group, whatever its role there (no answer sent): for a
  // route that handles many jobs and answers each itself (it checks the role with RoleRefusal).
  std::optional<Job> JobSeenBy(const Principal& who, int id) const;
  // A fire that shows no trigger result is read again after WriteTriggerResults.
  std::optional<JobLog> VisibleLog(const Principal& who, const std::string& text, net::Response& res) const;
  std::optional<JobGroup> VisibleGroup(const Principal& who, const std::string& text,
                                       net::Response& res) const;
  // Writes the trigger results the admin has not written yet, those kept back for callbacks included
  // (Services::write_trigger_results), so that what is read next says where each fire went.
  void WriteTriggerResults() const;
  // The fires of job `job_id` that executors hold for coming instants (JobService::SentAhead), after
  // WriteTriggerResults.
  std::vector<SentAheadFire> SentAhead(int job_id) const;
  // The token a group's executors expect: the group's own, else the global one.
  std::string ExecutorToken(int group_id) const;
  // Ahead-of-time dispatch: asks the executors holding `fires` (of a job of group `group_id`, sent ahead of
  // their instants) to drop them, and records the ones they dropped as skipped with `why` (a fire of a
  // deleted job has no row left to record). Best effort: a fire an executor does not drop (already started,
  // or the executor did not answer) runs as sent. Needs the console's executor client; nothing without it.
  void WithdrawSentAhead(const std::vector<SentAheadFire>& fires, int group_id, std::string_view why) const;
  // After a stop, change or delete of job `job_id` (group `group_id`) that withdrew fires an admin had
  // claimed (JobService::WithdrawnClaims): asks each executor of the group that holds fires ahead to drop
  // them. Another admin may have sent one ahead, its acceptance held in that admin's memory, so nothing says
  // which executor holds it; an executor that does not hold it drops nothing. Best effort, as
  // WithdrawSentAhead.
  void CancelWithdrawnClaims(int job_id, int group_id) const;
  // Ahead-of-time dispatch: sends `fires` (of job `job_id`, sent ahead of their instants) again to the
  // executors holding them, with the job as it is now, to replace the held fires (replaceHeld); their rows
  // say `why` ("the job's parameter changed") and what each executor answered. A fire that started already
  // is not replaced and runs as sent (the answer says so). Needs Services::send_again; nothing without it.
  void ReplaceSentAhead(const std::vector<SentAheadFire>& fires, int job_id, std::string_view why) const;
  // The group's online or configured executor address that `typed` names (compared normalised), as the
  // admin holds it: requests go there, never to what a caller typed. nullopt when none matches.
  std::optional<std::string> GroupAddress(const JobGroup& group, const std::string& typed) const;
};

// Registration of each resource's routes (one file each).
void RegisterHealthRoutes(Routes& routes, const RouteContext& ctx);
void RegisterGroupRoutes(Routes& routes, const RouteContext& ctx);
void RegisterAlertChannelRoutes(Routes& routes, const RouteContext& ctx);
void RegisterCalendarRoutes(Routes& routes, const RouteContext& ctx);
void RegisterWorkflowRoutes(Routes& routes, const RouteContext& ctx);
void RegisterJobRoutes(Routes& routes, const RouteContext& ctx);
void RegisterLogRoutes(Routes& routes, const RouteContext& ctx);
void RegisterSessionRoutes(Routes& routes, const RouteContext& ctx);
void RegisterSsoRoutes(Routes& routes, const RouteContext& ctx);
void RegisterUserRoutes(Routes& routes, const RouteContext& ctx);
void RegisterTokenRoutes(Routes& routes, const RouteContext& ctx);
void RegisterAuditRoutes(Routes& routes, const RouteContext& ctx);
void RegisterDashboardRoutes(Routes& routes, const RouteContext& ctx);
void RegisterScheduleRoutes(Routes& routes, const RouteContext& ctx);
// The XXL-JOB executor API (/api/registry, /api/registryRemove, /api/callback) under `prefix`.
void RegisterExecutorRoutes(net::HttpServer& server, const RouteContext& ctx, const std::string& prefix);
// The pages of web/ at "/" (GET only), with the security headers of every response.
void RegisterWebAssets(net::HttpServer& server, const std::string& web_dir);
// The bytes of web/<path> (from `web_dir` when set, else the copy compiled in); nullopt when there is no
// such file or the path is not a plain relative one ([A-Za-z0-9._-] segments, no "..").
std::optional<std::string> WebAsset(const std::string& web_dir, const std::string& path);

}  // namespace cronwheel::admin::api
