#pragma once
// SsoStore (auth/sso_store.hpp) on PostgreSQL: the users of single sign-on sources in app_user and
// app_user_group (shared with PgAccountStore, which owns them), and the tables oidc_login and auth_policy
// (sql/021_single_sign_on.sql). Every change is one transaction. A user's link to its identity is the pair
// (login_source, external_subject), unique (sql/021); changing or removing an existing link ends the user's
// sessions and revokes its API tokens ('identity_changed', sql/027_identity_links.sql).
//
// Thread-safety: safe from any thread (pooled connections). Errors: as SsoStore.

#include "admin/auth/sso_store.hpp"

namespace cronwheel::admin {

class PgPool;

class PgSsoStore final : public SsoStore {
 public:
  explicit PgSsoStore(PgPool& pool) : pool_(pool) {}

  Result<User> SyncExternalUser(const ExternalUser& who, std::int64_t now_ms,
                                std::vector<std::string>& skipped) override;
  Result<UserChange> LinkIdentity(int user_id, const std::string& source, const std::string& subject,
                                  std::int64_t now_ms) override;
  Result<UserChange> UnlinkIdentity(int user_id, std::int64_t now_ms) override;
  void AddOidcLogin(const OidcLoginRecord& login, std::int64_t now_ms) override;
  std::optional<OidcLoginRecord> TakeOidcLogin(const std::string& state_hash, std::int64_t now_ms) override;
  AuthPolicy Policy() override;
  int SetRequireSso(bool require_sso, const std::string& by, std::int64_t now_ms) override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin
