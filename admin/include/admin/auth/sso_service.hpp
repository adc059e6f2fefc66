#pragma once
// Single sign-on: console logins through OpenID providers and an LDAP directory, beside local accounts
// (docs/operations.md, "Single sign-on"; the settings: auth/sso_config.hpp).
//
// OpenID Connect (auth/oidc.hpp): BeginOidc makes a random state, nonce and PKCE verifier, keeps them for ten
// minutes (SsoStore, so any admin of the cluster may finish the sign-in) bound to a random value the browser
// holds in the cookie `cw_oidc` (only hashes are kept), and answers the provider's authorization URL.
// FinishOidc takes that record once by the state the provider sends back, checks the browser's cookie
// (a sign-in begun in another browser is refused: login CSRF), redeems the code and checks the ID token.
//
// LDAP (auth/ldap_directory.hpp): the console's password form serves both. A username whose user is local is
// checked here; a new username, or a user of source "ldap", is checked by a bind to the directory, held to
// the same login throttle (auth/login_throttle.hpp).
//
// Either way a person is their identity at the source, the pair (source, subject): the ID token's `sub`, or
// the LDAP entry's subject_attribute (entryUUID by default). A sign-in finds the user linked to it, or
// creates one named by the user-name claim (or the name typed). A name is never a link (security review 2,
// N2: providers let users choose their preferred_username): when no user is linked and the name is already
// any user's (local, of another source, or of this one but linked to another subject), the sign-in is
// refused (kConflict) with a message naming the identity, which an ADMIN may link to that user
// (LinkIdentity; PUT /api/v1/users/{id}/identity). An `email` user-name claim counts only with
// `email_verified` true (OidcUsername). Its role and group roles are set from its groups at the source by the
// role rules (MapRoles) at every login, so the directory stays the truth; a user whose groups map to no role
// is refused (403) and nothing is written.
//
// The sign-in policy: a global ADMIN may require single sign-on (SetRequireSso). Then only local global
// ADMINs (the first admin, break-glass) may log in with a password kept here; every other local user gets
// 403, and their sessions end when the policy turns on. Their API tokens keep working until an ADMIN
// deletes them or they expire.
//
// Thread-safety: safe from any thread. Errors: kInvalid (bad request or a provider that cannot be read),
// kUnauthenticated (wrong credentials, a refused code or ID token, an unknown or foreign sign-in),
// kForbidden (no role, SSO required, an unverified e-mail address), kConflict (the username is taken and the
// identity is linked to nobody), kUnavailable (the directory cannot be reached), kThrottled.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/auth/account_store.hpp"
#include "admin/auth/auth_service.hpp"
#include "admin/auth/ldap_directory.hpp"
#include "admin/auth/oidc.hpp"
#include "admin/auth/sso_config.hpp"
#include "admin/auth/sso_store.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

inline constexpr const char* kOidcCookie = "cw_oidc";
inline constexpr std::size_t kMaxSubjectBytes = 255;

// The cronwheel username the ID token's `claims` give for `provider` (its username_claim). kForbidden when
// the claim is missing or not a valid username, and, when the claim is `email`, unless `email_verified` is
// present and true (OpenID Connect Core 1.0 §5.1). Pure.
Result<std::string> OidcUsername(const OidcProviderConfig& provider, const nlohmann::json& claims);
inline constexpr std::int64_t kOidcLoginMs = 600'000;

class SsoService {
 public:
  // Everything given must outlive this; `http` reaches the OpenID providers.
  SsoService(SsoConfig config, ringwheel::Clock& clock, AuthService& auth, AccountStore& accounts,
             SsoStore& store, std::unique_ptr<HttpsClient> http);

  struct ProviderInfo {
    std::string name;
    std::string title;
  };
  // What the login page offers: a button per OpenID provider, whether the password form also checks a
  // directory, and whether single sign-on is required.
  struct Offer {
    std::vector<ProviderInfo> oidc;
    bool ldap = false;
    bool require_sso = false;
  };
  Offer Offered();

  // A finished login: the session, and where it came from ("password", "ldap", "oidc:<name>").
  struct SignIn {
    AuthService::Session session;
    std::string via;
    std::string return_to;  // OpenID only: the console's page to go back to ("" = the dashboard)
    std::vector<std::string> skipped_groups;  // role rules naming an app_name no group has
  };

  // The console's password form: a local user's password, or the directory's (see above).
  Result<SignIn> PasswordLogin(const std::string& username, const std::string& password,
                               const std::string& client);

  // Begins a sign-in through provider `name`; `browser_secret` is the value of the cookie the caller sets.
  // `return_to` is a console route ("#/jobs"), anything else is dropped. Returns the provider's URL.
  Result<std::string> BeginOidc(const std::string& name, const std::string& browser_secret,
                                const std::string& return_to);
  // Finishes it with the provider's `code` and `state` and the browser's cookie value.
  Result<SignIn> FinishOidc(const std::string& name, const std::string& code, const std::string& state,
                            const std::string& browser_secret);
  // The provider's logout URL for a user of `login_source` ("" when not an OpenID user or none is known).
  std::string EndSessionUrl(const std::string& login_source);

  // An ADMIN's explicit link of user `user_id` to the identity (source, subject) (SsoStore::LinkIdentity).
  // kInvalid naming the field when `source` is not "ldap" or "oidc:<name>" of a configured source, or
  // `subject` is empty or longer than kMaxSubjectBytes; then as the store.
  Result<UserChange> LinkIdentity(int user_id, const std::string& source, const std::string& subject);
  // Removes a user's link (SsoStore::UnlinkIdentity).
  Result<UserChange> UnlinkIdentity(int user_id) { return store_.UnlinkIdentity(user_id, clock_.NowMs()); }

  AuthPolicy Policy() { return store_.Policy(); }
  // kInvalid (on require_sso) when turning it on while no single sign-on is configured. Returns the number
  // of sessions ended.
  Result<int> SetRequireSso(bool require_sso, const std::string& by);

  [[nodiscard]] const SsoConfig& config() const { return config_; }

 private:
  Result<SignIn> Sync(const ExternalUser& who, const std::string& via);

  SsoConfig config_;
  ringwheel::Clock& clock_;
  AuthService& auth_;
  AccountStore& accounts_;
  SsoStore& store_;
  std::unique_ptr<HttpsClient> http_;
  std::map<std::string, std::unique_ptr<OidcClient>> oidc_;
  std::optional<LdapDirectory> ldap_;
};

}  // namespace cronwheel::admin
