#pragma once
// Who is calling the REST API, and what they may touch. Every /api/v1 route is authorised on the server
// (XXL-JOB §12 authorised some only in the front end): the route asks the Authenticator for a Principal,
// then checks the principal's rights on the resource (CanAccessGroup for jobs, logs and groups; admin
// for users and global settings). The production implementation is AuthService (auth_service.hpp):
// session cookies with a CSRF token, and API tokens (Authorization: Bearer). There is no anonymous access.
//
// Thread-safety: implementations are called concurrently from the HTTP threads.

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

namespace httplib {
struct Request;
}

namespace cronwheel::admin {

struct Principal {
  int user_id = 0;
  std::string username;
  bool admin = false;          // role ADMIN: everything
  std::vector<int> group_ids;  // role USER: these groups only
  std::string via;             // "session" or "token"
  std::string csrf_token;      // via "session": the session's CSRF token (for GET /api/v1/auth/me)

  [[nodiscard]] bool CanAccessGroup(int group_id) const {
    return admin || std::find(group_ids.begin(), group_ids.end(), group_id) != group_ids.end();
  }
};

struct AuthFailure {
  int status = 401;     // 401 not authenticated, 403 authenticated but refused (e.g. CSRF)
  std::string message;  // says what is missing or wrong
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Identifies the caller of `req`. State-changing methods (POST, PUT, DELETE) must also pass the CSRF
  // check when authenticated by a session cookie.
  virtual std::variant<Principal, AuthFailure> Authenticate(const httplib::Request& req) = 0;

 protected:
  Authenticator() = default;
  Authenticator(const Authenticator&) = default;
  Authenticator& operator=(const Authenticator&) = default;
};

}  // namespace cronwheel::admin
