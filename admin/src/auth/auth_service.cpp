#include "admin/auth/auth_service.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "admin/model/validation.hpp"
#include "auth/secrets.hpp"
#include "model/time_format.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

// pg_advisory_xact_lock key of the first-start bootstrap ("cronusr1").
constexpr std::int64_t kUserBootstrapLockKey = 0x63726f6e75737231;
constexpr const char* kTokenPrefix = "cwt_";
// Session expiry and token last_used_ms are renewed at most once a minute.
constexpr std::int64_t kRenewEveryMs = 60'000;

Principal PrincipalFromRow(const pqxx::row& r, std::string via) {
  return Principal{.user_id = r["id"].as<int>(),
                   .username = r["username"].as<std::string>(),
                   .admin = r["role"].as<std::string>() == "ADMIN",
                   .group_ids = nlohmann::json::parse(r["groups"].c_str()).get<std::vector<int>>(),
                   .via = std::move(via),
                   .csrf_token = ""};
}

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

AuthService::AuthService(Settings settings, ringwheel::Clock& clock, PgPool& pool)
    : settings_(settings),
      clock_(clock),
      pool_(pool),
      hasher_(settings.hashing),
      throttle_(settings.throttle) {}

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
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<Principal> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(R"sql(
      SELECT s.csrf_token, s.created_ms AS session_created_ms, s.expires_ms, u.id, u.username, u.role,
             to_json(u.permitted_group_ids) AS groups
        FROM user_session s JOIN app_user u ON u.id = s.user_id
       WHERE s.token_hash = $1
    )sql",
                                     hash);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    const auto now = clock_.NowMs();
    const auto expires = r["expires_ms"].as<std::int64_t>();
    if (expires <= now) {
      tx.exec_params(R"sql(DELETE FROM user_session WHERE token_hash = $1)sql", hash);
      tx.commit();
      return std::nullopt;
    }
    const auto renewed = std::min(r["session_created_ms"].as<std::int64_t>() + settings_.session_max.count(),
                                  now + settings_.session_idle.count());
    if (renewed - expires >= kRenewEveryMs) {
      tx.exec_params(R"sql(UPDATE user_session SET expires_ms = $2 WHERE token_hash = $1)sql", hash, renewed);
    }
    tx.commit();
    auto p = PrincipalFromRow(r, "session");
    p.csrf_token = r["csrf_token"].as<std::string>();
    return p;
  });
}

Result<Principal> AuthService::TokenPrincipal(const std::string& bearer) {
  const auto unknown = Error::Unauthenticated("the API token is not valid (unknown or deleted)");
  if (!bearer.starts_with(kTokenPrefix) || bearer.size() > 200) return unknown;
  const auto hash = SecretHash(bearer);
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<Principal> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(R"sql(
      SELECT t.id AS token_id, t.last_used_ms, t.expires_ms, t.revoked_ms, t.revoked_reason, u.id, u.username,
             u.role, to_json(u.permitted_group_ids) AS groups
        FROM api_token t JOIN app_user u ON u.id = t.user_id
       WHERE t.token_hash = $1
    )sql",
                                     hash);
    if (rows.empty()) return unknown;
    const auto& r = rows[0];
    const auto now = clock_.NowMs();
    if (const auto revoked = r["revoked_ms"].as<std::int64_t>(); revoked > 0) {
      return Error::Unauthenticated(fmt::format(
          "the API token was revoked at {} when {}: create a new one", FormatUtc(revoked),
          r["revoked_reason"].as<std::string>() == "password_reset" ? "an admin reset its user's password"
                                                                    : "its user changed their password"));
    }
    if (const auto expires = r["expires_ms"].as<std::int64_t>(); now >= expires) {
      return Error::Unauthenticated(
          fmt::format("the API token expired at {}: create a new one", FormatUtc(expires)));
    }
    if (now - r["last_used_ms"].as<std::int64_t>() >= kRenewEveryMs) {
      tx.exec_params(R"sql(UPDATE api_token SET last_used_ms = $2 WHERE id = $1)sql", r["token_id"].as<int>(),
                     now);
    }
    tx.commit();
    return PrincipalFromRow(r, "token");
  });
}

