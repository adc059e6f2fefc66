// /api/v1/auth: single sign-on (auth/sso_service.hpp; docs/operations.md, "Single sign-on"): what the login
// page offers, the OpenID Connect redirects, and the sign-in policy.
#include <fmt/format.h>

#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "admin/auth/sso_service.hpp"
#include "api/routes.hpp"
#include "auth/secrets.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::api {
namespace {

// The console's login page with `message` shown (the browser arrives here from a redirect, so an error is
// a page, not a JSON answer).
std::string LoginPageWith(const std::string& message) {
  return "/#/login?error=" + net::PercentEncode(Utf8Prefix(message, 400));
}

// 303 See Other to `location`: the browser GETs it.
void Redirect(net::Response& res, const std::string& location) {
  res.status = 303;
  res.set_header("Location", location);
}

std::string OidcCookie(const std::string& value, bool secure, int max_age_s) {
  // SameSite=Lax: the provider's redirect back is a cross-site top-level GET, which must carry it.
  return fmt::format("{}={}; Path=/api/v1/auth/oidc; Max-Age={}; HttpOnly; SameSite=Lax{}", kOidcCookie,
                     value, max_age_s, secure ? "; Secure" : "");
}

}  // namespace

void RegisterSsoRoutes(Routes& s, const RouteContext& ctx) {
  auto& console = *ctx.services.console;
  auto& sso = console.sso;
  const bool secure = console.auth.settings().cookie_secure;

  s.PublicGet("/api/v1/auth/providers", [&](const net::Request&, net::Response& res) {
    const auto offer = sso.Offered();
    json oidc = json::array();
    for (const auto& p : offer.oidc) {
      oidc.push_back({{"name", p.name},
                      {"title", p.title},
                      {"start", fmt::format("/api/v1/auth/oidc/{}/start", p.name)}});
    }
    SendJson(res, 200, {{"oidc", oidc}, {"ldap", offer.ldap}, {"require_sso", offer.require_sso}});
  });

  s.PublicGet("/api/v1/auth/oidc/{name}/start", [&, secure](const net::Request& req, net::Response& res) {
    const std::string browser = RandomSecret();
    auto url = sso.BeginOidc(req.matches[1], browser, req.get_param_value("return_to"));
    if (!url) {
      if (url.error().kind == ErrorKind::kNotFound) return SendError(res, url.error());
      return Redirect(res, LoginPageWith(url.error().message));
    }
    res.set_header("Set-Cookie", OidcCookie(browser, secure, static_cast<int>(kOidcLoginMs / 1000)));
    res.set_header("Cache-Control", "no-store");
    Redirect(res, *url);
  });

  s.PublicGet("/api/v1/auth/oidc/{name}/callback", [&, secure](const net::Request& req, net::Response& res) {
    const std::string name = req.matches[1];
    if (sso.config().Provider(name) == nullptr) {
      return SendError(
          res, Error::NotFound(fmt::format("no OpenID provider is named '{}'", Utf8Prefix(name, 40))));
    }
    const std::string via = "oidc:" + name;
    res.set_header("Cache-Control", "no-store");
    auto failed = [&](const std::string& message) {
      console.audit.Record(Principal{.username = "", .via = via}, "user.login_failed", "user", "", nullptr,
                           {{"client", req.remote_addr}, {"reason", std::string(Utf8Prefix(message, 300))}});
      res.set_header("Set-Cookie", OidcCookie("", secure, 0));
      Redirect(res, LoginPageWith(message));
    };
    if (req.has_param("error")) {
      // The provider refused or the user cancelled (RFC 6749 §4.1.2.1): its words, shown as text.
      return failed(fmt::format("the provider did not sign you in: {} {}",
                                Utf8Prefix(req.get_param_value("error"), 100),
                                Utf8Prefix(req.get_param_value("error_description"), 300)));
    }
    auto signed_in = sso.FinishOidc(name, req.get_param_value("code"), req.get_param_value("state"),
                                    CookieValue(req, kOidcCookie));
    if (!signed_in) return failed(signed_in.error().message);
    const auto& user = signed_in->session.user;
    console.audit.Record(Principal{.user_id = user.id, .username = user.username, .via = via}, "user.login",
                         "user", std::to_string(user.id), nullptr,
                         {{"client", req.remote_addr},
                          {"subject", user.external_subject},
                          {"skipped_groups", signed_in->skipped_groups}});
    res.set_header("Set-Cookie", console.auth.SessionCookie(signed_in->session.token));
    res.headers.emplace("Set-Cookie", OidcCookie("", secure, 0));
    Redirect(res, "/" + (signed_in->return_to.empty() ? std::string("#/") : signed_in->return_to));
  });

  s.Get(
      "/api/v1/auth/policy",
      [&](const Principal&, const net::Request&, net::Response& res) {
        const auto policy = sso.Policy();
        SendJson(res, 200,
                 {{"require_sso", policy.require_sso},
                  {"sso_configured", !sso.config().Empty()},
                  {"updated_by", policy.updated_by},
                  {"updated_ms", policy.updated_ms}});
      },
      Access::kAdmin);
  s.Put(
      "/api/v1/auth/policy",
      [&](const Principal& who, const net::Request& req, net::Response& res) {
        const auto body = ParseBody(req, false);
        if (Failed(res, body)) return;
        const auto read = ReadAuthPolicyBody(*body);
        if (Failed(res, read)) return;
        const bool require = *read;
        const auto before = sso.Policy();
        auto ended = sso.SetRequireSso(require, who.username);
        if (Failed(res, ended)) return;
        ctx.Audit(who, "auth.policy", "auth_policy", "1", {{"require_sso", before.require_sso}},
                  {{"require_sso", require}, {"sessions_ended", *ended}});
        SendJson(res, 200, {{"require_sso", require}, {"sessions_ended", *ended}});
      },
      Access::kAdmin);
}

}  // namespace cronwheel::admin::api
