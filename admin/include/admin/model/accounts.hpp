#pragma once
// Console users and API tokens as the admin handles them, and the fields a request may give for them
// (read by api/request_bodies.hpp, stored by auth/accounts.hpp). Never a password hash or a token secret:
// those stay inside auth/.
// Plain values; no thread-safety concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin {

// What a USER may do in one executor group, each role including those before it (PowerJob's and Airflow's
// viewer/operator/developer/admin split; docs/operations.md, "Roles"; sql/019_group_roles.sql):
//   kViewer     read the group's jobs, workflows, fires and their outputs;
//   kOperator   also trigger, start, stop, kill, run once; a workflow's trigger, kill and re-run;
//   kDeveloper  also create, change and delete jobs and workflows (script jobs only where allowed), clear
//               logs;
//   kAdmin      also the group itself: its title and alert channels, and draining its executors.
// Each role matches the token scope of the same rank (kViewer ~ read ... kAdmin ~ admin): a route's scope
// is the role it needs in the group it acts on (RoleFor). A global ADMIN holds kAdmin in every group.
enum class GroupRole { kViewer = 0, kOperator = 1, kDeveloper = 2, kAdmin = 3 };
// What a user of an earlier version without roles had in each of its groups, and what a group listed
// without a role (the field permitted_group_ids) gets.
inline constexpr GroupRole kDefaultGroupRole = GroupRole::kDeveloper;
// "VIEWER", "OPERATOR", "DEVELOPER", "ADMIN".
std::string_view ToString(GroupRole role);
// The role named `text` (exactly the names ToString gives); nullopt otherwise.
std::optional<GroupRole> ParseGroupRole(std::string_view text);
// "VIEWER, OPERATOR, DEVELOPER, ADMIN" (for error messages).
std::string ValidValues(GroupRole);

// A user's role in one group.
struct GroupGrant {
  int group_id = 0;
  GroupRole role = kDefaultGroupRole;
  friend bool operator==(const GroupGrant&, const GroupGrant&) = default;
};

// A console user as the API shows it.
struct User {
  int id = 0;
  std::string username;
  bool admin = false;
  std::vector<GroupGrant> groups;  // a USER's roles, by group id ascending; empty for an ADMIN
  // Where it signs in (sql/021_single_sign_on.sql): "local" (a password kept here), "ldap" or "oidc:<name>"
  // (single sign-on, admin/auth/sso_service.hpp: its role and groups come from the source at each login).
  std::string login_source = "local";
  // The identity it is linked to at that source (the ID token's `sub`, the LDAP entry's subject_attribute):
  // with login_source, the only thing a sign-in is matched by. "" for a local user.
  std::string external_subject;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

// How long an API token lasts: `expires_in_days` at creation, this by default and at most.
inline constexpr int kDefaultTokenDays = 90;
inline constexpr int kMaxTokenDays = 365;

// What an API token may do, each scope including those before it (the classes of GitHub's and PowerJob's
// token scopes; docs/operations.md, "API tokens"):
//   kRead     read: every GET, and the POSTs that only compute (a schedule's preview);
//   kOperate  also run what exists: trigger, start, stop, kill, run once, a workflow's trigger, kill, re-run;
//   kWrite    also create, change and delete jobs and workflows (copy, bulk delete and tags too), clear logs;
//   kAdmin    also the account itself (its tokens, its password) and every route only an ADMIN may use:
//             groups, calendars, alert channels, drain, users, the audit log.
// A token acts as its user within its scope: the scope never adds to what the user may do. A console
// session has no scope (kAdmin: all its user may do). Every authenticated route names the scope it needs
// (api/routes.hpp).
enum class TokenScope { kRead = 0, kOperate = 1, kWrite = 2, kAdmin = 3 };
inline constexpr TokenScope kDefaultTokenScope =
    TokenScope::kRead;  // least privilege when a request names none
// "read", "operate", "write", "admin".
std::string_view ToString(TokenScope scope);
// The scope named `text` (exactly the names ToString gives); nullopt otherwise.
std::optional<TokenScope> ParseTokenScope(std::string_view text);

// The group role a route of scope `scope` needs in the group it acts on (the role of the same rank).
constexpr GroupRole RoleFor(TokenScope scope) {
  return static_cast<GroupRole>(static_cast<int>(scope));
}

// An API token as the API shows it (never the secret or its hash).
struct ApiToken {
  int id = 0;
  int user_id = 0;
  std::string username;
  std::string name;
  TokenScope scope = kDefaultTokenScope;
  std::int64_t created_ms = 0;
  std::int64_t last_used_ms = 0;  // 0 = never; recorded at most once a minute
  std::int64_t expires_ms = 0;    // refused from this instant on
  std::int64_t revoked_ms = 0;    // 0 = not revoked
  std::string revoked_reason;     // "" | "password_reset" (by an admin) | "password_changed" (by the user)
  std::string state;              // "active", "expired" or "revoked", as of when it was read
};

// A token's fields in a create request.
struct TokenFields {
  std::string name;
  int expires_in_days = kDefaultTokenDays;  // 1 to kMaxTokenDays
  TokenScope scope = kDefaultTokenScope;
};

// A login of the command-line client through the console, as the console's user approves it (docs/cli.md,
// "Logging in"): the loopback redirect of OAuth 2.0 for native apps (RFC 8252 §7.3) with PKCE S256 (RFC
// 7636). The browser is sent back to http://127.0.0.1:<port>/callback with a one-time code and `state`; the
// client trades the code and its verifier for an API token with `token`'s fields.
struct CliLoginRequest {
  int port = 0;                // the client's loopback port, 1 to 65535
  std::string state;           // the client's, returned as it is: 1 to 128 of [A-Za-z0-9._~-]
  std::string code_challenge;  // BASE64URL(SHA-256(code_verifier)) without padding: 43 characters
  TokenFields token;           // the token the client gets
};
// The trade: the code the browser brought back, and the verifier only the client knows (43 to 128 of
// [A-Za-z0-9._~-], RFC 7636 §4.1).
struct CliTokenRequest {
  std::string code;
  std::string code_verifier;
};
// How long an approved login's code may be traded, once.
inline constexpr std::int64_t kCliLoginCodeMs = 120'000;

// A user's fields in a create (username and password required) or update (username absent) request.
struct UserFields {
  std::optional<std::string> username;
  std::optional<std::string> password;
  std::optional<bool> admin;
  std::optional<std::vector<GroupGrant>> groups;  // by group id ascending, one per group
  // The field that gave `groups`: "group_roles", or "permitted_group_ids" (each group as kDefaultGroupRole).
  std::string groups_field = "group_roles";
};

// A change of one's own password.
struct PasswordChange {
  std::string old_password;
  std::string new_password;
};

// A user before and after a change (nullopt where there is none: no before on create, no after on delete).
struct UserChange {
  std::optional<User> before;
  std::optional<User> after;
};

}  // namespace cronwheel::admin
