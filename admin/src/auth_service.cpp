#include "admin/auth_service.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <sodium.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "pg_util.hpp"
#include "xxljob/protocol.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

// pg_advisory_xact_lock key of the first-start bootstrap ("cronusr1").
constexpr std::int64_t kUserBootstrapLockKey = 0x63726f6e75737231;
constexpr std::size_t kSecretBytes = 32;
constexpr const char* kTokenPrefix = "cwt_";
constexpr std::int64_t kRenewEveryMs =
    60'000;  // session expiry and token last_used_ms: at most once a minute
constexpr std::size_t kMaxTokensPerUser = 100;
constexpr const char* kUserColumns =
    "id, username, role, to_json(permitted_group_ids) AS groups, created_ms, updated_ms";

void InitSodium() {
  static const int init = sodium_init();
  if (init < 0) throw std::runtime_error("libsodium cannot be initialised");
}

std::string RandomSecret() {
  InitSodium();
  unsigned char bytes[kSecretBytes];
  randombytes_buf(bytes, sizeof bytes);
  char out[sodium_base64_ENCODED_LEN(kSecretBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(out, sizeof out, bytes, sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(bytes, sizeof bytes);
  return out;
}

// Hex SHA-256 of a high-entropy secret (session or API token): what the database keeps.
std::string SecretHash(std::string_view secret) {
  InitSodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

std::vector<int> IntsFromJson(const char* text) {
  return json::parse(text).get<std::vector<int>>();
}

User UserFromRow(const pqxx::row& r) {
  User u;
  u.id = r["id"].as<int>();
  u.username = r["username"].as<std::string>();
  u.admin = r["role"].as<std::string>() == "ADMIN";
  u.permitted_group_ids = IntsFromJson(r["groups"].c_str());
  u.created_ms = r["created_ms"].as<std::int64_t>();
  u.updated_ms = r["updated_ms"].as<std::int64_t>();
  return u;
}

ApiToken TokenFromRow(const pqxx::row& r) {
  return ApiToken{.id = r["id"].as<int>(),
                  .user_id = r["user_id"].as<int>(),
                  .username = r["username"].as<std::string>(),
                  .name = r["name"].as<std::string>(),
                  .created_ms = r["created_ms"].as<std::int64_t>(),
                  .last_used_ms = r["last_used_ms"].as<std::int64_t>()};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Adds an error for each id that is not a group.
void CheckGroupsExist(pqxx::transaction_base& tx, const std::vector<int>& ids, FieldErrors& errors) {
  if (ids.empty()) return;
  std::set<int> found;
  for (const auto& r :
       tx.exec_params("SELECT id FROM job_group WHERE id = ANY($1::int[])", PgArray<int>(ids)))
    found.insert(r[0].as<int>());
  for (int id : ids) {
    if (!found.contains(id))
      errors.push_back({"permitted_group_ids", fmt::format("job group {} does not exist", id)});
  }
}

// Locks every admin row (in id order, so concurrent changes serialise) and counts them.
int LockAdmins(pqxx::transaction_base& tx) {
  return static_cast<int>(
      tx.exec("SELECT id FROM app_user WHERE role = 'ADMIN' ORDER BY id FOR UPDATE").size());
}

}  // namespace

std::string CookieValue(const httplib::Request& req, std::string_view name) {
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

nlohmann::json ToJson(const User& u) {
  return {{"id", u.id},
          {"username", u.username},
          {"role", u.admin ? "ADMIN" : "USER"},
          {"permitted_group_ids", u.permitted_group_ids},
          {"created_ms", u.created_ms},
          {"updated_ms", u.updated_ms}};
}

nlohmann::json ToJson(const ApiToken& t) {
  return {{"id", t.id},     {"user_id", t.user_id},       {"username", t.username},
          {"name", t.name}, {"created_ms", t.created_ms}, {"last_used_ms", t.last_used_ms}};
}

// --- PasswordHasher ------------------------------------------------------------------------------------

PasswordHasher::PasswordHasher(Settings settings)
    : settings_(settings), slots_(std::clamp(settings.max_concurrent, 1, 1024)) {
  InitSodium();
  dummy_hash_ = Hash(RandomSecret());
}

std::string PasswordHasher::Hash(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  slots_.acquire();
  const int rc = crypto_pwhash_str_alg(out, password.data(), password.size(), settings_.ops_limit,
                                       settings_.mem_limit, crypto_pwhash_ALG_ARGON2ID13);
  slots_.release();
  if (rc != 0) throw std::runtime_error("cannot hash a password: out of memory");
  return out;
}

bool PasswordHasher::Verify(std::string_view password, const std::string& hash) {
  slots_.acquire();
  const bool ok = crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
  slots_.release();
  return ok;
}

void PasswordHasher::VerifyDummy(std::string_view password) {
  (void)Verify(password, dummy_hash_);
}

bool PasswordHasher::NeedsRehash(const std::string& hash) const {
  return crypto_pwhash_str_needs_rehash(hash.c_str(), settings_.ops_limit, settings_.mem_limit) != 0;
}

// --- LoginThrottle -------------------------------------------------------------------------------------

void LoginThrottle::Prune(std::deque<std::int64_t>& times, std::int64_t now_ms) const {
  while (!times.empty() && times.front() <= now_ms - settings_.window.count())
    times.pop_front();
}

std::optional<std::chrono::milliseconds> LoginThrottle::RetryAfter(const std::string& key,
                                                                   std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  if (it == failures_.end()) return std::nullopt;
  Prune(it->second, now_ms);
  if (it->second.empty()) {
    failures_.erase(it);
    return std::nullopt;
  }
  if (static_cast<int>(it->second.size()) < settings_.max_failures) return std::nullopt;
  // Blocked until enough failures leave the window for one more attempt.
  const auto idx = it->second.size() - static_cast<std::size_t>(settings_.max_failures);
  return std::chrono::milliseconds(it->second[idx] + settings_.window.count() - now_ms);
}

void LoginThrottle::RecordFailure(const std::string& key, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (failures_.size() >= settings_.max_keys && !failures_.contains(key)) {
    // Forget keys whose failures have all left the window; if none, the one with the oldest failure.
    for (auto it = failures_.begin(); it != failures_.end();) {
      Prune(it->second, now_ms);
      it = it->second.empty() ? failures_.erase(it) : std::next(it);
    }
    if (failures_.size() >= settings_.max_keys) {
      auto oldest = std::min_element(failures_.begin(), failures_.end(), [](const auto& a, const auto& b) {
        return a.second.back() < b.second.back();
      });
      failures_.erase(oldest);
    }
  }
  auto& times = failures_[key];
  Prune(times, now_ms);
  times.push_back(now_ms);
  // Only the newest max_failures instants decide when the key is free again.
  while (static_cast<int>(times.size()) > settings_.max_failures)
    times.pop_front();
}

void LoginThrottle::Clear(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

// --- AuthService ---------------------------------------------------------------------------------------

AuthService::AuthService(Settings settings, ringwheel::Clock& clock, PgPool& pool)
    : settings_(settings),
      clock_(clock),
      pool_(pool),
      hasher_(settings.hashing),
      throttle_(settings.throttle) {}

std::variant<Principal, AuthFailure> AuthService::Authenticate(const httplib::Request& req) {
  if (req.has_header("Authorization")) {
    const auto value = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() <= kBearer.size() || value.compare(0, kBearer.size(), kBearer) != 0) {
      return AuthFailure{401, "the Authorization header must be 'Bearer <API token>'"};
    }
    auto p = TokenPrincipal(value.substr(kBearer.size()));
    if (!p) return AuthFailure{401, "the API token is not valid (unknown or deleted)"};
    return *std::move(p);
  }
  const auto cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) {
    return AuthFailure{401,
                       "not logged in: POST /api/v1/auth/login, or send Authorization: Bearer <API token>"};
  }
  auto p = SessionPrincipal(cookie);
  if (!p) return AuthFailure{401, "the session has expired or ended: log in again"};
  const auto& m = req.method;
  if (m != "GET" && m != "HEAD" && m != "OPTIONS") {
    const auto given = req.get_header_value(kCsrfHeader);
    if (given.empty() || !xxljob::TokenMatches(given, p->csrf_token)) {
      return AuthFailure{403, fmt::format("the {} header is missing or wrong: send the csrf_token that login "
                                          "and GET /api/v1/auth/me return",
                                          kCsrfHeader)};
    }
  }
  return *std::move(p);
}

std::optional<Principal> AuthService::SessionPrincipal(const std::string& cookie_token) {
  if (cookie_token.size() > 200) return std::nullopt;
  const auto hash = SecretHash(cookie_token);
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Principal> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(
        "SELECT s.csrf_token, s.created_ms, s.expires_ms, u.id, u.username, u.role,"
        " to_json(u.permitted_group_ids) AS groups FROM user_session s JOIN app_user u ON u.id = s.user_id"
        " WHERE s.token_hash = $1",
        hash);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    const auto now = clock_.NowMs();
    const auto expires = r["expires_ms"].as<std::int64_t>();
    if (expires <= now) {
      tx.exec_params("DELETE FROM user_session WHERE token_hash = $1", hash);
      tx.commit();
      return std::nullopt;
    }
    const auto renewed = std::min(r["created_ms"].as<std::int64_t>() + settings_.session_max.count(),
                                  now + settings_.session_idle.count());
    if (renewed - expires >= kRenewEveryMs) {
      tx.exec_params("UPDATE user_session SET expires_ms = $2 WHERE token_hash = $1", hash, renewed);
    }
    tx.commit();
    return Principal{.user_id = r["id"].as<int>(),
                     .username = r["username"].as<std::string>(),
                     .admin = r["role"].as<std::string>() == "ADMIN",
                     .group_ids = IntsFromJson(r["groups"].c_str()),
                     .via = "session",
                     .csrf_token = r["csrf_token"].as<std::string>()};
  });
}

std::optional<Principal> AuthService::TokenPrincipal(const std::string& bearer) {
  if (!bearer.starts_with(kTokenPrefix) || bearer.size() > 200) return std::nullopt;
  const auto hash = SecretHash(bearer);
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Principal> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(
        "SELECT t.id AS token_id, t.last_used_ms, u.id, u.username, u.role,"
        " to_json(u.permitted_group_ids) AS groups FROM api_token t JOIN app_user u ON u.id = t.user_id"
        " WHERE t.token_hash = $1",
        hash);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    const auto now = clock_.NowMs();
    if (now - r["last_used_ms"].as<std::int64_t>() >= kRenewEveryMs) {
      tx.exec_params("UPDATE api_token SET last_used_ms = $2 WHERE id = $1", r["token_id"].as<int>(), now);
    }
    tx.commit();
    return Principal{.user_id = r["id"].as<int>(),
                     .username = r["username"].as<std::string>(),
                     .admin = r["role"].as<std::string>() == "ADMIN",
                     .group_ids = IntsFromJson(r["groups"].c_str()),
                     .via = "token",
                     .csrf_token = ""};
  });
}

