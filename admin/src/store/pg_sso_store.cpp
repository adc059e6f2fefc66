#include "admin/store/pg_sso_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

// pg_advisory_xact_lock key of a single sign-on user's creation ("cronsso1"): two first logins of one
// person at once create one user.
constexpr std::int64_t kSsoUserLockKey = 0x63726f6e73736f31;

// The grants of `groups` (by app_name) for existing groups, in one query; the app_names no group has go to
// `skipped`. app_name is not unique across groups (XXL-JOB allows one executor app in several groups): each
// gets the role.
std::vector<GroupGrant> ResolveGroups(pqxx::transaction_base& tx,
                                      const std::vector<std::pair<std::string, GroupRole>>& groups,
                                      std::vector<std::string>& skipped) {
  std::vector<std::string> names;
  names.reserve(groups.size());
  for (const auto& g : groups)
    names.push_back(g.first);
  std::multimap<std::string, int> ids;  // app_name -> group id
  for (const auto& r :
       tx.exec_params(R"sql(SELECT app_name, id FROM job_group WHERE app_name = ANY($1::text[]))sql",
                      PgTextArray(names)))
    ids.emplace(r["app_name"].as<std::string>(), r["id"].as<int>());
  std::vector<GroupGrant> grants;
  grants.reserve(ids.size());
  for (const auto& [app_name, role] : groups) {
    const auto [first, last] = ids.equal_range(app_name);
    if (first == last) skipped.push_back(app_name);
    for (auto it = first; it != last; ++it)
      grants.push_back({.group_id = it->second, .role = role});
  }
  std::sort(grants.begin(), grants.end(),
            [](const GroupGrant& a, const GroupGrant& b) { return a.group_id < b.group_id; });
  return grants;
}

// The user linked to (source, subject), if any.
std::optional<int> LinkedUser(pqxx::transaction_base& tx, const std::string& source,
                              const std::string& subject) {
  const auto rows = tx.exec_params(
      R"sql(SELECT id FROM app_user WHERE login_source = $1 AND external_subject = $2)sql", source, subject);
  if (rows.empty()) return std::nullopt;
  return rows[0][0].as<int>();
}

// Ends the sessions of `user_id` and revokes its API tokens (sql/027_identity_links.sql: 'identity_changed').
void EndAccess(pqxx::transaction_base& tx, int user_id, std::int64_t now_ms) {
  tx.exec_params(R"sql(DELETE FROM user_session WHERE user_id = $1)sql", user_id);
  tx.exec_params(R"sql(
    UPDATE api_token SET revoked_ms = $2, revoked_reason = 'identity_changed' WHERE user_id = $1 AND revoked_ms = 0
  )sql",
                 user_id, now_ms);
}

}  // namespace

Result<User> PgSsoStore::SyncExternalUser(const ExternalUser& who, std::int64_t now_ms,
                                          std::vector<std::string>& skipped) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<User> {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT pg_advisory_xact_lock($1))sql", kSsoUserLockKey);
    // The user linked to (source, subject); else, for LDAP, the one linked to its DN by earlier versions.
    std::optional<int> id = LinkedUser(tx, who.source, who.subject);
    if (!id && !who.legacy_subject.empty()) id = LinkedUser(tx, who.source, who.legacy_subject);
    // Whoever has the name, in any case (security review 2, N2: a name is never a link).
    std::optional<std::pair<int, std::string>> named;  // id and login_source
    for (
        const auto& r : tx.exec_params(
            R"sql(SELECT id, login_source FROM app_user WHERE lower(username) = lower($1) ORDER BY id LIMIT 1)sql",
            who.username))
      named.emplace(r["id"].as<int>(), r["login_source"].as<std::string>());
    if (!id && named) {
      return Error::Conflict(fmt::format(
          "the username '{}' is already a {} user of cronwheel, and your identity at {} (subject '{}') is "
          "not "
          "linked to it: a user name is never enough to sign in as an existing user. Ask an ADMIN to link "
          "this identity to that user (Users page, \"Link identity\"), or to rename that user",
          who.username, named->second == "local" ? std::string("local") : named->second, who.source,
          who.subject));
    }
    const char* role = who.admin ? "ADMIN" : "USER";
    if (id) {
      // Renamed at the source: follow, unless another user has the new name (then keep the old one).
      const bool rename = !named || named->first == *id;
      tx.exec_params(R"sql(
        UPDATE app_user SET username = CASE WHEN $5 THEN $2 ELSE username END, role = $3, external_subject = $4,
                            updated_ms = $6
         WHERE id = $1
      )sql",
                     *id, who.username, role, who.subject, rename, now_ms);
    } else {
      id = tx.exec_params1(R"sql(
        INSERT INTO app_user (username, password_hash, role, login_source, external_subject, created_ms, updated_ms)
        VALUES ($1, '!', $2, $3, $4, $5, $5)
        RETURNING id
      )sql",
                           who.username, role, who.source, who.subject, now_ms)[0]
               .as<int>();
    }
    WriteGrants(tx, *id, who.admin ? std::vector<GroupGrant>{} : ResolveGroups(tx, who.groups, skipped));
    auto user = ReadUser(tx, *id);
    tx.commit();
    return user;
  });
}

