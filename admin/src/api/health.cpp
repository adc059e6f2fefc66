// GET /api/v1/health and GET /api/v1/openapi.json: the two routes that need no credentials. Health answers
// anyone (load balancers, docker-compose and the demo script poll it) with the status alone:
// {"status":"ok"}, or 503 {"status":"unavailable"} when the database does not answer. The details (this
// admin's node id and clock, the scheduler's and the trigger pools' statistics, the database's error, which
// names its host and port) go only to a caller whose credentials (a session cookie or an API token) are an
// ADMIN's; any other credentials, or bad ones, get the status as anyone would. The OpenAPI document
// describes the API and holds no data.
#include "api/routes.hpp"

namespace cronwheel::admin::api {
namespace {

// Whether the request carries an ADMIN's credentials. Never an error: without them, or with a database that
// cannot say, the caller is anyone.
bool FromAnAdmin(const RouteContext& ctx, const net::Request& req) {
  try {
    const auto who = ctx.services.authenticator.Authenticate(req);
    return who && who->admin;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void RegisterHealthRoutes(Routes& s, const RouteContext& ctx) {
  s.PublicGet("/api/v1/health", [&ctx](const net::Request& req, net::Response& res) {
    const bool details = FromAnAdmin(ctx, req);
    json body{{"status", "ok"}};
    if (details) {
      body["node_id"] = ctx.settings.node_id;
      body["now_ms"] = ctx.clock.NowMs();
    }
    try {
      ctx.services.groups.ListGroups();  // the database answers
      if (details && ctx.services.health_details) body.update(ctx.services.health_details());
      SendJson(res, 200, body);
    } catch (const std::exception& e) {
      body["status"] = "unavailable";
      if (details) body["error"] = e.what();
      SendJson(res, 503, body);
    }
  });
  if (ctx.services.console == nullptr) return;
  s.PublicGet("/api/v1/openapi.json", [&ctx](const net::Request&, net::Response& res) {
    const auto doc = WebAsset(ctx.services.console->web_dir, "openapi.json");
    if (!doc) return SendError(res, 404, "the OpenAPI document is missing from this build");
    res.set_content(*doc, "application/json");
  });
}

}  // namespace cronwheel::admin::api
