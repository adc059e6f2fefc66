#pragma once
// Who is calling: login sessions and API tokens (kept by an AccountStore: auth/account_store.hpp).
// AuthService is the production Authenticator of the REST API (auth/authenticator.hpp); there is no anonymous
// access. Users and tokens are managed by Accounts (auth/accounts.hpp); passwords are hashed by
// PasswordHasher, failed logins counted by LoginThrottle.
//
// Sessions: the cookie `cw_session` holds 32 random bytes (randombytes_buf, base64url); the database keeps
// only their SHA-256 (user_session.token_hash), so a leaked table logs nobody in. Cookie attributes:
// HttpOnly; SameSite=Strict; Path=/; Max-Age = session_max; Secure when `cookie_secure`. A session ends
// after `session_idle` without a request or `session_max` after login, whichever is first: expires_ms holds
// min(created + session_max, last request + session_idle), renewed at most once a minute per session.
// CSRF: each session has its own random token, returned by login and GET /api/v1/auth/me; a POST, PUT,
// PATCH or DELETE authenticated by the cookie must send it in `X-CSRF-Token` (compared in constant time),
// else 403. SameSite=Strict already keeps the cookie off cross-site requests; the token is the second wall.
//
// API tokens: "cwt_" + 32 random bytes (base64url), shown once at creation; only the SHA-256 is stored.
// `Authorization: Bearer <token>` acts with the owner's current role and groups and needs no CSRF token.
// last_used_ms is updated at most once a minute per token. A present but wrong Authorization header is 401
// (never a fall-back to the cookie), and so is an expired or revoked token, with a message saying which and
// when (auth/accounts.hpp).
//
// First start: EnsureAdminUser creates the user `admin` (role ADMIN) when the app_user table is empty,
// under a transaction-level advisory lock, so admins starting together create it once.
//
// Time: every instant comes from the injected Clock (epoch ms). Thread-safety: all members may be called
// from any thread at once. Errors: the store's failures throw; expected outcomes are Results.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "admin/auth/account_store.hpp"
#include "admin/auth/authenticator.hpp"
#include "admin/auth/login_throttle.hpp"
#include "admin/auth/password_hasher.hpp"
#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

inline constexpr const char* kSessionCookie = "cw_session";
inline constexpr const char* kCsrfHeader = "X-CSRF-Token";

class AuthService final : public Authenticator {
 public:
  struct Settings {
    std::chrono::milliseconds session_idle{std::chrono::hours(12)};
    std::chrono::milliseconds session_max{std::chrono::hours(24 * 7)};
    // Add Secure to the cookie: the browser sends it over HTTPS only (the admin's cookie_secure setting,
    // on by default in production mode; AdminConfig::CookieSecure).
    bool cookie_secure = true;
    LoginThrottle::Settings throttle{};
    PasswordHasher::Settings hashing{};
  };

  // `familiar` keeps the login throttle's familiar addresses (PgFamiliarAddresses in production, so they
  // survive a restart); null = in this process's memory. Everything given must outlive this.
  AuthService(Settings settings, ringwheel::Clock& clock, AccountStore& store,
              FamiliarAddresses* familiar = nullptr);

  // Authenticator: Bearer token, else session cookie (+ CSRF check on state-changing methods), else 401.
  Result<Principal> Authenticate(const net::Request& req) override;

  // Creates `admin` (ADMIN) if no user exists. `password` empty = generate one. Returns the password used
  // when the user was created now (so the caller can print a generated one), nullopt when users existed.
  // Throws std::invalid_argument when `password` breaks the policy.
  std::optional<std::string> EnsureAdminUser(const std::string& password);

  struct Session {
    std::string token;  // the cookie value (secret)
    std::string csrf_token;
    User user;
  };
  // Checks the password of `username` for a login from address `client`, held to the login throttle
  // (login_throttle.hpp: its place taken before the check, a failure counted after it, the address made
  // familiar for the user on success). kThrottled (with retry_after) or kUnauthenticated ("wrong username
  // or password"). `admit`, when given, may still refuse the user whose password was right (single sign-on's
  // policy, auth/sso_service.hpp): its error is returned and no session starts.
  using Admit = std::function<Result<void>(const User&)>;
  Result<Session> Login(const std::string& username, const std::string& password, const std::string& client,
                        const Admit& admit = nullptr);
  // A session for `user`, whom single sign-on vouched for (auth/sso_service.hpp).
  Session StartSession(const User& user);
  // Ends the session of this request's cookie. False when it had none or it was unknown.
  bool Logout(const net::Request& req);
  // Set-Cookie values: a new session / one that deletes the cookie.
  [[nodiscard]] std::string SessionCookie(const std::string& token) const;
  [[nodiscard]] std::string ExpiredCookie() const;
  // Ends every session of `user_id` but the one of `keep_cookie` ("" = all).
  void EndSessions(int user_id, const std::string& keep_cookie);

  [[nodiscard]] const Settings& settings() const { return settings_; }
  PasswordHasher& hasher() { return hasher_; }
  LoginThrottle& throttle() { return throttle_; }

 private:
  // Stores a new session of `user` (and, with `rehash`, the user's new password hash in the same
  // transaction).
  Session NewSession(const User& user, const std::optional<std::string>& rehash);
  std::optional<Principal> SessionPrincipal(const std::string& cookie_token);
  Result<Principal> TokenPrincipal(const std::string& bearer);

  Settings settings_;
  ringwheel::Clock& clock_;
  AccountStore& store_;
  PasswordHasher hasher_;
  LoginThrottle throttle_;
};

// The value of cookie `name` in the request's Cookie header(s); "" when absent.
std::string CookieValue(const net::Request& req, std::string_view name);

}  // namespace cronwheel::admin
