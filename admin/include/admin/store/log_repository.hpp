#pragma once
// Fires as the console sees them (table job_log, XXL-JOB's xxl_job_log, docs/xxl-job-protocol.md §12
// /joblog/): paged lists, one fire, a manual kill, clearing old fires. The writes go through
// store/fire_log.hpp like every other write of job_log.
//
// Thread-safety: safe from any thread (pooled connections). Time: the injected Clock (epoch ms).

#include <cstdint>
#include <optional>
#include <string>

#include "admin/model/model.hpp"
#include "admin/model/queries.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class LogRepository {
 public:
  LogRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // Newest scheduled first.
  LogPage ListLogs(const LogQuery& q);
  std::optional<JobLog> GetLog(std::int64_t id);
  // What the fire output archive holds of fire `log` (docs/operations.md, "The fire output archive").
  FireOutputArchive GetOutput(const JobLog& log);

  // Records a manual kill on a fire still without a result, or whose failed result is the executor's report
  // of this kill (fire_log::MarkKilled). False when the fire had succeeded.
  bool MarkKilled(std::int64_t log_id, const std::string& executor_msg);

  // Deletes finished fires (SUCCESS, FAILED, SKIPPED; never PENDING or RUNNING, which the scheduler and the
  // executors still use) in batches of 1000, each its own transaction. Returns how many.
  std::int64_t ClearLogs(const LogClear& c);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
