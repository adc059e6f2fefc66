#pragma once
// Who is calling the REST API, and what they may touch. Every /api/v1 route is authorised on the server
// (XXL-JOB's console limits a role-0 user to the groups of its permission column, docs/xxl-job-protocol.md
// §12; cronwheel checks a role per group in every route, not in the pages): the route asks the
// Authenticator for a Principal, then checks the principal's rights on the resource (CanAccessGroup for jobs,
// logs, workflows and groups; admin for users and global settings). The production implementation is
// AuthService (auth/auth_service.hpp): session cookies with a CSRF token, and API tokens (Authorization:
// Bearer). There is no anonymous access.
//
// Thread-safety: implementations are called concurrently from the HTTP threads.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"
#include "cronwheel/net/http_message.hpp"

namespace cronwheel::admin {

struct Principal {
  int user_id = 0;
  std::string username;
  bool admin = false;              // a global ADMIN: everything, in every group
  std::vector<GroupGrant> groups;  // a USER: its role in each group it may see, by group id ascending
  std::string via;                 // "session" or "token"
  std::string csrf_token;          // via "session": the session's CSRF token (for GET /api/v1/auth/me)
  // Where its user signs in: "local", "ldap" or "oidc:<name>" (User::login_source).
  std::string login_source = "local";
  // Via "token": the token's scope, the most its routes may need; a session: kAdmin (all its user may do).
  TokenScope scope = TokenScope::kAdmin;
  int token_id = 0;        // via "token": which one
  std::string token_name;  // via "token": its name
  // What the route being served needs (set by Routes before its handler runs; api/routes.hpp): the scope
  // of a token, and in the group it acts on the role of the same rank (RoleFor).
  TokenScope route_scope = TokenScope::kRead;

  // How the caller signed in, as the audit log records it: "session", "session (oidc:keycloak)" (a user of
  // single sign-on), "token 7 (ci)", or `via` as it is ("password", "ldap", "oidc:keycloak" for the login
  // itself).
  [[nodiscard]] std::string Login() const {
    if (via == "token") return "token " + std::to_string(token_id) + " (" + token_name + ")";
    if (via == "session" && login_source != "local") return "session (" + login_source + ")";
    return via;
  }

  // Whether a route that needs `needed` is within the scope (the user's own rights are checked apart).
  [[nodiscard]] bool Allows(TokenScope needed) const { return scope >= needed; }

  // The caller's role in `group_id`: kAdmin for a global ADMIN, nullopt where a USER has none. O(groups).
  [[nodiscard]] std::optional<GroupRole> RoleIn(int group_id) const {
    if (admin) return GroupRole::kAdmin;
    const auto it = std::find_if(groups.begin(), groups.end(),
                                 [group_id](const GroupGrant& g) { return g.group_id == group_id; });
    return it == groups.end() ? std::nullopt : std::optional(it->role);
  }
  // Whether the caller may see the group at all (any role): what it may not see is "not found".
  [[nodiscard]] bool SeesGroup(int group_id) const { return RoleIn(group_id).has_value(); }
  // Whether the caller's role in `group_id` is at least `needed`.
  [[nodiscard]] bool HasRole(int group_id, GroupRole needed) const {
    const auto role = RoleIn(group_id);
    return role && *role >= needed;
  }
  // Whether the caller may do what the route being served does in `group_id` (its role there is at least
  // RoleFor(route_scope)).
  [[nodiscard]] bool CanAccessGroup(int group_id) const { return HasRole(group_id, RoleFor(route_scope)); }
  // A USER's groups where its role is at least `needed`, ascending (for a global ADMIN: none; the caller
  // does not filter then).
  [[nodiscard]] std::vector<int> GroupIds(GroupRole needed) const {
    std::vector<int> out;
    for (const auto& g : groups)
      if (g.role >= needed) out.push_back(g.group_id);
    return out;
  }
  // The groups where the caller may do what the route being served does (a list route: every group it sees).
  [[nodiscard]] std::vector<int> GroupIds() const { return GroupIds(RoleFor(route_scope)); }
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Identifies the caller of `req`: the Principal, or an Error of kind kUnauthenticated (401: no or bad
  // credentials) or kForbidden (403: authenticated but refused, e.g. a missing CSRF token). State-changing
  // methods (POST, PUT, DELETE) must also pass the CSRF check when authenticated by a session cookie.
  virtual Result<Principal> Authenticate(const net::Request& req) = 0;

 protected:
  Authenticator() = default;
  Authenticator(const Authenticator&) = default;
  Authenticator& operator=(const Authenticator&) = default;
};

}  // namespace cronwheel::admin
