#pragma once
// The console's queries that are not job or group CRUD: the dashboard, a job's glue versions, and the
// maintenance of fires (recording a manual kill, clearing old fires). PostgreSQL; see job_repository.hpp
// for jobs, groups and log queries.
//
// Thread-safety: safe from any thread (pooled connections). Time: the injected Clock (epoch ms); days are
// UTC dates, as log_report's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct GlueVersion {
  std::int64_t id = 0;
  std::string glue_type;
  std::string glue_source;
  std::string glue_remark;
  std::int64_t glue_updated_ms = 0;
  std::int64_t created_ms = 0;
};

struct DayCounts {
  std::string day;  // "2026-01-31" (UTC)
  std::int64_t running = 0;
  std::int64_t success = 0;
  std::int64_t failed = 0;
};

struct DashboardCounts {
  std::int64_t jobs = 0;
  std::int64_t enabled_jobs = 0;
  std::int64_t fires_today = 0;  // fires scheduled since 00:00 UTC today
  std::vector<DayCounts> days;   // oldest first, one per day, today last
};

// Which fires to delete. Exactly one of older_than_days / keep_last is set.
struct LogClear {
  std::optional<int> group_id;
  std::optional<int> job_id;
  std::optional<std::vector<int>> group_ids;  // restrict to these groups (permissions)
  std::optional<int> older_than_days;         // scheduled before now - N days (0 = all)
  std::optional<int> keep_last;               // keep the newest N of the selection
};

class ConsoleRepository {
 public:
  ConsoleRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // Newest first (at most 30 are kept per job).
  std::vector<GlueVersion> GlueHistory(int job_id);

  // `group_ids` nullopt = everything: the days before today come from log_report (kept every minute by
  // the report monitor, XXL-JOB JobLogReportHelper), today is counted live from job_log so it agrees with
  // fires_today. With `group_ids` (a USER's groups) every day is counted live over those groups only.
  // Rules as the report monitor's: running = PENDING or RUNNING, success, failed = FAILED or SKIPPED.
  DashboardCounts Dashboard(int days, const std::optional<std::vector<int>>& group_ids);

  // Records a manual kill on a fire still without a result (XXL-JOB logKill): handle_code 500,
  // handle_msg "Manual operation, kill job: <msg>", alarm_status 1 (no retry or alarm: a person stopped
  // it). The executor's later callback is then ignored as a repeat. False when the fire already had a
  // result.
  bool MarkKilled(std::int64_t log_id, const std::string& executor_msg);

  // Deletes finished fires (SUCCESS, FAILED, SKIPPED; never PENDING or RUNNING, which the scheduler and
  // the executors still use) in batches of 1000, each its own transaction. Returns how many.
  std::int64_t ClearLogs(const LogClear& c);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