std::optional<std::string> AuthService::EnsureAdminUser(const std::string& password) {
  if (!password.empty()) {
    if (auto why = CheckPasswordPolicy(password); !why.empty())
      throw std::invalid_argument(fmt::format("admin_password {}", why));
  }
  const bool any = WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec1("SELECT EXISTS (SELECT 1 FROM app_user)")[0].as<bool>();
  });
  if (any) return std::nullopt;
  const std::string chosen = password.empty() ? RandomSecret().substr(0, 24) : password;
  const auto hash = hasher_.Hash(chosen);
  const bool created = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kUserBootstrapLockKey);
    const auto n = tx.exec_params(
                         "INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms)"
                         " SELECT 'admin', $1, 'ADMIN', $2, $2 WHERE NOT EXISTS (SELECT 1 FROM app_user)",
                         hash, clock_.NowMs())
                       .affected_rows();
    tx.commit();
    return n == 1;
  });
  if (!created) return std::nullopt;
  return chosen;
}

AuthService::LoginResult AuthService::Login(const std::string& username, const std::string& password,
                                            const std::string& client) {
  LoginResult out;
  const auto now = clock_.NowMs();
  const std::string user_key = "user:" + Lower(username.substr(0, 100));
  const std::string client_key = "client:" + client;
  const auto wait = std::max(throttle_.RetryAfter(user_key, now).value_or(std::chrono::milliseconds(0)),
                             throttle_.RetryAfter(client_key, now).value_or(std::chrono::milliseconds(0)));
  if (wait.count() > 0) {
    out.status = LoginStatus::kThrottled;
    out.retry_after = wait;
    return out;
  }
  std::optional<std::pair<User, std::string>> row;
  if (ValidUsername(username)) {
    row = WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::pair<User, std::string>> {
      pqxx::read_transaction tx(conn);
      const auto rows = tx.exec_params(
          std::string("SELECT ") + kUserColumns + ", password_hash FROM app_user WHERE username = $1",
          username);
      if (rows.empty()) return std::nullopt;
      return std::pair{UserFromRow(rows[0]), rows[0]["password_hash"].as<std::string>()};
    });
  }
  const bool ok = row ? hasher_.Verify(password, row->second) : (hasher_.VerifyDummy(password), false);
  if (!ok) {
    throttle_.RecordFailure(user_key, now);
    throttle_.RecordFailure(client_key, now);
    out.status = LoginStatus::kWrongCredentials;
    return out;
  }
  throttle_.Clear(user_key);
  out.user = row->first;
  out.session_token = RandomSecret();
  out.csrf_token = RandomSecret();
  const std::optional<std::string> rehash =
      hasher_.NeedsRehash(row->second) ? std::optional(hasher_.Hash(password)) : std::nullopt;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params("DELETE FROM user_session WHERE expires_ms <= $1", now);
    tx.exec_params(
        "INSERT INTO user_session (token_hash, user_id, csrf_token, created_ms, expires_ms)"
        " VALUES ($1, $2, $3, $4, $5)",
        SecretHash(out.session_token), out.user.id, out.csrf_token, now,
        now + std::min(settings_.session_idle, settings_.session_max).count());
    if (rehash) {
      tx.exec_params("UPDATE app_user SET password_hash = $2 WHERE id = $1", out.user.id, *rehash);
    }
    tx.commit();
  });
  out.status = LoginStatus::kOk;
  return out;
}

