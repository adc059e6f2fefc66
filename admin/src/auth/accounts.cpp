#include "admin/auth/accounts.hpp"

#include <fmt/format.h>

#include "auth/secrets.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kTokenPrefix = "cwt_";
constexpr std::size_t kMaxTokensPerUser = 100;
constexpr std::int64_t kDayMs = 86'400'000;

// The token with its state as of `now_ms`.
ApiToken WithState(ApiToken t, std::int64_t now_ms) {
  t.state = t.revoked_ms > 0 ? "revoked" : now_ms >= t.expires_ms ? "expired" : "active";
  return t;
}

// The store names a group that does not exist on group_roles: the request may have given the groups as
// permitted_group_ids, and the error names the field it gave.
Error NamedAsGiven(Error e, const UserFields& f) {
  for (auto& field : e.fields) {
    if (field.field == "group_roles") field.field = f.groups_field;
  }
  return e;
}

}  // namespace

std::vector<User> Accounts::ListUsers() {
  return store_.ListUsers();
}

std::optional<User> Accounts::GetUser(int id) {
  return store_.GetUser(id);
}

Result<UserChange> Accounts::CreateUser(const UserFields& f) {
  const auto hash = auth_.hasher().Hash(f.password.value_or(""));
  const User user{.username = f.username.value_or(""),
                  .admin = f.admin.value_or(false),
                  .groups = f.groups.value_or(std::vector<GroupGrant>{})};
  auto created = store_.CreateUser(user, hash, clock_.NowMs());
  if (!created) return NamedAsGiven(created.error(), f);
  return UserChange{.before = std::nullopt, .after = *std::move(created)};
}

Result<UserChange> Accounts::UpdateUser(int id, const UserFields& f, int acting_user_id) {
  const std::optional<std::string> hash =
      f.password ? std::optional(auth_.hasher().Hash(*f.password)) : std::nullopt;
  // A password set by an admin ends the user's sessions and revokes their API tokens: whoever had them may
  // be why it was reset.
  auto edited = store_.EditUser(
      id,
      [&](const User& before, int admins) -> Result<UserWrite> {
        if (hash && before.login_source != "local") {
          return Error::Invalid(
              "the user is not valid",
              {{"password",
                fmt::format("'{}' signs in through {}, which keeps its password: it has none here",
                            before.username, before.login_source)}});
        }
        UserWrite write{.user = before, .password_hash = hash, .revoke_reason = "password_reset"};
        if (f.groups) write.user.groups = *f.groups;
        if (f.admin && *f.admin != before.admin) {
          if (id == acting_user_id)
            return Error::Conflict("you cannot change your own role; ask another admin");
          if (before.admin && admins <= 1) {
            return Error::Conflict(
                fmt::format("'{}' is the last admin; make another user an admin first", before.username));
          }
          write.user.admin = *f.admin;
        }
        return write;
      },
      clock_.NowMs());
  if (!edited) return NamedAsGiven(edited.error(), f);
  return edited;
}

Result<UserChange> Accounts::DeleteUser(int id, int acting_user_id) {
  return store_.DeleteUser(id, [&](const User& before, int admins) -> Result<void> {
    if (id == acting_user_id) return Error::Conflict("you cannot delete yourself");
    if (before.admin && admins <= 1) {
      return Error::Conflict(fmt::format("'{}' is the last admin and cannot be deleted", before.username));
    }
    return {};
  });
}

Result<void> Accounts::ChangeOwnPassword(int user_id, const PasswordChange& change,
                                         const std::string& keep_cookie) {
  const auto now = clock_.NowMs();
  auto admission = auth_.throttle().Begin(fmt::format("password:{}", user_id), now);
  if (!admission.ticket) return Error::Throttled("too many wrong passwords", admission.retry_after);
  const auto stored = store_.PasswordHash(user_id);
  if (!stored) return Error::NotFound("user not found");
  if (*stored == "!") {
    return Error::Invalid(
        "the password was not changed",
        {{"old_password", "you sign in through single sign-on: change your password there"}});
  }
  if (!auth_.hasher().Verify(change.old_password, *stored)) {
    admission.ticket->Failed(clock_.NowMs());
    return Error::Invalid("the password was not changed", {{"old_password", "is wrong"}});
  }
  admission.ticket->Succeeded(clock_.NowMs());
  store_.SetPassword(user_id, auth_.hasher().Hash(change.new_password), "password_changed", now);
  auth_.EndSessions(user_id, keep_cookie);
  return {};
}

std::vector<ApiToken> Accounts::ListTokens(std::optional<int> user_id) {
  const auto now = clock_.NowMs();
  auto tokens = store_.ListTokens(user_id);
  for (auto& t : tokens)
    t = WithState(std::move(t), now);
  return tokens;
}

Result<std::pair<ApiToken, std::string>> Accounts::CreateToken(int user_id, const TokenFields& fields) {
  const std::string secret = kTokenPrefix + RandomSecret();
  const auto now = clock_.NowMs();
  auto token = store_.AddToken(user_id, fields.name, fields.scope, SecretHash(secret), now,
                               now + fields.expires_in_days * kDayMs, kMaxTokensPerUser);
  if (!token) return token.error();
  return std::pair{WithState(*std::move(token), now), secret};
}

std::string Accounts::ApproveCliLogin(int user_id, const CliLoginRequest& request) {
  auto code = RandomSecret();
  const auto now = clock_.NowMs();
  store_.AddCliLogin({.code_hash = SecretHash(code),
                      .user_id = user_id,
                      .code_challenge = request.code_challenge,
                      .token = request.token,
                      .created_ms = now,
                      .expires_ms = now + kCliLoginCodeMs},
                     now);
  return code;
}

Result<std::pair<ApiToken, std::string>> Accounts::RedeemCliLogin(const CliTokenRequest& request) {
  const auto login = store_.TakeCliLogin(SecretHash(request.code), clock_.NowMs());
  if (!login) {
    return Error::Invalid("the login is not valid",
                          {{"code",
                            "unknown, used or expired (a code is good once, for two minutes): run "
                            "`cronwheel login` again",
                            "invalid_grant"}});
  }
  if (!SameSecret(PkceChallenge(request.code_verifier), login->code_challenge)) {
    return Error::Invalid("the login is not valid",
                          {{"code_verifier",
                            "does not match the challenge the login was approved with: run "
                            "`cronwheel login` again",
                            "invalid_grant"}});
  }
  return CreateToken(login->user_id, login->token);
}

std::optional<ApiToken> Accounts::DeleteToken(int id, std::optional<int> owner) {
  auto token = store_.DeleteToken(id, owner);
  if (!token) return std::nullopt;
  return WithState(*std::move(token), clock_.NowMs());
}

}  // namespace cronwheel::admin
