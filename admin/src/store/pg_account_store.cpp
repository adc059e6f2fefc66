#include "admin/store/pg_account_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

// pg_advisory_xact_lock key of the first-start bootstrap ("cronusr1").
constexpr std::int64_t kUserBootstrapLockKey = 0x63726f6e75737231;
constexpr const char* kTokenColumns =
    "id, user_id, name, scope, created_ms, last_used_ms, expires_ms, revoked_ms, revoked_reason";

Principal PrincipalFromRow(const pqxx::row& r, std::string via) {
  return Principal{.user_id = r["id"].as<int>(),
                   .username = r["username"].as<std::string>(),
                   .admin = r["role"].as<std::string>() == "ADMIN",
                   .groups = GrantsFromJson(r["groups"].c_str()),
                   .via = std::move(via),
                   .csrf_token = "",
                   .login_source = r["login_source"].as<std::string>()};
}

void RevokeTokens(pqxx::transaction_base& tx, int user_id, std::int64_t now_ms, const std::string& reason) {
  tx.exec_params(R"sql(
    UPDATE api_token SET revoked_ms = $2, revoked_reason = $3 WHERE user_id = $1 AND revoked_ms = 0
  )sql",
                 user_id, now_ms, reason);
}

// Adds an error for each group of `grants` that does not exist (on the field group_roles: Accounts names
// the field the request gave).
void CheckGroupsExist(pqxx::transaction_base& tx, const std::vector<GroupGrant>& grants,
                      FieldErrors& errors) {
  if (grants.empty()) return;
  std::vector<int> ids;
  ids.reserve(grants.size());
  for (const auto& g : grants)
    ids.push_back(g.group_id);
  std::set<int> found;
  for (const auto& r :
       tx.exec_params(R"sql(SELECT id FROM job_group WHERE id = ANY($1::int[]))sql", PgArray<int>(ids)))
    found.insert(r["id"].as<int>());
  for (const int id : ids) {
    if (!found.contains(id)) {
      errors.push_back(
          {"group_roles", fmt::format("job group {} does not exist", id), "not_found", {{"id", id}}});
    }
  }
}

// Locks every admin row (in id order, so concurrent changes serialise) and counts them.
int LockAdmins(pqxx::transaction_base& tx) {
  return static_cast<int>(
      tx.exec(R"sql(SELECT id FROM app_user WHERE role = 'ADMIN' ORDER BY id FOR UPDATE)sql").size());
}

std::optional<User> LockUser(pqxx::transaction_base& tx, int id) {
  const auto rows =
      tx.exec_params(fmt::format("SELECT {} FROM app_user WHERE id = $1 FOR UPDATE", UserColumns()), id);
  if (rows.empty()) return std::nullopt;
  return UserFromRow(rows[0]);
}

}  // namespace

std::vector<User> PgAccountStore::ListUsers() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<User> out;
    for (const auto& r : tx.exec(fmt::format("SELECT {} FROM app_user ORDER BY id", UserColumns())))
      out.push_back(UserFromRow(r));
    return out;
  });
}

std::optional<User> PgAccountStore::GetUser(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<User> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM app_user WHERE id = $1", UserColumns()), id);
    if (rows.empty()) return std::nullopt;
    return UserFromRow(rows[0]);
  });
}

std::optional<UserLogin> PgAccountStore::FindLogin(const std::string& username) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<UserLogin> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(
        fmt::format("SELECT {}, password_hash FROM app_user WHERE username = $1", UserColumns()), username);
    if (rows.empty()) return std::nullopt;
    return UserLogin{UserFromRow(rows[0]), rows[0]["password_hash"].as<std::string>()};
  });
}

std::optional<std::string> PgAccountStore::PasswordHash(int user_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(R"sql(SELECT password_hash FROM app_user WHERE id = $1)sql", user_id);
    if (rows.empty()) return std::nullopt;
    return rows[0]["password_hash"].as<std::string>();
  });
}