bool AuthService::Logout(const httplib::Request& req) {
  const auto cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) return false;
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n =
        tx.exec_params("DELETE FROM user_session WHERE token_hash = $1", SecretHash(cookie)).affected_rows();
    tx.commit();
    return n > 0;
  });
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

void AuthService::EndSessions(int user_id, const std::string& keep_token_hash) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params("DELETE FROM user_session WHERE user_id = $1 AND token_hash <> $2", user_id,
                   keep_token_hash);
    tx.commit();
  });
}

// --- users ---------------------------------------------------------------------------------------------

std::vector<User> AuthService::ListUsers() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<User> out;
    for (const auto& r : tx.exec(std::string("SELECT ") + kUserColumns + " FROM app_user ORDER BY id"))
      out.push_back(UserFromRow(r));
    return out;
  });
}

std::optional<User> AuthService::GetUser(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<User> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kUserColumns + " FROM app_user WHERE id = $1", id);
    if (rows.empty()) return std::nullopt;
    return UserFromRow(rows[0]);
  });
}

UserChange AuthService::CreateUser(const nlohmann::json& body) {
  UserChange out;
  const auto f = ReadUserBody(body, true, out.errors);
  if (!out.errors.empty()) {
    out.outcome = Outcome::kInvalid;
    return out;
  }
  const auto hash = hasher_.Hash(*f.password);
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto groups = f.groups.value_or(std::vector<int>{});
    CheckGroupsExist(tx, groups, out.errors);
    if (!tx.exec_params("SELECT 1 FROM app_user WHERE username = $1", *f.username).empty())
      out.errors.push_back({"username", fmt::format("a user named '{}' exists already", *f.username)});
    if (!out.errors.empty()) {
      out.outcome = Outcome::kInvalid;
      return out;
    }
    const auto now = clock_.NowMs();
    const auto row = tx.exec_params1(
        std::string("INSERT INTO app_user (username, password_hash, role, permitted_group_ids, created_ms,"
                    " updated_ms) VALUES ($1, $2, $3, $4::int[], $5, $5) RETURNING ") +
            kUserColumns,
        *f.username, hash, f.admin.value_or(false) ? "ADMIN" : "USER", PgArray<int>(groups), now);
    tx.commit();
    out.after = UserFromRow(row);
    return out;
  });
}

