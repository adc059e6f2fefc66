#pragma once
// AccountStore (auth/account_store.hpp) on PostgreSQL: the one owner of the tables app_user, user_session
// and api_token (docs/architecture.md, "Who writes which table"). Every change is one transaction; edits
// and deletes of users lock every ADMIN row in id order first, so concurrent changes of roles serialise
// and the last admin stays one.
//
// Thread-safety: safe from any thread (pooled connections). Errors: as AccountStore.

#include "admin/auth/account_store.hpp"

namespace cronwheel::admin {

class PgPool;

class PgAccountStore final : public AccountStore {
 public:
  explicit PgAccountStore(PgPool& pool) : pool_(pool) {}

  std::vector<User> ListUsers() override;
  std::optional<User> GetUser(int id) override;
  std::optional<UserLogin> FindLogin(const std::string& username) override;
  std::optional<std::string> PasswordHash(int user_id) override;
  bool CreateFirstAdmin(const std::string& password_hash, std::int64_t now_ms) override;
  [[nodiscard]] bool AnyUser() override;
  Result<User> CreateUser(const User& user, const std::string& password_hash, std::int64_t now_ms) override;
  Result<UserChange> EditUser(int id, const DecideEdit& decide, std::int64_t now_ms) override;
  Result<UserChange> DeleteUser(int id, const DecideDelete& allow) override;
  void SetPassword(int user_id, const std::string& password_hash, const std::string& revoke_reason,
                   std::int64_t now_ms) override;

  void AddSession(const std::string& token_hash, int user_id, const std::string& csrf_token,
                  std::int64_t now_ms, std::int64_t expires_ms,
                  const std::optional<std::string>& rehash) override;
  std::optional<SessionRecord> FindSession(const std::string& token_hash, std::int64_t now_ms) override;
  void RenewSession(const std::string& token_hash, std::int64_t expires_ms) override;
  bool DeleteSession(const std::string& token_hash) override;
  void DeleteSessions(int user_id, const std::string& keep_hash) override;

  std::optional<TokenRecord> FindToken(const std::string& token_hash) override;
  void TouchToken(int token_id, std::int64_t now_ms) override;
  std::vector<ApiToken> ListTokens(std::optional<int> user_id) override;
  Result<ApiToken> AddToken(int user_id, const std::string& name, TokenScope scope,
                            const std::string& token_hash, std::int64_t now_ms, std::int64_t expires_ms,
                            std::size_t max_tokens) override;
  std::optional<ApiToken> DeleteToken(int id, std::optional<int> owner) override;
  void AddCliLogin(const CliLoginRecord& login, std::int64_t now_ms) override;
  std::optional<CliLoginRecord> TakeCliLogin(const std::string& code_hash, std::int64_t now_ms) override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin
