#pragma once
// Single sign-on settings: the OpenID providers and the LDAP directory an admin signs users in through, and
// the rules that turn a user's groups there into cronwheel roles. They live in their own TOML file (the
// admin's `sso_config` key names it; docs/operations.md, "Single sign-on", shows Keycloak-, Azure-AD- and
// Google-style providers and an LDAP directory):
//
//   [[oidc]]                                  # one table per provider
//   name = "keycloak"                         # [a-z0-9_-]{1,32}: in URLs and in users' login_source
//   title = "Keycloak"                        # the console button's text
//   issuer = "https://sso.example.com/realms/acme"   # its discovery document is issuer + /.well-known/...
//   client_id = "cronwheel"
//   client_secret_file = "/run/secrets/kc"    # or client_secret = "..." (a confidential client)
//   redirect_url = "https://cron.example.com/api/v1/auth/oidc/keycloak/callback"
//   scopes = ["openid", "profile", "email"]   # "openid" is added when missing
//   username_claim = "preferred_username"     # the cronwheel username, matched on first login
//   groups_claim = "groups"                   # a string or an array of strings in the ID token
//   [[oidc.roles]]                            # rules, all of which apply (the highest role per group wins)
//   value = "cronwheel-admins"                # a value of the groups claim ("*" = any signed-in user)
//   admin = true                              # ... makes a global ADMIN
//   [[oidc.roles]]
//   value = "payroll-ops"
//   group = "payroll-executor"                # an executor group's app_name
//   role = "OPERATOR"                         # VIEWER, OPERATOR, DEVELOPER or ADMIN in it
//
//   [ldap]                                    # at most one directory
//   url = "ldaps://ldap.example.com"          # ldaps://, or ldap:// with start_tls = true (plain LDAP is
//   start_tls = false                         #   refused: a password crosses it)
//   ca_file = "/etc/ssl/ldap-ca.pem"          # "" = the system's trust store
//   user_dn = "uid={username},ou=people,dc=example,dc=org"   # bind as the user directly, or search first:
//   bind_dn = "cn=reader,dc=example,dc=org"   # the service account that searches (with bind_password_file
//   bind_password_file = "/run/secrets/ldap"  #   or bind_password)
//   user_base = "ou=people,dc=example,dc=org"
//   user_filter = "(uid={username})"
//   group_base = "ou=groups,dc=example,dc=org"
//   group_filter = "(member={dn})"            # {dn} = the user's DN, {username} = the name typed
//   group_attribute = "cn"                    # the group's value the role rules match
//   subject_attribute = "entryUUID"           # the entry's lasting id users are linked by (RFC 4530;
//                                             #   Active Directory: "objectGUID"; "dn" = the DN itself)
//   timeout_s = 5
//   [[ldap.roles]]                            # as for OpenID providers
//
// Every error names the file, the key (e.g. "oidc[1].issuer"), the value and what is valid. Plain values:
// read once, at start, before any thread runs.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

// One rule of a role mapping: a user whose groups at the source include `value` gets ADMIN (when `admin`) or
// `role` in the executor group of app_name `group`.
struct RoleRule {
  std::string value;  // a group value at the source; "*" matches every user who signs in
  bool admin = false;
  std::string group;  // an executor group's app_name (when !admin)
  GroupRole role = GroupRole::kViewer;
};

// What a user's groups at the source give: a global ADMIN, or a role per executor group (by app_name,
// sorted, the highest role of the matching rules).
struct MappedRoles {
  bool admin = false;
  std::vector<std::pair<std::string, GroupRole>> groups;
  [[nodiscard]] bool Any() const { return admin || !groups.empty(); }
};

// Applies every rule of `rules` to the user's `values` (exact, case-sensitive matches). O(rules × values).
MappedRoles MapRoles(const std::vector<RoleRule>& rules, const std::vector<std::string>& values);

struct OidcProviderConfig {
  std::string name;
  std::string title;
  std::string issuer;  // without a trailing slash
  std::string client_id;
  std::string client_secret;
  std::string redirect_url;
  std::vector<std::string> scopes{"openid", "profile", "email"};
  std::string username_claim = "preferred_username";
  std::string groups_claim = "groups";
  std::string ca_file;  // "" = the system's trust store
  std::vector<RoleRule> roles;
};

struct LdapConfig {
  std::string url;
  bool start_tls = false;
  std::string ca_file;
  std::string user_dn;  // a template with {username}; "" = search for the user
  std::string bind_dn;
  std::string bind_password;
  std::string user_base;
  std::string user_filter = "(uid={username})";
  std::string group_base;
  std::string group_filter = "(member={dn})";
  std::string group_attribute = "cn";
  // What links a directory user to its cronwheel user: an attribute of its entry whose value never changes
  // nor comes back (RFC 4530's entryUUID, AD's objectGUID, shown in hex when not text), or "dn". A DN changes
  // when the entry is renamed, and comes back when a deleted user's name is given to someone new.
  std::string subject_attribute = "entryUUID";
  std::chrono::seconds timeout{5};
  std::vector<RoleRule> roles;
};

struct SsoConfig {
  std::vector<OidcProviderConfig> oidc;
  std::optional<LdapConfig> ldap;
  [[nodiscard]] bool Empty() const { return oidc.empty() && !ldap; }
  [[nodiscard]] const OidcProviderConfig* Provider(std::string_view name) const;
  // Whether a provider's issuer is http:// (allowed by LoadSsoConfig on loopback or in dev mode): the HTTP
  // client must then speak plain HTTP too.
  [[nodiscard]] bool AnyPlainHttpIssuer() const {
    return std::any_of(oidc.begin(), oidc.end(),
                       [](const auto& p) { return p.issuer.rfind("http://", 0) == 0; });
  }
};

// Reads and checks the SSO file at `path`. An issuer or redirect_url must be a URL net::ParseHttpAddress
// accepts (no user info, query or fragment), https://, or http:// whose host is loopback (127.0.0.0/8, [::1],
// localhost: the parsed host, never a prefix of the text, issue 44 N7), or any http:// when
// `allow_plain_http` (dev mode). kInvalid with a message naming the file, key and value.
Result<SsoConfig> LoadSsoConfig(const std::string& path, bool allow_plain_http);

}  // namespace cronwheel::admin
