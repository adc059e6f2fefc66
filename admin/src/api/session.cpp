// /api/v1/auth: login, logout and "who am I" of the console (auth/auth_service.hpp), and the command-line
// client's login through the console (docs/cli.md, "Logging in").
#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/auth/sso_service.hpp"
#include "api/routes.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::api {

void RegisterSessionRoutes(Routes& s, const RouteContext& ctx) {
  auto& console = *ctx.services.console;
  s.PublicPost("/api/v1/auth/login", [&](const net::Request& req, net::Response& res) {
    // A JSON body only: a cross-site HTML form cannot send one, so nobody is logged in by a foreign page.
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      return SendError(res, 415, "send the credentials as a JSON body (Content-Type: application/json)");
    }
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    const auto login = ReadLoginBody(*body);
    if (Failed(res, login)) return;
    // With single sign-on the password form also checks an LDAP directory and the sign-in policy.
    const auto signed_in = console.sso.PasswordLogin(login->username, login->password, req.remote_addr);
    if (!signed_in) {
      if (signed_in.error().kind == ErrorKind::kUnauthenticated) {
        console.audit.Record(
            Principal{.username = std::string(Utf8Prefix(login->username, 100)), .via = "password"},
            "user.login_failed", "user", "", nullptr, {{"client", req.remote_addr}});
      } else if (signed_in.error().kind == ErrorKind::kConflict) {
        // A directory identity whose name is taken (auth/sso_service.hpp): the reason names its subject, for
        // the ADMIN who may link it.
        console.audit.Record(
            Principal{.username = std::string(Utf8Prefix(login->username, 100)), .via = "ldap"},
            "user.login_failed", "user", "", nullptr,
            {{"client", req.remote_addr},
             {"reason", std::string(Utf8Prefix(signed_in.error().message, 300))}});
      }
      return SendError(res, signed_in.error());
    }
    const auto& session = signed_in->session;
    console.audit.Record(
        Principal{.user_id = session.user.id, .username = session.user.username, .via = signed_in->via},
        "user.login", "user", std::to_string(session.user.id), nullptr, {{"client", req.remote_addr}});
    res.set_header("Set-Cookie", console.auth.SessionCookie(session.token));
    SendJson(res, 200, {{"csrf_token", session.csrf_token}, {"user", ToJson(session.user)}});
  });
  s.Action(
      "/api/v1/auth/logout",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const bool ended = who.via == "session" && console.auth.Logout(req);
        if (ended)
          console.audit.Record(who, "user.logout", "user", std::to_string(who.user_id), nullptr, nullptr);
        res.set_header("Set-Cookie", console.auth.ExpiredCookie());
        json out{{"logged_out", ended}};
        // A user of an OpenID provider may also end the provider's session there (RP-initiated logout).
        if (auto url = console.sso.EndSessionUrl(who.login_source); !url.empty())
          out["provider_logout_url"] = url;
        SendJson(res, 200, out);
      },
      Access::kUser, TokenScope::kRead);
  // The command-line client's login (RFC 8252's loopback redirect with PKCE): the console's user approves
  // the request `cronwheel login` opened, in a browser session; the answer is where the browser goes next,
  // the client's own loopback listener, which never is an address the admin requests.
  s.Post(
      "/api/v1/auth/cli/authorize",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        if (who.via != "session") {
          return SendError(res, Error::Forbidden("a command-line login is approved in the console, signed in "
                                                 "in a browser; an API token cannot approve one"));
        }
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto login = ReadCliLoginBody(*body);
        if (Failed(res, login)) return;
        const auto code = console.accounts.ApproveCliLogin(who.user_id, *login);
        console.audit.Record(who, "token.cli_approve", "user", std::to_string(who.user_id), nullptr,
                             {{"name", login->token.name},
                              {"scope", ToString(login->token.scope)},
                              {"expires_in_days", login->token.expires_in_days}});
        SendJson(res, 200,
                 {{"redirect", fmt::format("http://127.0.0.1:{}/callback?code={}&state={}", login->port, code,
                                           login->state)}});
      },
      Access::kUser, TokenScope::kAdmin);
  // The client trades the code the browser brought it, and its verifier, for the token (shown once).
  s.PublicPost("/api/v1/auth/cli/token", [&](const net::Request& req, net::Response& res) {
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    const auto trade = ReadCliTokenBody(*body);
    if (Failed(res, trade)) return;
    const auto created = console.accounts.RedeemCliLogin(*trade);
    if (Failed(res, created)) return;
    const auto& [token, secret] = *created;
    console.audit.Record(Principal{.user_id = token.user_id, .username = token.username, .via = "cli login"},
                         "token.create", "token", std::to_string(token.id), nullptr, ToJson(token));
    auto out = ToJson(token);
    out["token"] = secret;  // shown once
    SendJson(res, 201, out);
  });
  s.Get("/api/v1/auth/me", [&](const Principal& who, const net::Request&, net::Response& res) {
    json user{{"id", who.user_id},
              {"username", who.username},
              {"role", who.admin ? "ADMIN" : "USER"},
              {"login_source", who.login_source}};
    AddGroupRoles(user, who.groups);
    json body{{"user", std::move(user)}, {"via", who.via}};
    // What a token may do (the console hides what its caller cannot do); a session: everything its user may.
    body["scope"] = ToString(who.scope);
    if (who.via == "session") body["csrf_token"] = who.csrf_token;
    SendJson(res, 200, body);
  });
}

}  // namespace cronwheel::admin::api
