#pragma once
// Console accounts on PostgreSQL: users, login sessions, API tokens and login throttling. AuthService is
// the production Authenticator of the REST API (auth.hpp); there is no anonymous access.
//
// Passwords (PasswordHasher): argon2id through libsodium's crypto_pwhash_str, with the INTERACTIVE limits
// (2 passes over 64 MiB; about 0.1 s on one core here). MODERATE (3 passes, 256 MiB, ~0.7 s) would make a
// login cost a quarter GiB on a server whose HTTP pool runs up to `http_threads` requests at once; online
// guessing is bounded by the login throttle instead, and INTERACTIVE is libsodium's recommended baseline
// for interactive logins. At most `max_concurrent_hashes` hashes run at once (the rest wait), so a burst of
// logins cannot take the machine's memory. A stored hash made with other limits is upgraded on the next
// successful login (crypto_pwhash_str_needs_rehash). A login for a user that does not exist verifies
// against a dummy hash, so it costs the same time as a wrong password. Policy: 10 to 1024 characters.
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
// (never a fall-back to the cookie).
//
// Login throttle (LoginThrottle): `max_failures` failed logins within `window` for one username (any case)
// or from one client address block further attempts for that key until the oldest failure leaves the
// window (429 with Retry-After). Blocked attempts do not verify the password. Counters live in this admin
// process (each admin of a cluster counts its own).
//
// First start: EnsureAdminUser creates the user `admin` (role ADMIN) when the app_user table is empty,
// under a transaction-level advisory lock, so admins starting together create it once.
//
// Time: every instant comes from the injected Clock (epoch ms). Thread-safety: all members may be called
// from any thread at once. Errors: database failures throw (pqxx exceptions); expected outcomes are return
// values.

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "admin/auth.hpp"
#include "admin/job_repository.hpp"
#include "admin/pg_pool.hpp"
#include "admin/request_bodies.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

inline constexpr const char* kSessionCookie = "cw_session";
inline constexpr const char* kCsrfHeader = "X-CSRF-Token";

// argon2id password hashes (libsodium). Thread-safe; `max_concurrent` bounds the memory in use.
class PasswordHasher final {
 public:
  struct Settings {
    unsigned long long ops_limit = 2;      // crypto_pwhash_OPSLIMIT_INTERACTIVE
    std::size_t mem_limit = 64ULL << 20U;  // crypto_pwhash_MEMLIMIT_INTERACTIVE, bytes
    int max_concurrent = 4;
  };
  explicit PasswordHasher(Settings settings);
  PasswordHasher(const PasswordHasher&) = delete;
  PasswordHasher& operator=(const PasswordHasher&) = delete;

  // "$argon2id$v=19$m=65536,t=2,p=1$...". Throws std::runtime_error when out of memory.
  std::string Hash(std::string_view password);
  // True when `password` matches `hash`. A malformed hash is false.
  bool Verify(std::string_view password, const std::string& hash);
  // Costs what Verify against a real hash costs; always false (for unknown users).
  void VerifyDummy(std::string_view password);
  // True when `hash` was made with other limits than these settings.
  bool NeedsRehash(const std::string& hash) const;

 private:
  Settings settings_;
  std::counting_semaphore<1024> slots_;
  std::string dummy_hash_;
};

// Failed-login counters with a sliding window. Pure data structure: the caller passes "now".
class LoginThrottle final {
 public:
  struct Settings {
    int max_failures = 5;
    std::chrono::milliseconds window{std::chrono::minutes(5)};
    std::size_t max_keys = 100'000;  // beyond this the oldest keys are forgotten first
  };
  explicit LoginThrottle(Settings settings) : settings_(settings) {}

  // nullopt when `key` may try now; otherwise how long until it may.
  std::optional<std::chrono::milliseconds> RetryAfter(const std::string& key, std::int64_t now_ms);
  void RecordFailure(const std::string& key, std::int64_t now_ms);
  void Clear(const std::string& key);

 private:
  void Prune(std::deque<std::int64_t>& times, std::int64_t now_ms) const;

  Settings settings_;
  std::mutex mu_;
  std::unordered_map<std::string, std::deque<std::int64_t>> failures_;  // ascending instants
};

// A console user as the API shows it (never the hash).
struct User {
  int id = 0;
  std::string username;
  bool admin = false;
  std::vector<int> permitted_group_ids;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};
nlohmann::json ToJson(const User& u);

// An API token as the API shows it (never the secret or its hash).
struct ApiToken {
  int id = 0;
  int user_id = 0;
  std::string username;
  std::string name;
  std::int64_t created_ms = 0;
  std::int64_t last_used_ms = 0;
};
nlohmann::json ToJson(const ApiToken& t);

