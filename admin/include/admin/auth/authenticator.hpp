#pragma once
// Who is calling the REST API, and what they may touch. Every /api/v1 route is authorised on the server
// (XXL-JOB's console limits a role-0 user to the groups of its permission column, docs/xxl-job-protocol.md
// §12; cronwheel checks that rule in every route, not in the pages): the route asks the
// Authenticator for a Principal, then checks the principal's rights on the resource (CanAccessGroup for jobs,
// logs and groups; admin for users and global settings). The production implementation is AuthService
// (auth/auth_service.hpp): session cookies with a CSRF token, and API tokens (Authorization: Bearer). There
// is no anonymous access.
//
// Thread-safety: implementations are called concurrently from the HTTP threads.

#include <algorithm>
#include <string>
#include <vector>

#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"
#include "cronwheel/net/http_message.hpp"

namespace cronwheel::admin {

struct Principal {
  int user_id = 0;
  std::string username;
  bool admin = false;          // role ADMIN: everything
  std::vector<int> group_ids;  // role USER: these groups only
  std::string via;             // "session" or "token"
  std::string csrf_token;      // via "session": the session's CSRF token (for GET /api/v1/auth/me)
  // Via "token": the token's scope, the most its routes may need; a session: kAdmin (all its user may do).
  TokenScope scope = TokenScope::kAdmin;
  int token_id = 0;        // via "token": which one
  std::string token_name;  // via "token": its name

  // How the caller signed in, as the audit log records it: "session", "token 7 (ci)", or `via` as it is
  // ("password" for the login itself).
  [[nodiscard]] std::string Login() const {
    return via == "token" ? "token " + std::to_string(token_id) + " (" + token_name + ")" : via;
  }

  // Whether a route that needs `needed` is within the scope (the user's own rights are checked apart).
  [[nodiscard]] bool Allows(TokenScope needed) const { return scope >= needed; }

  [[nodiscard]] bool CanAccessGroup(int group_id) const {
    return admin || std::find(group_ids.begin(), group_ids.end(), group_id) != group_ids.end();
  }
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