bool PgAccountStore::AnyUser() {
  return WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec1(R"sql(SELECT EXISTS (SELECT 1 FROM app_user))sql")[0].as<bool>();
  });
}

bool PgAccountStore::CreateFirstAdmin(const std::string& password_hash, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT pg_advisory_xact_lock($1))sql", kUserBootstrapLockKey);
    const auto n = tx.exec_params(R"sql(
                       INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms)
                       SELECT 'admin', $1, 'ADMIN', $2, $2 WHERE NOT EXISTS (SELECT 1 FROM app_user)
                     )sql",
                                  password_hash, now_ms)
                       .affected_rows();
    tx.commit();
    return n == 1;
  });
}

Result<User> PgAccountStore::CreateUser(const User& user, const std::string& password_hash,
                                        std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<User> {
    pqxx::work tx(conn);
    FieldErrors errors;
    CheckGroupsExist(tx, user.groups, errors);
    if (!tx.exec_params(R"sql(SELECT 1 FROM app_user WHERE username = $1)sql", user.username).empty()) {
      errors.push_back({"username",
                        fmt::format("a user named '{}' exists already", user.username),
                        "exists",
                        {{"value", user.username}}});
    }
    if (!errors.empty()) return Error::Invalid("the user is not valid", std::move(errors));
    const auto id = tx.exec_params1(R"sql(
      INSERT INTO app_user (username, password_hash, role, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $4)
      RETURNING id
    )sql",
                                    user.username, password_hash, user.admin ? "ADMIN" : "USER", now_ms)[0]
                        .as<int>();
    WriteGrants(tx, id, user.groups);
    auto created = ReadUser(tx, id);
    tx.commit();
    return created;
  });
}

Result<UserChange> PgAccountStore::EditUser(int id, const DecideEdit& decide, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto before = LockUser(tx, id);
    if (!before) return Error::NotFound("user not found");
    auto write = decide(*before, admins);
    if (!write) return write.error();
    if (write->user.groups != before->groups) {
      FieldErrors errors;
      CheckGroupsExist(tx, write->user.groups, errors);
      if (!errors.empty()) return Error::Invalid("the user is not valid", std::move(errors));
      WriteGrants(tx, id, write->user.groups);
    }
    tx.exec_params(R"sql(
      UPDATE app_user
         SET role = $2, password_hash = COALESCE($3, password_hash), updated_ms = GREATEST($4, updated_ms + 1)
       WHERE id = $1
    )sql",
                   id, write->user.admin ? "ADMIN" : "USER", write->password_hash, now_ms);
    if (write->password_hash) {
      tx.exec_params(R"sql(DELETE FROM user_session WHERE user_id = $1)sql", id);
      RevokeTokens(tx, id, now_ms, write->revoke_reason);
    }
    auto after = ReadUser(tx, id);
    tx.commit();
    return UserChange{.before = before, .after = std::move(after)};
  });
}

Result<UserChange> PgAccountStore::DeleteUser(int id, const DecideDelete& allow) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto before = LockUser(tx, id);
    if (!before) return Error::NotFound("user not found");
    if (auto ok = allow(*before, admins); !ok) return ok.error();
    tx.exec_params(R"sql(DELETE FROM app_user WHERE id = $1)sql", id);
    tx.commit();
    return UserChange{.before = before, .after = std::nullopt};
  });
}

void PgAccountStore::SetPassword(int user_id, const std::string& password_hash,
                                 const std::string& revoke_reason, std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        R"sql(UPDATE app_user SET password_hash = $2, updated_ms = GREATEST($3, updated_ms + 1) WHERE id = $1)sql",
        user_id, password_hash, now_ms);
    RevokeTokens(tx, user_id, now_ms, revoke_reason);
    tx.commit();
  });
}

