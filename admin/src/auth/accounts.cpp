#include "admin/auth/accounts.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "auth/secrets.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kTokenPrefix = "cwt_";
constexpr std::size_t kMaxTokensPerUser = 100;
constexpr const char* kTokenColumns =
    "id, user_id, name, created_ms, last_used_ms, expires_ms, revoked_ms, revoked_reason";
constexpr std::int64_t kDayMs = 86'400'000;

// Revokes the user's tokens that are not revoked yet (accounts.hpp: a password set or changed).
void RevokeTokens(pqxx::transaction_base& tx, int user_id, std::int64_t now_ms, const char* reason) {
  tx.exec_params(R"sql(
    UPDATE api_token SET revoked_ms = $2, revoked_reason = $3 WHERE user_id = $1 AND revoked_ms = 0
  )sql",
                 user_id, now_ms, reason);
}

// The token with its state as of `now_ms`.
ApiToken WithState(ApiToken t, std::int64_t now_ms) {
  t.state = t.revoked_ms > 0 ? "revoked" : now_ms >= t.expires_ms ? "expired" : "active";
  return t;
}

// Adds an error for each id that is not a group.
void CheckGroupsExist(pqxx::transaction_base& tx, const std::vector<int>& ids, FieldErrors& errors) {
  if (ids.empty()) return;
  std::set<int> found;
  for (const auto& r :
       tx.exec_params(R"sql(SELECT id FROM job_group WHERE id = ANY($1::int[]))sql", PgArray<int>(ids)))
    found.insert(r["id"].as<int>());
  for (const int id : ids) {
    if (!found.contains(id)) {
      errors.push_back(
          {"permitted_group_ids", fmt::format("job group {} does not exist", id), "not_found", {{"id", id}}});
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
      tx.exec_params(fmt::format("SELECT {} FROM app_user WHERE id = $1 FOR UPDATE", kUserColumns), id);
  if (rows.empty()) return std::nullopt;
  return UserFromRow(rows[0]);
}

}  // namespace

std::vector<User> Accounts::ListUsers() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<User> out;
    for (const auto& r : tx.exec(fmt::format("SELECT {} FROM app_user ORDER BY id", kUserColumns)))
      out.push_back(UserFromRow(r));
    return out;
  });
}

std::optional<User> Accounts::GetUser(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<User> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM app_user WHERE id = $1", kUserColumns), id);
    if (rows.empty()) return std::nullopt;
    return UserFromRow(rows[0]);
  });
}

Result<UserChange> Accounts::CreateUser(const UserFields& f) {
  const auto hash = auth_.hasher().Hash(f.password.value_or(""));
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const auto groups = f.groups.value_or(std::vector<int>{});
    FieldErrors errors;
    CheckGroupsExist(tx, groups, errors);
    const auto& username = f.username.value_or("");
    if (!tx.exec_params(R"sql(SELECT 1 FROM app_user WHERE username = $1)sql", username).empty()) {
      errors.push_back({"username",
                        fmt::format("a user named '{}' exists already", username),
                        "exists",
                        {{"value", username}}});
    }
    if (!errors.empty()) return Error::Invalid("the user is not valid", std::move(errors));
    const auto row = tx.exec_params1(fmt::format(R"sql(
      INSERT INTO app_user (username, password_hash, role, permitted_group_ids, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4::int[], $5, $5)
      RETURNING {}
    )sql",
                                                 kUserColumns),
                                     username, hash, f.admin.value_or(false) ? "ADMIN" : "USER",
                                     PgArray<int>(groups), clock_.NowMs());
    tx.commit();
    return UserChange{.before = std::nullopt, .after = UserFromRow(row)};
  });
}

Result<UserChange> Accounts::UpdateUser(int id, const UserFields& f, int acting_user_id) {
  const std::optional<std::string> hash =
      f.password ? std::optional(auth_.hasher().Hash(*f.password)) : std::nullopt;
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto before = LockUser(tx, id);
    if (!before) return Error::NotFound("user not found");
    User u = *before;
    FieldErrors errors;
    if (f.groups) {
      CheckGroupsExist(tx, *f.groups, errors);
      u.permitted_group_ids = *f.groups;
    }
    if (!errors.empty()) return Error::Invalid("the user is not valid", std::move(errors));
    if (f.admin && *f.admin != u.admin) {
      if (id == acting_user_id) return Error::Conflict("you cannot change your own role; ask another admin");
      if (u.admin && admins <= 1) {
        return Error::Conflict(
            fmt::format("'{}' is the last admin; make another user an admin first", u.username));
      }
      u.admin = *f.admin;
    }
    const auto row = tx.exec_params1(fmt::format(R"sql(
      UPDATE app_user
         SET role = $2, permitted_group_ids = $3::int[], password_hash = COALESCE($4, password_hash),
             updated_ms = GREATEST($5, updated_ms + 1)
       WHERE id = $1
      RETURNING {}
    )sql",
                                                 kUserColumns),
                                     id, u.admin ? "ADMIN" : "USER", PgArray<int>(u.permitted_group_ids),
                                     hash, clock_.NowMs());
    if (hash) {
      // A password set by an admin ends the user's sessions and revokes their API tokens: whoever had them
      // may be why it was reset.
      tx.exec_params(R"sql(DELETE FROM user_session WHERE user_id = $1)sql", id);
      RevokeTokens(tx, id, clock_.NowMs(), "password_reset");
    }
    tx.commit();
    return UserChange{.before = before, .after = UserFromRow(row)};
  });
}

