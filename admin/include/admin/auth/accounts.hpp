#pragma once
// Console users and API tokens (kept by an AccountStore: auth/account_store.hpp). Users are ADMIN
// (everything) or USER (a role in each of its executor groups: model/accounts.hpp, GroupRole; XXL-JOB's
// role and permission columns, docs/xxl-job-protocol.md §4, §12, made finer). The request fields are read and
// checked by api/request_bodies.hpp; here are the rules that need the stored accounts or a secret: groups
// exist, usernames are unique, the last admin stays an admin, passwords are hashed, a password change ends
// the user's other sessions, and a user has at most 100 tokens.
//
// API tokens (security review, issue 21; sql/007_token_expiry.sql): a token lasts `expires_in_days` (90 by
// default, at most 365) and is refused after that (AuthService). A user's tokens are revoked (kept, marked
// with when and why, and refused) when an admin sets the user's password ("password_reset") and when the
// user changes it ("password_changed"); a deleted user's tokens are deleted with the user. Changing a
// user's role or group roles revokes nothing: a token acts with its user's roles as they are at each
// request.
//
// Thread-safety: safe from any thread. Errors: expected outcomes are Results (kInvalid with fields,
// kNotFound, kConflict, kThrottled); the store's failures throw.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/auth/account_store.hpp"
#include "admin/auth/auth_service.hpp"
#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class Accounts {
 public:
  // `auth` hashes passwords, throttles wrong old passwords and ends sessions; it must outlive this.
  Accounts(AuthService& auth, ringwheel::Clock& clock, AccountStore& store)
      : auth_(auth), clock_(clock), store_(store) {}

  std::vector<User> ListUsers();
  std::optional<User> GetUser(int id);
  // `fields` with username and password (ReadUserBody, create).
  Result<UserChange> CreateUser(const UserFields& fields);
  // Role, groups and password; `acting_user_id` may not change its own role, and the last admin stays
  // one. A password change ends the user's sessions and revokes their API tokens.
  Result<UserChange> UpdateUser(int id, const UserFields& fields, int acting_user_id);
  // Refuses the acting user and the last admin.
  Result<UserChange> DeleteUser(int id, int acting_user_id);
  // Checks the old password (throttled like logins), ends the user's other sessions (keeps the one of
  // `keep_cookie`) and revokes their API tokens. kInvalid (a wrong old password is an error on
  // old_password), kThrottled, kNotFound.
  Result<void> ChangeOwnPassword(int user_id, const PasswordChange& change, const std::string& keep_cookie);

  // `user_id` nullopt = every user's; each with its state now (active, expired, revoked).
  std::vector<ApiToken> ListTokens(std::optional<int> user_id);
  // A token with `fields` (read by ReadTokenBody: a name, 1 to kMaxTokenDays days); returns it and its secret
  // (shown once).
  Result<std::pair<ApiToken, std::string>> CreateToken(int user_id, const TokenFields& fields);
  // Deletes a token of `owner` (nullopt = any owner). Returns the deleted token, nullopt when not found.
  std::optional<ApiToken> DeleteToken(int id, std::optional<int> owner);

  // The command-line client's login through the console (docs/cli.md, "Logging in"; RFC 8252 with PKCE,
  // RFC 7636). `user_id` approves `request` (read by ReadCliLoginBody) in the console: returns the one-time
  // code the browser carries back to the client (kept as its SHA-256, good once for kCliLoginCodeMs).
  std::string ApproveCliLogin(int user_id, const CliLoginRequest& request);
  // The client trades the code and its verifier for an API token of its user, with the fields approved.
  // kInvalid on `code` when it is unknown, used or expired (one answer for all three), on `code_verifier`
  // when it is not the one the challenge was made from (the code is used up either way); AddToken's errors.
  Result<std::pair<ApiToken, std::string>> RedeemCliLogin(const CliTokenRequest& request);

 private:
  AuthService& auth_;
  ringwheel::Clock& clock_;
  AccountStore& store_;
};

}  // namespace cronwheel::admin
