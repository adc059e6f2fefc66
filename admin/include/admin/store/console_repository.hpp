#pragma once
// The console's queries that are not job, group or fire CRUD: the dashboard and a job's glue versions.
// PostgreSQL; see pg_job_store.hpp, pg_group_store.hpp and log_repository.hpp for the rest.
//
// Thread-safety: safe from any thread (pooled connections). Time: the injected Clock (epoch ms); days are
// UTC dates, as log_report's.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/store/fire_log.hpp"
#include "admin/store/pg_pool.hpp"
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

  // Enabled jobs in the cluster (the metric cronwheel_jobs_enabled). Throws on database failure.
  std::int64_t EnabledJobs();
  // The workflow runs started at or after `since_ms`, by state (the metric cronwheel_workflow_runs). Throws
  // on database failure.
  std::map<std::string, std::int64_t> WorkflowRunsByState(std::int64_t since_ms);
  // The fire output archive's size (the metrics cronwheel_fire_output_archive_*; store/fire_log.hpp,
  // MeasureArchive). Throws on database failure.
  fire_log::ArchiveSize OutputArchiveSize();

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
