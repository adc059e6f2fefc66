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

// A console user as the API shows it.
struct User {
  int id = 0;
  std::string username;
  bool admin = false;
  std::vector<int> permitted_group_ids;
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

// A user's fields in a create (username and password required) or update (username absent) request.
struct UserFields {
  std::optional<std::string> username;
  std::optional<std::string> password;
  std::optional<bool> admin;
  std::optional<std::vector<int>> groups;  // sorted, unique
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
