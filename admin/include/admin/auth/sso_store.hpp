#pragma once
// What single sign-on (auth/sso_service.hpp) keeps: the users of each source, OpenID sign-ins under way and
// the cluster's sign-in policy. The interface auth owns, implemented on PostgreSQL by PgSsoStore
// (admin/store/pg_sso_store.hpp; tables app_user, app_user_group, oidc_login, auth_policy:
// sql/021_single_sign_on.sql) and by fakes in tests. The store decides nothing but what a unique key or a
// lock decides.
//
// Thread-safety: called from any thread at once. Errors: expected outcomes are Results; infrastructure
// failures throw.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

// A user as a single sign-on source describes it at a login, with the roles its groups there map to.
struct ExternalUser {
  std::string source;  // "ldap" or "oidc:<name>"
  std::string
      subject;  // who the source says it is: the ID token's sub, or the LDAP entry's subject_attribute
  std::string username;  // the cronwheel username it is created with (never matched to an existing user)
  // LDAP only: the entry's DN, the subject users of earlier versions were linked by; a user linked to
  // (source, legacy_subject) is linked to (source, subject) instead at its first sign-in. "" = none.
  std::string legacy_subject;
  bool admin = false;
  std::vector<std::pair<std::string, GroupRole>> groups;  // by executor group app_name
};

// A sign-in through an OpenID provider under way (only hashes of the state and the browser binding).
struct OidcLoginRecord {
  std::string state_hash;
  std::string provider;
  std::string browser_hash;
  std::string nonce;
  std::string code_verifier;
  std::string return_to;
  std::int64_t created_ms = 0;
  std::int64_t expires_ms = 0;
};

struct AuthPolicy {
  bool require_sso = false;
  std::string updated_by;
  std::int64_t updated_ms = 0;
};

class SsoStore {
 public:
  virtual ~SsoStore() = default;

  // In one transaction: finds the user linked to (source, subject) (or to (source, legacy_subject), which it
  // re-links to the subject); else creates one named `username` (a USER, no password) linked to it. Then
  // sets its role and its group roles from `who` (groups named by an app_name no group has are skipped and
  // listed in `skipped`). A linked user is renamed to `username` when no other user has that name (in any
  // case), and keeps its name otherwise. The name is never a link (security review 2, N2): kConflict when
  // no user is linked and `username` (in any case) is any user's, local or of a source, this one included;
  // its message names the identity an ADMIN may link (LinkIdentity).
  virtual Result<User> SyncExternalUser(const ExternalUser& who, std::int64_t now_ms,
                                        std::vector<std::string>& skipped) = 0;

  // An ADMIN's explicit link: user `user_id` signs in as (source, subject) from now on (its password, if
  // any, is dropped: its source's is the one that counts; its sessions and tokens stay). kNotFound for no
  // such user; kConflict when another user is linked to that identity.
  virtual Result<UserChange> LinkIdentity(int user_id, const std::string& source, const std::string& subject,
                                          std::int64_t now_ms) = 0;
  // Removes the link: the user becomes local, without a password (an ADMIN may set one), and its sessions
  // end. kNotFound for no such user; kInvalid when it is local already.
  virtual Result<UserChange> UnlinkIdentity(int user_id, std::int64_t now_ms) = 0;

  // Deletes the sign-ins expired at `now_ms`, then adds `login`.
  virtual void AddOidcLogin(const OidcLoginRecord& login, std::int64_t now_ms) = 0;
  // Takes (deletes) the sign-in of `state_hash`, once; nullopt when none, or it expired at `now_ms`.
  virtual std::optional<OidcLoginRecord> TakeOidcLogin(const std::string& state_hash,
                                                       std::int64_t now_ms) = 0;

  virtual AuthPolicy Policy() = 0;
  // Sets require_sso; when it turns on, ends every session of a user who may no longer sign in (a local
  // user that is not a global ADMIN). Returns the number of sessions ended.
  virtual int SetRequireSso(bool require_sso, const std::string& by, std::int64_t now_ms) = 0;

 protected:
  SsoStore() = default;
  SsoStore(const SsoStore&) = default;
  SsoStore& operator=(const SsoStore&) = default;
};

}  // namespace cronwheel::admin
