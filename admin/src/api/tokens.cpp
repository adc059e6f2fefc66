// /api/v1/tokens: API tokens (one's own; admins may list and delete all). A token expires after its
// expires_in_days and is revoked when its user's password changes (auth/accounts.hpp).
#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {

void RegisterTokenRoutes(Routes& s, const RouteContext& ctx) {
  auto& accounts = ctx.services.console->accounts;
  s.Get(
      "/api/v1/tokens",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto all = req.get_param_value("all");
        if (!all.empty() && all != "true" && all != "false") {
          return SendError(res,
                           Error::Invalid("invalid query",
                                          {{"all",
                                            fmt::format("'{}' is not valid: use true or false", Shorten(all)),
                                            "enum",
                                            {{"allowed", "true, false"}}}}));
        }
        if (all == "true" && !who.admin) return SendError(res, Error::Forbidden("this needs the ADMIN role"));
        json items = json::array();
        for (const auto& t : accounts.ListTokens(all == "true" ? std::nullopt : std::optional(who.user_id)))
          items.push_back(ToJson(t));
        SendJson(res, 200, {{"items", items}});
      },
      Access::kUser, TokenScope::kAdmin);
  s.Post(
      "/api/v1/tokens",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto fields = ReadTokenBody(*body);
        if (Failed(res, fields)) return;
        const auto created = accounts.CreateToken(who.user_id, *fields);
        if (Failed(res, created)) return;
        const auto& [token, secret] = *created;
        ctx.Audit(who, "token.create", "token", std::to_string(token.id), nullptr, ToJson(token));
        auto out = ToJson(token);
        out["token"] = secret;  // shown once
        SendJson(res, 201, out);
      },
      Access::kUser, TokenScope::kAdmin);
  s.Delete(
      "/api/v1/tokens/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto id = ParseId(req.matches[1]);
        const auto deleted = id ? accounts.DeleteToken(static_cast<int>(*id),
                                                       who.admin ? std::nullopt : std::optional(who.user_id))
                                : std::nullopt;
        if (!deleted) {
          return SendError(res,
                           Error::NotFound(fmt::format("token '{}' not found", Shorten(req.matches[1]))));
        }
        ctx.Audit(who, "token.delete", "token", std::to_string(deleted->id), ToJson(*deleted), nullptr);
        SendJson(res, 200, {{"deleted", deleted->id}});
      },
      Access::kUser, TokenScope::kAdmin);
}

}  // namespace cronwheel::admin::api
