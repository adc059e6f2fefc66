// /api/v1/users: console users (admins), and any user's own password (auth/accounts.hpp).
#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/auth/sso_service.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {
namespace {

// Answers a change of a user (or its error) and records it.
void SendUserChange(const RouteContext& ctx, const Principal& who, const Result<UserChange>& c,
                    const char* action, int success_status, net::Response& res) {
  if (Failed(res, c)) return;
  const int id = c->after ? c->after->id : c->before->id;
  ctx.Audit(who, action, "user", std::to_string(id), c->before ? ToJson(*c->before) : json(nullptr),
            c->after ? ToJson(*c->after) : json(nullptr));
  if (c->after) return SendJson(res, success_status, ToJson(*c->after));
  SendJson(res, success_status, {{"deleted", id}});
}

// The user id of the path, or answers 404.
std::optional<int> UserId(const net::Request& req, net::Response& res) {
  const auto id = ParseId(req.matches[1]);
  if (!id) SendError(res, Error::NotFound(fmt::format("user '{}' not found", Shorten(req.matches[1]))));
  return id ? std::optional<int>(static_cast<int>(*id)) : std::nullopt;
}

}  // namespace

void RegisterUserRoutes(Routes& s, const RouteContext& ctx) {
  auto& accounts = ctx.services.console->accounts;
  s.Get(
      "/api/v1/users",
      [&](const Principal&, const net::Request&, net::Response& res) {
        json items = json::array();
        for (const auto& u : accounts.ListUsers())
          items.push_back(ToJson(u));
        SendJson(res, 200, {{"items", items}});
      },
      Access::kAdmin);
  s.Post(
      "/api/v1/users",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto fields = ReadUserBody(*body, true);
        if (Failed(res, fields)) return;
        SendUserChange(ctx, who, accounts.CreateUser(*fields), "user.create", 201, res);
      },
      Access::kAdmin);
  s.Get(
      "/api/v1/users/{id}",
      [&](const Principal&, const net::Request& req, net::Response& res) {
        const auto id = UserId(req, res);
        if (!id) return;
        const auto u = accounts.GetUser(*id);
        if (!u)
          return SendError(res, Error::NotFound(fmt::format("user '{}' not found", Shorten(req.matches[1]))));
        SendJson(res, 200, ToJson(*u));
      },
      Access::kAdmin);
  s.Put(
      "/api/v1/users/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto id = UserId(req, res);
        if (!id) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto fields = ReadUserBody(*body, false);
        if (Failed(res, fields)) return;
        SendUserChange(ctx, who, accounts.UpdateUser(*id, *fields, who.user_id), "user.update", 200, res);
      },
      Access::kAdmin);
  s.Delete(
      "/api/v1/users/{id}",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto id = UserId(req, res);
        if (!id) return;
        SendUserChange(ctx, who, accounts.DeleteUser(*id, who.user_id), "user.delete", 200, res);
      },
      Access::kAdmin);
  // An ADMIN's explicit link of a user to a single sign-on identity (auth/sso_service.hpp; security review 2,
  // N2: a sign-in never finds an existing user by its name).
  auto& sso = ctx.services.console->sso;
  s.Put(
      "/api/v1/users/{id}/identity",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto id = UserId(req, res);
        if (!id) return;
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto link = ReadIdentityLinkBody(*body);
        if (Failed(res, link)) return;
        SendUserChange(ctx, who, sso.LinkIdentity(*id, link->source, link->subject), "user.link_identity",
                       200, res);
      },
      Access::kAdmin);
  s.Delete(
      "/api/v1/users/{id}/identity",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto id = UserId(req, res);
        if (!id) return;
        SendUserChange(ctx, who, sso.UnlinkIdentity(*id), "user.unlink_identity", 200, res);
      },
      Access::kAdmin);
  s.Post(
      "/api/v1/users/me/password",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto change = ReadPasswordChangeBody(*body);
        if (Failed(res, change)) return;
        if (Failed(res, accounts.ChangeOwnPassword(who.user_id, *change, CookieValue(req, kSessionCookie))))
          return;
        ctx.Audit(who, "user.password", "user", std::to_string(who.user_id), nullptr, nullptr);
        SendJson(res, 200, {{"changed", true}});
      },
      Access::kUser, TokenScope::kAdmin);
}

}  // namespace cronwheel::admin::api