UserChange AuthService::UpdateUser(int id, const nlohmann::json& body, int acting_user_id) {
  UserChange out;
  const auto f = ReadUserBody(body, false, out.errors);
  if (!out.errors.empty()) {
    out.outcome = Outcome::kInvalid;
    return out;
  }
  const std::optional<std::string> hash =
      f.password ? std::optional(hasher_.Hash(*f.password)) : std::nullopt;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kUserColumns + " FROM app_user WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) {
      out.outcome = Outcome::kNotFound;
      return;
    }
    out.before = UserFromRow(rows[0]);
    User u = *out.before;
    if (f.groups) {
      CheckGroupsExist(tx, *f.groups, out.errors);
      u.permitted_group_ids = *f.groups;
    }
    if (!out.errors.empty()) {
      out.outcome = Outcome::kInvalid;
      return;
    }
    if (f.admin && *f.admin != u.admin) {
      if (id == acting_user_id) {
        out.outcome = Outcome::kConflict;
        out.why = "you cannot change your own role; ask another admin";
        return;
      }
      if (u.admin && admins <= 1) {
        out.outcome = Outcome::kConflict;
        out.why = fmt::format("'{}' is the last admin; make another user an admin first", u.username);
        return;
      }
      u.admin = *f.admin;
    }
    const auto row = tx.exec_params1(
        std::string("UPDATE app_user SET role = $2, permitted_group_ids = $3::int[],"
                    " password_hash = COALESCE($4, password_hash), updated_ms = GREATEST($5, updated_ms + 1)"
                    " WHERE id = $1 RETURNING ") +
            kUserColumns,
        id, u.admin ? "ADMIN" : "USER", PgArray<int>(u.permitted_group_ids), hash, clock_.NowMs());
    if (hash) tx.exec_params("DELETE FROM user_session WHERE user_id = $1", id);
    tx.commit();
    out.after = UserFromRow(row);
  });
  return out;
}