void PgAccountStore::AddSession(const std::string& token_hash, int user_id, const std::string& csrf_token,
                                std::int64_t now_ms, std::int64_t expires_ms,
                                const std::optional<std::string>& rehash) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM user_session WHERE expires_ms <= $1)sql", now_ms);
    tx.exec_params(R"sql(
      INSERT INTO user_session (token_hash, user_id, csrf_token, created_ms, expires_ms)
      VALUES ($1, $2, $3, $4, $5)
    )sql",
                   token_hash, user_id, csrf_token, now_ms, expires_ms);
    if (rehash) {
      tx.exec_params(R"sql(UPDATE app_user SET password_hash = $2 WHERE id = $1)sql", user_id, *rehash);
    }
    tx.commit();
  });
}

std::optional<SessionRecord> PgAccountStore::FindSession(const std::string& token_hash, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<SessionRecord> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(fmt::format(R"sql(
      SELECT s.csrf_token, s.created_ms AS session_created_ms, s.expires_ms, u.id, u.username, u.role, u.login_source,
             {} AS groups
        FROM user_session s JOIN app_user u ON u.id = s.user_id
       WHERE s.token_hash = $1
    )sql",
                                                 UserGroupsColumn("u")),
                                     token_hash);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    if (r["expires_ms"].as<std::int64_t>() <= now_ms) {
      tx.exec_params(R"sql(DELETE FROM user_session WHERE token_hash = $1)sql", token_hash);
      tx.commit();
      return std::nullopt;
    }
    tx.commit();
    SessionRecord s{.principal = PrincipalFromRow(r, "session"),
                    .created_ms = r["session_created_ms"].as<std::int64_t>(),
                    .expires_ms = r["expires_ms"].as<std::int64_t>()};
    s.principal.csrf_token = r["csrf_token"].as<std::string>();
    return s;
  });
}

void PgAccountStore::RenewSession(const std::string& token_hash, std::int64_t expires_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(UPDATE user_session SET expires_ms = $2 WHERE token_hash = $1)sql", token_hash,
                   expires_ms);
    tx.commit();
  });
}

bool PgAccountStore::DeleteSession(const std::string& token_hash) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n =
        tx.exec_params(R"sql(DELETE FROM user_session WHERE token_hash = $1)sql", token_hash).affected_rows();
    tx.commit();
    return n > 0;
  });
}

void PgAccountStore::DeleteSessions(int user_id, const std::string& keep_hash) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM user_session WHERE user_id = $1 AND token_hash <> $2)sql", user_id,
                   keep_hash);
    tx.commit();
  });
}

std::optional<TokenRecord> PgAccountStore::FindToken(const std::string& token_hash) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<TokenRecord> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format(R"sql(
      SELECT t.id AS token_id, t.name AS token_name, t.scope, t.last_used_ms, t.expires_ms, t.revoked_ms,
             t.revoked_reason, u.id, u.username, u.role, u.login_source, {} AS groups
        FROM api_token t JOIN app_user u ON u.id = t.user_id
       WHERE t.token_hash = $1
    )sql",
                                                 UserGroupsColumn("u")),
                                     token_hash);
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    auto principal = PrincipalFromRow(r, "token");
    // The column's CHECK admits only the four names; read as the least scope should it ever hold another.
    principal.scope = ParseTokenScope(r["scope"].as<std::string>()).value_or(TokenScope::kRead);
    principal.token_id = r["token_id"].as<int>();
    principal.token_name = r["token_name"].as<std::string>();
    return TokenRecord{.principal = std::move(principal),
                       .token_id = r["token_id"].as<int>(),
                       .last_used_ms = r["last_used_ms"].as<std::int64_t>(),
                       .expires_ms = r["expires_ms"].as<std::int64_t>(),
                       .revoked_ms = r["revoked_ms"].as<std::int64_t>(),
                       .revoked_reason = r["revoked_reason"].as<std::string>()};
  });
}

void PgAccountStore::TouchToken(int token_id, std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(UPDATE api_token SET last_used_ms = $2 WHERE id = $1)sql", token_id, now_ms);
    tx.commit();
  });
}