// The result of a change to a user: kOk with before/after, kNotFound, kInvalid with `errors`, or
// kConflict with `why` (deleting or demoting yourself or the last admin).
struct UserChange {
  Outcome outcome = Outcome::kOk;
  std::optional<User> before;
  std::optional<User> after;
  FieldErrors errors;
  std::string why;
};

class AuthService final : public Authenticator {
 public:
  struct Settings {
    std::chrono::milliseconds session_idle{std::chrono::hours(12)};
    std::chrono::milliseconds session_max{std::chrono::hours(24 * 7)};
    bool cookie_secure = false;  // add Secure to the cookie (set when the console is served over HTTPS)
    LoginThrottle::Settings throttle{};
    PasswordHasher::Settings hashing{};
  };

  AuthService(Settings settings, ringwheel::Clock& clock, PgPool& pool);

  // Authenticator: Bearer token, else session cookie (+ CSRF check on state-changing methods), else 401.
  std::variant<Principal, AuthFailure> Authenticate(const httplib::Request& req) override;

  // --- first start ----------------------------------------------------------------------------------
  // Creates `admin` (ADMIN) if no user exists. `password` empty = generate one. Returns the password used
  // when the user was created now (so the caller can print a generated one), nullopt when users existed.
  // Throws std::invalid_argument when `password` breaks the policy.
  std::optional<std::string> EnsureAdminUser(const std::string& password);

  // --- login and sessions ---------------------------------------------------------------------------
  enum class LoginStatus { kOk, kWrongCredentials, kThrottled };
  struct LoginResult {
    LoginStatus status = LoginStatus::kWrongCredentials;
    std::chrono::milliseconds retry_after{0};  // kThrottled
    std::string session_token;                 // kOk: the cookie value (secret)
    std::string csrf_token;                    // kOk
    User user;                                 // kOk
  };
  LoginResult Login(const std::string& username, const std::string& password, const std::string& client);
  // Ends the session of this request's cookie. False when it had none or it was unknown.
  bool Logout(const httplib::Request& req);
  // Set-Cookie values: a new session / one that deletes the cookie.
  [[nodiscard]] std::string SessionCookie(const std::string& token) const;
  [[nodiscard]] std::string ExpiredCookie() const;

  // --- users ----------------------------------------------------------------------------------------
  std::vector<User> ListUsers();
  std::optional<User> GetUser(int id);
  // Body: username, password, role (ADMIN|USER, default USER), permitted_group_ids (default []).
  UserChange CreateUser(const nlohmann::json& body);
  // Body (all optional): password, role, permitted_group_ids. `acting_user_id` may not change its own role.
  // A password change ends the user's sessions.
  UserChange UpdateUser(int id, const nlohmann::json& body, int acting_user_id);
  // Refuses the acting user and the last admin.
  UserChange DeleteUser(int id, int acting_user_id);
  // Body: old_password, new_password. Ends the user's other sessions (keeps the one of `req`, if any).
  // kInvalid with errors (wrong old password is an error on old_password), kThrottled as Login.
  struct PasswordChange {
    Outcome outcome = Outcome::kOk;
    FieldErrors errors;
    bool throttled = false;
    std::chrono::milliseconds retry_after{0};
  };
  PasswordChange ChangeOwnPassword(int user_id, const nlohmann::json& body, const httplib::Request& req);

  // --- API tokens -----------------------------------------------------------------------------------
  // `user_id` nullopt = every user's.
  std::vector<ApiToken> ListTokens(std::optional<int> user_id);
  // Body: name (1 to 100 characters). Returns the token and its secret (shown once), or errors.
  Validated<std::pair<ApiToken, std::string>> CreateToken(int user_id, const nlohmann::json& body);
  // Deletes a token of `owner` (nullopt = any owner). Returns the deleted token, nullopt when not found.
  std::optional<ApiToken> DeleteToken(int id, std::optional<int> owner);

  [[nodiscard]] const Settings& settings() const { return settings_; }

 private:
  std::optional<Principal> SessionPrincipal(const std::string& cookie_token);
  std::optional<Principal> TokenPrincipal(const std::string& bearer);
  void EndSessions(int user_id, const std::string& keep_token_hash);

  Settings settings_;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  PasswordHasher hasher_;
  LoginThrottle throttle_;
};

// The value of cookie `name` in the request's Cookie header(s); "" when absent.
std::string CookieValue(const httplib::Request& req, std::string_view name);

}  // namespace cronwheel::admin