Result<UserChange> Accounts::DeleteUser(int id, int acting_user_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const int admins = LockAdmins(tx);
    const auto before = LockUser(tx, id);
    if (!before) return Error::NotFound("user not found");
    if (id == acting_user_id) return Error::Conflict("you cannot delete yourself");
    if (before->admin && admins <= 1) {
      return Error::Conflict(fmt::format("'{}' is the last admin and cannot be deleted", before->username));
    }
    tx.exec_params(R"sql(DELETE FROM app_user WHERE id = $1)sql", id);
    tx.commit();
    return UserChange{.before = before, .after = std::nullopt};
  });
}

Result<void> Accounts::ChangeOwnPassword(int user_id, const PasswordChange& change,
                                         const std::string& keep_cookie) {
  const auto now = clock_.NowMs();
  auto admission = auth_.throttle().Begin(fmt::format("password:{}", user_id), now);
  if (!admission.ticket) return Error::Throttled("too many wrong passwords", admission.retry_after);
  const auto stored = WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(R"sql(SELECT password_hash FROM app_user WHERE id = $1)sql", user_id);
    if (rows.empty()) return std::nullopt;
    return rows[0]["password_hash"].as<std::string>();
  });
  if (!stored) return Error::NotFound("user not found");
  if (!auth_.hasher().Verify(change.old_password, *stored)) {
    admission.ticket->Failed(clock_.NowMs());
    return Error::Invalid("the password was not changed", {{"old_password", "is wrong"}});
  }
  admission.ticket->Succeeded(clock_.NowMs());
  const auto hash = auth_.hasher().Hash(change.new_password);
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        R"sql(UPDATE app_user SET password_hash = $2, updated_ms = GREATEST($3, updated_ms + 1) WHERE id = $1)sql",
        user_id, hash, now);
    RevokeTokens(tx, user_id, now, "password_changed");
    tx.commit();
  });
  auth_.EndSessions(user_id, keep_cookie);
  return {};
}

std::vector<ApiToken> Accounts::ListTokens(std::optional<int> user_id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<ApiToken> out;
    const std::string sql = R"sql(
      SELECT t.id, t.user_id, u.username, t.name, t.created_ms, t.last_used_ms, t.expires_ms, t.revoked_ms,
             t.revoked_reason
        FROM api_token t JOIN app_user u ON u.id = t.user_id
    )sql";
    const auto rows = user_id ? tx.exec_params(sql + " WHERE t.user_id = $1 ORDER BY t.id", *user_id)
                              : tx.exec(sql + " ORDER BY t.id");
    const auto now = clock_.NowMs();
    for (const auto& r : rows)
      out.push_back(WithState(TokenFromRow(r), now));
    return out;
  });
}

Result<std::pair<ApiToken, std::string>> Accounts::CreateToken(int user_id, const TokenFields& fields) {
  const std::string secret = kTokenPrefix + RandomSecret();
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<std::pair<ApiToken, std::string>> {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT 1 FROM app_user WHERE id = $1 FOR UPDATE)sql", user_id);
    const auto count =
        tx.exec_params1(R"sql(SELECT count(*) FROM api_token WHERE user_id = $1)sql", user_id)[0]
            .as<std::size_t>();
    if (count >= kMaxTokensPerUser) {
      return Error::Invalid(
          "the token is not valid",
          {{"name", fmt::format("you have {} API tokens, the most allowed; delete one first", count)}});
    }
    const auto now = clock_.NowMs();
    const auto row =
        tx.exec_params1(fmt::format(R"sql(
      WITH t AS (INSERT INTO api_token (user_id, name, token_hash, created_ms, expires_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 RETURNING {})
      SELECT t.*, u.username FROM t JOIN app_user u ON u.id = t.user_id
    )sql",
                                    kTokenColumns),
                        user_id, fields.name, SecretHash(secret), now, now + fields.expires_in_days * kDayMs);
    tx.commit();
    return std::pair{WithState(TokenFromRow(row), now), secret};
  });
}

std::optional<ApiToken> Accounts::DeleteToken(int id, std::optional<int> owner) {
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
    return WithState(TokenFromRow(rows[0]), clock_.NowMs());
  });
}

}  // namespace cronwheel::admin