std::vector<ApiToken> PgAccountStore::ListTokens(std::optional<int> user_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<ApiToken> out;
    const std::string sql = R"sql(
      SELECT t.id, t.user_id, u.username, t.name, t.scope, t.created_ms, t.last_used_ms, t.expires_ms,
             t.revoked_ms, t.revoked_reason
        FROM api_token t JOIN app_user u ON u.id = t.user_id
    )sql";
    const auto rows = user_id ? tx.exec_params(sql + " WHERE t.user_id = $1 ORDER BY t.id", *user_id)
                              : tx.exec(sql + " ORDER BY t.id");
    for (const auto& r : rows)
      out.push_back(TokenFromRow(r));
    return out;
  });
}

Result<ApiToken> PgAccountStore::AddToken(int user_id, const std::string& name, TokenScope scope,
                                          const std::string& token_hash, std::int64_t now_ms,
                                          std::int64_t expires_ms, std::size_t max_tokens) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<ApiToken> {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT 1 FROM app_user WHERE id = $1 FOR UPDATE)sql", user_id);
    const auto count =
        tx.exec_params1(R"sql(SELECT count(*) FROM api_token WHERE user_id = $1)sql", user_id)[0]
            .as<std::size_t>();
    if (count >= max_tokens) {
      return Error::Invalid(
          "the token is not valid",
          {{"name", fmt::format("you have {} API tokens, the most allowed; delete one first", count)}});
    }
    const auto row =
        tx.exec_params1(fmt::format(R"sql(
      WITH t AS (INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms, scope)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 RETURNING {})
      SELECT t.*, u.username FROM t JOIN app_user u ON u.id = t.user_id
    )sql",
                                    kTokenColumns),
                        user_id, name, token_hash, now_ms, expires_ms, std::string(ToString(scope)));
    tx.commit();
    return TokenFromRow(row);
  });
}

std::optional<ApiToken> PgAccountStore::DeleteToken(int id, std::optional<int> owner) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<ApiToken> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(fmt::format(R"sql(
      WITH t AS (DELETE FROM api_token WHERE id = $1 AND ($2::int IS NULL OR user_id = $2) RETURNING {})
      SELECT t.*, u.username FROM t JOIN app_user u ON u.id = t.user_id
    )sql",
                                                 kTokenColumns),
                                     id, owner);
    tx.commit();
    if (rows.empty()) return std::nullopt;
    return TokenFromRow(rows[0]);
  });
}

void PgAccountStore::AddCliLogin(const CliLoginRecord& login, std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM cli_login WHERE expires_ms <= $1)sql", now_ms);
    tx.exec_params(R"sql(
      INSERT INTO cli_login (code_hash, user_id, code_challenge, token_name, token_scope, token_days,
                             created_ms, expires_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    )sql",
                   login.code_hash, login.user_id, login.code_challenge, login.token.name,
                   std::string(ToString(login.token.scope)), login.token.expires_in_days, login.created_ms,
                   login.expires_ms);
    tx.commit();
  });
}

std::optional<CliLoginRecord> PgAccountStore::TakeCliLogin(const std::string& code_hash,
                                                           std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<CliLoginRecord> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(R"sql(
      DELETE FROM cli_login WHERE code_hash = $1
      RETURNING user_id, code_challenge, token_name, token_scope, token_days, created_ms, expires_ms
    )sql",
                                     code_hash);
    tx.commit();
    if (rows.empty() || rows[0]["expires_ms"].as<std::int64_t>() <= now_ms) return std::nullopt;
    const auto& r = rows[0];
    return CliLoginRecord{
        .code_hash = code_hash,
        .user_id = r["user_id"].as<int>(),
        .code_challenge = r["code_challenge"].as<std::string>(),
        .token = {.name = r["token_name"].as<std::string>(),
                  .expires_in_days = r["token_days"].as<int>(),
                  .scope = ParseTokenScope(r["token_scope"].as<std::string>()).value_or(TokenScope::kRead)},
        .created_ms = r["created_ms"].as<std::int64_t>(),
        .expires_ms = r["expires_ms"].as<std::int64_t>()};
  });
}

}  // namespace cronwheel::admin