std::optional<std::string> AuthService::EnsureAdminUser(const std::string& password) {
  if (!password.empty()) {
    if (auto ok = CheckPasswordPolicy(password); !ok)
      throw std::invalid_argument(fmt::format("admin_password {}", ok.error().message));
  }
  const bool any = WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec1(R"sql(SELECT EXISTS (SELECT 1 FROM app_user))sql")[0].as<bool>();
  });
  if (any) return std::nullopt;
  const std::string chosen = password.empty() ? RandomSecret().substr(0, 24) : password;
  const auto hash = hasher_.Hash(chosen);
  const bool created = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT pg_advisory_xact_lock($1))sql", kUserBootstrapLockKey);
    const auto n = tx.exec_params(R"sql(
                       INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms)
                       SELECT 'admin', $1, 'ADMIN', $2, $2 WHERE NOT EXISTS (SELECT 1 FROM app_user)
                     )sql",
                                  hash, clock_.NowMs())
                       .affected_rows();
    tx.commit();
    return n == 1;
  });
  if (!created) return std::nullopt;
  return chosen;
}

Result<AuthService::Session> AuthService::Login(const std::string& username, const std::string& password,
                                                const std::string& client) {
  const auto now = clock_.NowMs();
  // The attempt takes its place on the throttle before the password is checked (login_throttle.hpp).
  auto admission = throttle_.BeginLogin(username, client, now);
  if (!admission.ticket) return Error::Throttled("too many failed logins", admission.retry_after);
  std::optional<std::pair<User, std::string>> row;
  if (ValidUsername(username)) {
    row = WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::pair<User, std::string>> {
      pqxx::read_transaction tx(conn);
      const auto rows = tx.exec_params(
          fmt::format("SELECT {}, password_hash FROM app_user WHERE username = $1", kUserColumns), username);
      if (rows.empty()) return std::nullopt;
      return std::pair{UserFromRow(rows[0]), rows[0]["password_hash"].as<std::string>()};
    });
  }
  const bool ok = row ? hasher_.Verify(password, row->second) : (hasher_.VerifyDummy(password), false);
  if (!ok) {
    admission.ticket->Failed(clock_.NowMs());
    return Error::Unauthenticated("wrong username or password");
  }
  admission.ticket->Succeeded(clock_.NowMs());
  Session session{.token = RandomSecret(), .csrf_token = RandomSecret(), .user = row->first};
  const std::optional<std::string> rehash =
      hasher_.NeedsRehash(row->second) ? std::optional(hasher_.Hash(password)) : std::nullopt;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM user_session WHERE expires_ms <= $1)sql", now);
    tx.exec_params(R"sql(
      INSERT INTO user_session (token_hash, user_id, csrf_token, created_ms, expires_ms)
      VALUES ($1, $2, $3, $4, $5)
    )sql",
                   SecretHash(session.token), session.user.id, session.csrf_token, now,
                   now + std::min(settings_.session_idle, settings_.session_max).count());
    if (rehash) {
      tx.exec_params(R"sql(UPDATE app_user SET password_hash = $2 WHERE id = $1)sql", session.user.id,
                     *rehash);
    }
    tx.commit();
  });
  return session;
}

bool AuthService::Logout(const net::Request& req) {
  const auto cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) return false;
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n =
        tx.exec_params(R"sql(DELETE FROM user_session WHERE token_hash = $1)sql", SecretHash(cookie))
            .affected_rows();
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

void AuthService::EndSessions(int user_id, const std::string& keep_cookie) {
  const std::string keep = keep_cookie.empty() ? "" : SecretHash(keep_cookie);
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM user_session WHERE user_id = $1 AND token_hash <> $2)sql", user_id,
                   keep);
    tx.commit();
  });
}

}  // namespace cronwheel::admin
