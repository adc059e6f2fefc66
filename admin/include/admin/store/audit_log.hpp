#pragma once
// Who changed what, and when (table audit_log): every state-changing REST route records one entry with
// the acting user, an action ("job.update", "user.login", ...), the entity ("job", "group", "user",
// "token", "log") and its id, and the entity's JSON before and after the change (null when it did not
// exist). Entries never hold passwords, password hashes, API tokens or group access tokens: callers pass
// the API's own JSON shapes, which leave them out.
//
// Record() runs after the change has committed, in its own transaction (the repositories own theirs): if
// the audit write fails, the change stands and the failure is logged as an error.
//
// Thread-safety: safe from any thread. Time: at_ms from the injected Clock (epoch ms).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/auth/authenticator.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct AuditEntry {
  std::int64_t id = 0;
  std::int64_t at_ms = 0;
  std::optional<int> user_id;
  std::string username;
  std::string action;
  std::string entity;
  std::string entity_id;
  nlohmann::json before;  // null when none
  nlohmann::json after;   // null when none
  std::string
      via;  // how the caller signed in: "session", "token 7 (ci)", "password" (a login); "" before v18
};

struct AuditQuery {
  std::optional<std::string> entity;
  std::optional<std::string> entity_id;
  std::optional<std::string> action;
  std::optional<std::string> username;
  int offset = 0;
  int limit = 50;
};

struct AuditPage {
  std::int64_t total = 0;
  std::vector<AuditEntry> items;  // newest first
};

class AuditLog {
 public:
  AuditLog(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // `who.user_id` 0 = no user (e.g. a failed login): user_id is stored as NULL, `who.username` as given.
  // Never throws: a failure is logged.
  void Record(const Principal& who, std::string_view action, std::string_view entity, std::string entity_id,
              const nlohmann::json& before, const nlohmann::json& after);
  AuditPage List(const AuditQuery& q);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
