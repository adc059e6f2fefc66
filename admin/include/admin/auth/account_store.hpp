#pragma once
// What auth/ needs to keep about users, sessions and API tokens: the interface auth owns, implemented on
// PostgreSQL by PgAccountStore (admin/store/pg_account_store.hpp, tables app_user, user_session, api_token)
// and by fakes in tests. The rules (who may change whom, the last admin, throttling, hashing, token states)
// are auth's (auth/accounts.hpp, auth/auth_service.hpp); a store keeps rows and runs each change in one
// transaction, deciding nothing but what a unique key or a lock decides.
//
// Secrets never reach a store: it gets and keeps the SHA-256 of a session or token secret
// (auth/secrets.hpp) and a password's argon2id hash.
//
// Thread-safety: implementations are called from any thread at once. Errors: expected outcomes are Results
// (kInvalid with fields: a group that does not exist, a username taken, too many tokens; kNotFound);
// infrastructure failures throw (docs/architecture.md, "Errors").

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/auth/authenticator.hpp"
#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

// A user with what a login checks.
struct UserLogin {
  User user;
  std::string password_hash;
};

// A session found by its hash, with its user as a Principal (via "session").
struct SessionRecord {
  Principal principal;
  std::int64_t created_ms = 0;
  std::int64_t expires_ms = 0;
};

// An API token found by its hash, with its user as a Principal (via "token").
struct TokenRecord {
  Principal principal;
  int token_id = 0;
  std::int64_t last_used_ms = 0;
  std::int64_t expires_ms = 0;
  std::int64_t revoked_ms = 0;  // 0 = not revoked
  std::string revoked_reason;
};

// An approved login of the command-line client, not yet traded (sql/020_cli_login.sql).
struct CliLoginRecord {
  std::string code_hash;  // SHA-256 of the one-time code
  int user_id = 0;
  std::string code_challenge;
  TokenFields token;
  std::int64_t created_ms = 0;
  std::int64_t expires_ms = 0;
};

// What an edit of a user writes: the user as it should be, and a new password hash if the password changes
// (the user's sessions then end and their tokens are revoked with `revoke_reason`).
struct UserWrite {
  User user;
  std::optional<std::string> password_hash;
  std::string revoke_reason = "password_reset";
};

class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // --- users
  virtual std::vector<User> ListUsers() = 0;
  virtual std::optional<User> GetUser(int id) = 0;
  virtual std::optional<UserLogin> FindLogin(const std::string& username) = 0;
  virtual std::optional<std::string> PasswordHash(int user_id) = 0;
  // Creates the user `admin` (role ADMIN) with `password_hash` if there is no user at all, once even when
  // admins start together (serialised). True when it was created now.
  virtual bool CreateFirstAdmin(const std::string& password_hash, std::int64_t now_ms) = 0;
  [[nodiscard]] virtual bool AnyUser() = 0;
  // kInvalid when a group of `user.permitted_group_ids` does not exist or the username is taken.
  virtual Result<User> CreateUser(const User& user, const std::string& password_hash,
                                  std::int64_t now_ms) = 0;
  // Locks every ADMIN and user `id` and calls `decide(user, admin_count)`; writes what it returns (checking
  // that its groups exist: kInvalid), or returns its error and writes nothing. kNotFound when there is no
  // such user.
  using DecideEdit = std::function<Result<UserWrite>(const User& before, int admins)>;
  virtual Result<UserChange> EditUser(int id, const DecideEdit& decide, std::int64_t now_ms) = 0;
  // Locks every ADMIN and user `id`, calls `allow(user, admin_count)` and deletes the user (and their
  // sessions and tokens) when it returns no error. kNotFound when there is no such user.
  using DecideDelete = std::function<Result<void>(const User& before, int admins)>;
  virtual Result<UserChange> DeleteUser(int id, const DecideDelete& allow) = 0;
  // Sets the user's password hash and revokes their tokens with `revoke_reason`, in one transaction.
  virtual void SetPassword(int user_id, const std::string& password_hash, const std::string& revoke_reason,
                           std::int64_t now_ms) = 0;

  // --- sessions (by the SHA-256 of the cookie's secret)
  // Deletes the sessions expired at `now_ms`, then adds this one; with `rehash`, replaces the user's password
  // hash too (a stronger hashing setting), in the same transaction.
  virtual void AddSession(const std::string& token_hash, int user_id, const std::string& csrf_token,
                          std::int64_t now_ms, std::int64_t expires_ms,
                          const std::optional<std::string>& rehash) = 0;
  // The session and its user; an expired one (expires_ms <= now_ms) is deleted and nullopt returned.
  virtual std::optional<SessionRecord> FindSession(const std::string& token_hash, std::int64_t now_ms) = 0;
  virtual void RenewSession(const std::string& token_hash, std::int64_t expires_ms) = 0;
  // False when there was no such session.
  virtual bool DeleteSession(const std::string& token_hash) = 0;
  // Every session of the user but the one of `keep_hash` ("" = all).
  virtual void DeleteSessions(int user_id, const std::string& keep_hash) = 0;

  // --- API tokens (by the SHA-256 of the secret)
  virtual std::optional<TokenRecord> FindToken(const std::string& token_hash) = 0;
  virtual void TouchToken(int token_id, std::int64_t now_ms) = 0;
  // `user_id` nullopt = every user's; ordered by id; `state` is left for the caller.
  virtual std::vector<ApiToken> ListTokens(std::optional<int> user_id) = 0;
  // kInvalid (on `name`) when the user has `max_tokens` already.
  virtual Result<ApiToken> AddToken(int user_id, const std::string& name, TokenScope scope,
                                    const std::string& token_hash, std::int64_t now_ms,
                                    std::int64_t expires_ms, std::size_t max_tokens) = 0;
  // A token of `owner` (nullopt = anyone's); the deleted token, nullopt when there was none.
  virtual std::optional<ApiToken> DeleteToken(int id, std::optional<int> owner) = 0;

  // --- logins of the command-line client (by the SHA-256 of the code)
  // Deletes the ones expired at `now_ms`, then adds `login`.
  virtual void AddCliLogin(const CliLoginRecord& login, std::int64_t now_ms) = 0;
  // Takes (deletes) the login of `code_hash`, once; nullopt when there is none or it expired at `now_ms`.
  virtual std::optional<CliLoginRecord> TakeCliLogin(const std::string& code_hash, std::int64_t now_ms) = 0;

 protected:
  AccountStore() = default;
  AccountStore(const AccountStore&) = default;
  AccountStore& operator=(const AccountStore&) = default;
};

}  // namespace cronwheel::admin