UserChange AuthService::DeleteUser(int id, int acting_user_id) {
  UserChange out;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto rows =
        tx.exec_params(std::string("SELECT ") + kUserColumns + " FROM app_user WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) {
      out.outcome = Outcome::kNotFound;
      return;
    }
    out.before = UserFromRow(rows[0]);
    if (id == acting_user_id) {
      out.outcome = Outcome::kConflict;
      out.why = "you cannot delete yourself";
      return;
    }
    if (out.before->admin && admins <= 1) {
      out.outcome = Outcome::kConflict;
      out.why = fmt::format("'{}' is the last admin and cannot be deleted", out.before->username);
      return;
    }
    tx.exec_params("DELETE FROM app_user WHERE id = $1", id);
    tx.commit();
  });
  return out;
}

AuthService::PasswordChange AuthService::ChangeOwnPassword(int user_id, const nlohmann::json& body,
                                                           const httplib::Request& req) {
  PasswordChange out;
  const auto [old_password, new_password] = ReadPasswordChangeBody(body, out.errors);
  if (!out.errors.empty()) {
    out.outcome = Outcome::kInvalid;
    return out;
  }
  const auto now = clock_.NowMs();
  const std::string key = fmt::format("password:{}", user_id);
  if (const auto wait = throttle_.RetryAfter(key, now)) {
    out.throttled = true;
    out.retry_after = *wait;
    out.outcome = Outcome::kInvalid;
    return out;
  }
  const auto stored = WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params("SELECT password_hash FROM app_user WHERE id = $1", user_id);
    if (rows.empty()) return std::nullopt;
    return rows[0][0].as<std::string>();
  });
  if (!stored) {
    out.outcome = Outcome::kNotFound;
    return out;
  }
  if (!hasher_.Verify(old_password, *stored)) {
    throttle_.RecordFailure(key, now);
    out.errors.push_back({"old_password", "is wrong"});
    out.outcome = Outcome::kInvalid;
    return out;
  }
  throttle_.Clear(key);
  const auto hash = hasher_.Hash(new_password);
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        "UPDATE app_user SET password_hash = $2, updated_ms = GREATEST($3, updated_ms + 1) WHERE id = $1",
        user_id, hash, now);
    tx.commit();
  });
  const auto cookie = CookieValue(req, kSessionCookie);
  EndSessions(user_id, cookie.empty() ? "" : SecretHash(cookie));
  return out;
}

