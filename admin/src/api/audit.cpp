// GET /api/v1/audit: who changed what (admins).
#include "admin/api/json_views.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

void RegisterAuditRoutes(Routes& s, const RouteContext& ctx) {
  auto& audit = ctx.services.console->audit;
  s.Get(
      "/api/v1/audit",
      [&](const Principal&, const net::Request& req, net::Response& res) {
        FieldErrors errors;
        AuditQuery q;
        q.offset = static_cast<int>(QueryInt(req, "offset", 0, INT32_MAX, errors).value_or(0));
        q.limit = static_cast<int>(QueryInt(req, "limit", 1, 1000, errors).value_or(50));
        if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
        const auto text = [&req](const char* name) -> std::optional<std::string> {
          if (!req.has_param(name) || req.get_param_value(name).empty()) return std::nullopt;
          return req.get_param_value(name).substr(0, 200);
        };
        q.entity = text("entity");
        q.entity_id = text("entity_id");
        q.action = text("action");
        q.username = text("username");
        SendPage(res, audit.List(q));
      },
      Access::kAdmin);
}

}  // namespace cronwheel::admin::api
