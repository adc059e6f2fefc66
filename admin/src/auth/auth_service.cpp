#include "admin/auth/auth_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "admin/model/validation.hpp"
#include "auth/secrets.hpp"
#include "model/time_format.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kTokenPrefix = "cwt_";
// Session expiry and token last_used_ms are renewed at most once a minute.
constexpr std::int64_t kRenewEveryMs = 60'000;

}  // namespace

std::string CookieValue(const net::Request& req, std::string_view name) {
  const auto count = req.get_header_value_count("Cookie");
  for (std::size_t i = 0; i < count; ++i) {
    const std::string header = req.get_header_value("Cookie", i);
    std::size_t pos = 0;
    while (pos < header.size()) {
      auto end = header.find(';', pos);
      if (end == std::string::npos) end = header.size();
      std::string_view part(header.data() + pos, end - pos);
      while (!part.empty() && part.front() == ' ')
        part.remove_prefix(1);
      if (part.size() > name.size() && part.substr(0, name.size()) == name && part[name.size()] == '=') {
        return std::string(part.substr(name.size() + 1));
      }
      pos = end + 1;
    }
  }
  return "";
}

AuthService::AuthService(Settings settings, ringwheel::Clock& clock, AccountStore& store,
                         FamiliarAddresses* familiar)
    : settings_(settings),
      clock_(clock),
      store_(store),
      hasher_(settings.hashing),
      throttle_(settings.throttle, familiar) {}

Result<Principal> AuthService::Authenticate(const net::Request& req) {
  if (req.has_header("Authorization")) {
    const auto value = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() <= kBearer.size() || value.compare(0, kBearer.size(), kBearer) != 0) {
      return Error::Unauthenticated("the Authorization header must be 'Bearer <API token>'");
    }
    return TokenPrincipal(value.substr(kBearer.size()));
  }
  const auto cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) {
    return Error::Unauthenticated(
        "not logged in: POST /api/v1/auth/login, or send Authorization: Bearer <API token>");
  }
  auto p = SessionPrincipal(cookie);
  if (!p) return Error::Unauthenticated("the session has expired or ended: log in again");
  const auto& m = req.method;
  if (m != "GET" && m != "HEAD" && m != "OPTIONS") {
    const auto given = req.get_header_value(kCsrfHeader);
    if (given.empty() || !xxljob::TokenMatches(given, p->csrf_token)) {
      return Error::Forbidden(fmt::format(
          "the {} header is missing or wrong: send the csrf_token that login and GET /api/v1/auth/me return",
          kCsrfHeader));
    }
  }
  return *std::move(p);
}

std::optional<Principal> AuthService::SessionPrincipal(const std::string& cookie_token) {
  if (cookie_token.size() > 200) return std::nullopt;
  const auto hash = SecretHash(cookie_token);
  const auto now = clock_.NowMs();
  auto session = store_.FindSession(hash, now);
  if (!session) return std::nullopt;
  const auto renewed =
      std::min(session->created_ms + settings_.session_max.count(), now + settings_.session_idle.count());
  if (renewed - session->expires_ms >= kRenewEveryMs) store_.RenewSession(hash, renewed);
  return std::move(session->principal);
}

Result<Principal> AuthService::TokenPrincipal(const std::string& bearer) {
  const auto unknown = Error::Unauthenticated("the API token is not valid (unknown or deleted)");
  if (!bearer.starts_with(kTokenPrefix) || bearer.size() > 200) return unknown;
  auto token = store_.FindToken(SecretHash(bearer));
  if (!token) return unknown;
  const auto now = clock_.NowMs();
  if (token->revoked_ms > 0) {
    return Error::Unauthenticated(fmt::format(
        "the API token was revoked at {} when {}: create a new one", FormatUtc(token->revoked_ms),
        token->revoked_reason == "password_reset"     ? "an admin reset its user's password"
        : token->revoked_reason == "identity_changed" ? "an admin changed its user's single sign-on identity"
                                                      : "its user changed their password"));
  }
  if (now >= token->expires_ms) {
    return Error::Unauthenticated(
        fmt::format("the API token expired at {}: create a new one", FormatUtc(token->expires_ms)));
  }
  if (now - token->last_used_ms >= kRenewEveryMs) store_.TouchToken(token->token_id, now);
  return std::move(token->principal);
}

std::optional<std::string> AuthService::EnsureAdminUser(const std::string& password) {
  if (!password.empty()) {
    if (auto ok = CheckPasswordPolicy(password); !ok)
      throw std::invalid_argument(fmt::format("admin_password {}", ok.error().message));
  }
  if (store_.AnyUser()) return std::nullopt;
  const std::string chosen = password.empty() ? RandomSecret().substr(0, 24) : password;
  if (!store_.CreateFirstAdmin(hasher_.Hash(chosen), clock_.NowMs())) return std::nullopt;
  return chosen;
}

Result<AuthService::Session> AuthService::Login(const std::string& username, const std::string& password,
                                                const std::string& client, const Admit& admit) {
  const auto now = clock_.NowMs();
  // The attempt takes its place on the throttle before the password is checked (login_throttle.hpp).
  auto admission = throttle_.BeginLogin(username, client, now);
  if (!admission.ticket) return Error::Throttled("too many failed logins", admission.retry_after);
  std::optional<UserLogin> row;
  if (ValidUsername(username)) row = store_.FindLogin(username);
  const bool ok = row ? hasher_.Verify(password, row->password_hash) : (hasher_.VerifyDummy(password), false);
  if (!ok) {
    admission.ticket->Failed(clock_.NowMs());
    return Error::Unauthenticated("wrong username or password");
  }
  admission.ticket->Succeeded(clock_.NowMs());
  if (admit) {
    if (auto admitted = admit(row->user); !admitted) return admitted.error();
  }
  return NewSession(row->user, hasher_.NeedsRehash(row->password_hash) ? std::optional(hasher_.Hash(password))
                                                                       : std::nullopt);
}

AuthService::Session AuthService::StartSession(const User& user) {
  return NewSession(user, std::nullopt);
}

AuthService::Session AuthService::NewSession(const User& user, const std::optional<std::string>& rehash) {
  const auto now = clock_.NowMs();
  Session session{.token = RandomSecret(), .csrf_token = RandomSecret(), .user = user};
  store_.AddSession(SecretHash(session.token), user.id, session.csrf_token, now,
                    now + std::min(settings_.session_idle, settings_.session_max).count(), rehash);
  return session;
}

bool AuthService::Logout(const net::Request& req) {
  const auto cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) return false;
  return store_.DeleteSession(SecretHash(cookie));
}

std::string AuthService::SessionCookie(const std::string& token) const {
  return fmt::format("{}={}; Path=/; Max-Age={}; HttpOnly; SameSite=Strict{}", kSessionCookie, token,
                     std::chrono::duration_cast<std::chrono::seconds>(settings_.session_max).count(),
                     settings_.cookie_secure ? "; Secure" : "");
}

std::string AuthService::ExpiredCookie() const {
  return fmt::format("{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{}", kSessionCookie,
                     settings_.cookie_secure ? "; Secure" : "");
}

void AuthService::EndSessions(int user_id, const std::string& keep_cookie) {
  store_.DeleteSessions(user_id, keep_cookie.empty() ? "" : SecretHash(keep_cookie));
}

}  // namespace cronwheel::admin
