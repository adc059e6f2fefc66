// GET /api/v1/health and GET /api/v1/openapi.json: the two routes that need no credentials. Health reveals
// no data (load balancers and the demo script poll it); the OpenAPI document describes the API and holds
// no data.
#include "api/routes.hpp"

namespace cronwheel::admin::api {

void RegisterHealthRoutes(Routes& s, const RouteContext& ctx) {
  s.PublicGet("/api/v1/health", [&ctx](const net::Request&, net::Response& res) {
    json body{{"status", "ok"}, {"node_id", ctx.settings.node_id}, {"now_ms", ctx.clock.NowMs()}};
    try {
      ctx.services.groups.ListGroups();  // the database answers
      if (ctx.services.health_details) body.update(ctx.services.health_details());
      SendJson(res, 200, body);
    } catch (const std::exception& e) {
      body["status"] = "unavailable";
      body["error"] = e.what();
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