// --- API tokens ----------------------------------------------------------------------------------------

std::vector<ApiToken> AuthService::ListTokens(std::optional<int> user_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<ApiToken> out;
    const std::string sql =
        "SELECT t.id, t.user_id, u.username, t.name, t.created_ms, t.last_used_ms FROM api_token t"
        " JOIN app_user u ON u.id = t.user_id";
    const auto rows = user_id ? tx.exec_params(sql + " WHERE t.user_id = $1 ORDER BY t.id", *user_id)
                              : tx.exec(sql + " ORDER BY t.id");
    for (const auto& r : rows)
      out.push_back(TokenFromRow(r));
    return out;
  });
}

Validated<std::pair<ApiToken, std::string>> AuthService::CreateToken(int user_id,
                                                                     const nlohmann::json& body) {
  FieldErrors errors;
  const std::string name = ReadTokenBody(body, errors);
  if (!errors.empty()) return errors;
  const std::string secret = kTokenPrefix + RandomSecret();
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Validated<std::pair<ApiToken, std::string>> {
    pqxx::work tx(conn);
    tx.exec_params("SELECT 1 FROM app_user WHERE id = $1 FOR UPDATE", user_id);
    const auto count =
        tx.exec_params1("SELECT count(*) FROM api_token WHERE user_id = $1", user_id)[0].as<std::size_t>();
    if (count >= kMaxTokensPerUser) {
      return FieldErrors{
          {"name", fmt::format("you have {} API tokens, the most allowed; delete one first", count)}};
    }
    const auto row = tx.exec_params1(
        "WITH t AS (INSERT INTO api_token (user_id, name, token_hash, created_ms) VALUES ($1, $2, $3, $4)"
        " RETURNING id, user_id, name, created_ms, last_used_ms)"
        " SELECT t.*, u.username FROM t JOIN app_user u ON u.id = t.user_id",
        user_id, name, SecretHash(secret), clock_.NowMs());
    tx.commit();
    return std::pair{TokenFromRow(row), secret};
  });
}

std::optional<ApiToken> AuthService::DeleteToken(int id, std::optional<int> owner) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<ApiToken> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(
        "WITH t AS (DELETE FROM api_token WHERE id = $1 AND ($2::int IS NULL OR user_id = $2)"
        " RETURNING id, user_id, name, created_ms, last_used_ms)"
        " SELECT t.*, u.username FROM t JOIN app_user u ON u.id = t.user_id",
        id, owner);
    tx.commit();
    if (rows.empty()) return std::nullopt;
    return TokenFromRow(rows[0]);
  });
}

}  // namespace cronwheel::admin