Result<UserChange> PgSsoStore::LinkIdentity(int user_id, const std::string& source,
                                            const std::string& subject, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(SELECT pg_advisory_xact_lock($1))sql", kSsoUserLockKey);
    const auto rows = tx.exec_params(
        R"sql(SELECT login_source, coalesce(external_subject, '') AS subject FROM app_user WHERE id = $1 FOR UPDATE)sql",
        user_id);
    if (rows.empty()) return Error::NotFound(fmt::format("user '{}' not found", user_id));
    const auto old_source = rows[0]["login_source"].as<std::string>();
    const auto old_subject = rows[0]["subject"].as<std::string>();
    if (const auto other = LinkedUser(tx, source, subject); other && *other != user_id) {
      return Error::Conflict(fmt::format(
          "the identity (source '{}', subject '{}') is already linked to user {}: unlink it there first",
          source, subject, *other));
    }
    auto before = ReadUser(tx, user_id);
    tx.exec_params(R"sql(
      UPDATE app_user SET login_source = $2, external_subject = $3, password_hash = '!',
                          updated_ms = GREATEST($4, updated_ms + 1)
       WHERE id = $1
    )sql",
                   user_id, source, subject, now_ms);
    // A user linked to another identity than before is another person's now: what the old one holds ends.
    if (old_source != "local" && (old_source != source || old_subject != subject))
      EndAccess(tx, user_id, now_ms);
    auto after = ReadUser(tx, user_id);
    tx.commit();
    return UserChange{.before = std::move(before), .after = std::move(after)};
  });
}

Result<UserChange> PgSsoStore::UnlinkIdentity(int user_id, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<UserChange> {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(R"sql(SELECT login_source FROM app_user WHERE id = $1 FOR UPDATE)sql", user_id);
    if (rows.empty()) return Error::NotFound(fmt::format("user '{}' not found", user_id));
    if (rows[0][0].as<std::string>() == "local") {
      return Error::Invalid("the user was not changed",
                            {{"login_source", "the user is local already: it has no identity to unlink"}});
    }
    auto before = ReadUser(tx, user_id);
    tx.exec_params(R"sql(
      UPDATE app_user SET login_source = 'local', external_subject = NULL, password_hash = '!',
                          updated_ms = GREATEST($2, updated_ms + 1)
       WHERE id = $1
    )sql",
                   user_id, now_ms);
    EndAccess(tx, user_id, now_ms);
    auto after = ReadUser(tx, user_id);
    tx.commit();
    return UserChange{.before = std::move(before), .after = std::move(after)};
  });
}

void PgSsoStore::AddOidcLogin(const OidcLoginRecord& login, std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(DELETE FROM oidc_login WHERE expires_ms <= $1)sql", now_ms);
    tx.exec_params(R"sql(
      INSERT INTO oidc_login (state_hash, provider, browser_hash, nonce, code_verifier, return_to, created_ms,
                              expires_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    )sql",
                   login.state_hash, login.provider, login.browser_hash, login.nonce, login.code_verifier,
                   login.return_to, login.created_ms, login.expires_ms);
    tx.commit();
  });
}

std::optional<OidcLoginRecord> PgSsoStore::TakeOidcLogin(const std::string& state_hash, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<OidcLoginRecord> {
    pqxx::work tx(conn);
    const auto rows = tx.exec_params(R"sql(
      DELETE FROM oidc_login WHERE state_hash = $1
      RETURNING provider, browser_hash, nonce, code_verifier, return_to, created_ms, expires_ms
    )sql",
                                     state_hash);
    tx.commit();
    if (rows.empty()) return std::nullopt;
    const auto& r = rows[0];
    OidcLoginRecord out{.state_hash = state_hash,
                        .provider = r["provider"].as<std::string>(),
                        .browser_hash = r["browser_hash"].as<std::string>(),
                        .nonce = r["nonce"].as<std::string>(),
                        .code_verifier = r["code_verifier"].as<std::string>(),
                        .return_to = r["return_to"].as<std::string>(),
                        .created_ms = r["created_ms"].as<std::int64_t>(),
                        .expires_ms = r["expires_ms"].as<std::int64_t>()};
    if (out.expires_ms <= now_ms) return std::nullopt;
    return out;
  });
}

AuthPolicy PgSsoStore::Policy() {
  return WithConnection(pool_, [](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    const auto r =
        tx.exec1(R"sql(SELECT require_sso, updated_by, updated_ms FROM auth_policy WHERE id = 1)sql");
    return AuthPolicy{.require_sso = r[0].as<bool>(),
                      .updated_by = r[1].as<std::string>(),
                      .updated_ms = r[2].as<std::int64_t>()};
  });
}

int PgSsoStore::SetRequireSso(bool require_sso, const std::string& by, std::int64_t now_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        R"sql(UPDATE auth_policy SET require_sso = $1, updated_by = $2, updated_ms = $3 WHERE id = 1)sql",
        require_sso, by, now_ms);
    int ended = 0;
    if (require_sso) {
      ended = static_cast<int>(tx.exec(R"sql(
        DELETE FROM user_session s USING app_user u
         WHERE u.id = s.user_id AND u.login_source = 'local' AND u.role <> 'ADMIN'
      )sql")
                                   .affected_rows());
    }
    tx.commit();
    return ended;
  });
}

}  // namespace cronwheel::admin
