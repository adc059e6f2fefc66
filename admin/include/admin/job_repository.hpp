#pragma once
// Jobs, groups and fires as the REST API and the console see them: validated creation and updates,
// start/stop, manual triggers, and log queries, on PostgreSQL.
//
// Validation follows "bad input gets a clear error and loses nothing": every problem is a FieldError
// naming the JSON field, the value and what is valid; nothing is written unless the whole input is valid.
// Unknown fields are errors too (a typo must not be silently ignored).
//
// Rules kept from XXL-JOB (xxl-job-protocol.md §5, §12): starting a job computes its first fire from
// now + 5 s (skipping the pre-read window); a NONE job cannot be started; stopping clears next/last;
// an update of a running job's schedule recomputes the next fire from now + 5 s; a GLUE_SHELL source has
// its '\r' removed; a glue change bumps glue_updated_ms and keeps the newest 30 versions in glue_history;
// a group with jobs cannot be deleted.
// New: child-job cycles are refused when a job is saved; stopping a job also withdraws its fires that
// are written but not yet being sent.
//
// Thread-safety: safe from any thread (pooled connections).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "admin/model.hpp"
#include "admin/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct FieldError {
  std::string field;
  std::string message;
};
using FieldErrors = std::vector<FieldError>;

// A value or the reasons it could not be produced.
template <class T>
using Validated = std::variant<T, FieldErrors>;

// Outcome of an operation on an existing row.
enum class Outcome { kOk, kNotFound, kConflict, kInvalid };

struct LogQuery {
  std::optional<int> job_id;
  std::optional<int> group_id;
  std::optional<std::string> status;          // PENDING, RUNNING, SUCCESS, FAILED, SKIPPED
  std::optional<std::int64_t> from_ms;        // scheduled_ms >= from_ms
  std::optional<std::int64_t> to_ms;          // scheduled_ms < to_ms
  std::optional<std::vector<int>> group_ids;  // restrict to these groups (permissions)
  int offset = 0;
  int limit = 50;
};

struct LogPage {
  std::int64_t total = 0;
  std::vector<JobLog> items;
};

struct JobQuery {
  std::optional<int> group_id;
  std::optional<bool> enabled;
  std::optional<std::string> text;  // substring of description or handler
  std::optional<std::vector<int>> group_ids;
  int offset = 0;
  int limit = 50;
};

struct JobPage {
  std::int64_t total = 0;
  std::vector<Job> items;
};

class JobRepository {
 public:
  // `webhook_allow`: the operator's alarm_webhook_allow prefixes; a job whose alarm_webhook is new or
  // changed must start with one of them (empty: webhooks cannot be set).
  JobRepository(ringwheel::Clock& clock, PgPool& pool, std::vector<std::string> webhook_allow = {});

  // --- groups -------------------------------------------------------------------------------------------
  // Body fields: app_name, title, address_type (AUTO|MANUAL), addresses (array of http(s) URLs; required
  // non-empty for MANUAL), access_token (string or null).
  Validated<JobGroup> CreateGroup(const nlohmann::json& body);
  // Partial update: absent fields keep their values. nullopt = not found.
  std::optional<Validated<JobGroup>> UpdateGroup(int id, const nlohmann::json& body);
  Outcome DeleteGroup(int id, std::string* why);
  std::optional<JobGroup> GetGroup(int id);
  std::vector<JobGroup> ListGroups();

  // --- jobs ---------------------------------------------------------------------------------------------
  // Body fields: the columns of Job in snake_case (see model.hpp) except the scheduler-owned ones.
  Validated<Job> CreateJob(const nlohmann::json& body);
  std::optional<Validated<Job>> UpdateJob(int id, const nlohmann::json& body);
  Outcome DeleteJob(int id);
  std::optional<Job> GetJob(int id);
  JobPage ListJobs(const JobQuery& q);
  // Starts: next fire from now + 5 s. kInvalid (with *errors) for NONE or a schedule that never fires.
  Outcome StartJob(int id, FieldErrors* errors);
  Outcome StopJob(int id);
  // Writes a MANUAL (or API) fire row owned by node_id, to be sent at once; returns its log id.
  // `address`, if given, must be one of the group's addresses (checked again when sending).
  std::optional<std::int64_t> CreateManualFire(int job_id, TriggerType type,
                                               const std::optional<std::string>& param,
                                               const std::string& node_id);

  // --- logs ---------------------------------------------------------------------------------------------
  LogPage ListLogs(const LogQuery& q);
  std::optional<JobLog> GetLog(std::int64_t id);

 private:
  // Adds an alarm_webhook error when the job's webhook is new or changed (before == null: a new job) and
  // not under an allowed prefix.
  void CheckWebhook(const Job& job, const Job* before, FieldErrors& errors) const;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  std::vector<std::string> webhook_allow_;
};

// JSON shapes of the API (snake_case; enums as XXL-JOB spells them).
nlohmann::json ToJson(const JobGroup& g, bool include_token = false);
nlohmann::json ToJson(const Job& j);
nlohmann::json ToJson(const JobLog& l);
nlohmann::json ToJson(const FieldErrors& errors);

}  // namespace cronwheel::admin
