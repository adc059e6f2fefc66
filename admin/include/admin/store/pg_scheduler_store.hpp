#pragma once
// SchedulerStore on PostgreSQL. Each scan is one transaction of a fixed handful of statements, however
// many jobs it handles: the live admins and P, the partitions locked FOR UPDATE SKIP LOCKED
// (schedule/partitions.hpp), one SELECT of the due jobs of those partitions (index job_schedule_due_idx), one
// multi-row INSERT of the fires (fire_log::InsertPlanned), one UPDATE ... FROM of the jobs, one UPDATE of
// the partitions scanned.
//
// Thread-safety: safe from any thread (each call borrows its own pooled connection).

#include <chrono>
#include <optional>

#include "admin/schedule/scheduler_store.hpp"
#include "admin/store/pg_pool.hpp"

namespace cronwheel::admin {

class PgSchedulerStore final : public SchedulerStore {
 public:
  struct Settings {
    // How long a statement of the scan waits for a row lock (a job row an edit holds) before giving up (the
    // scan is retried next second). Partition locks are never waited for (SKIP LOCKED).
    std::chrono::milliseconds lock_timeout{3000};
    // PostgreSQL aborts a scan transaction left idle this long, so a hung admin cannot keep its partitions
    // (XXL-JOB #3789: its lock is held until the database drops the connection).
    std::chrono::milliseconds idle_in_transaction_timeout{10'000};
    // A partition nobody scanned for this long is taken by whoever scans next (a dead or stalled admin's).
    std::chrono::milliseconds takeover_after{1500};
    // An admin is live for the assignment when its heartbeat is this recent (NodeLease's lock_grace).
    std::chrono::milliseconds liveness_grace{2500};
  };

  // The pre-read: started jobs due by $1 (epoch ms: now + pre_read) in the partitions $4 (an int[] literal)
  // of $3, soonest first, at most $2. Served by the partial index job_schedule_due_idx (next_fire_ms) WHERE
  // next_fire_ms > 0 (a stopped job's is 0: sql/025_job_schedule.sql).
  // Public so bench/admin/bench_pre_read can time and EXPLAIN exactly the statement Scan runs.
  static constexpr const char* kDueJobsSql = R"sql(
    SELECT j.id, j.group_id, j.schedule_type, j.schedule_conf, j.time_zone, j.misfire_strategy, s.next_fire_ms,
           CASE WHEN j.calendar_ids = '{}' THEN NULL ELSE to_json(j.calendar_ids) END AS calendar_ids,
           j.start_ms, j.end_ms
      FROM job_schedule s JOIN job j ON j.id = s.job_id
     WHERE s.next_fire_ms > 0 AND s.next_fire_ms <= $1 AND s.job_id % $3 = ANY($4::int[]) AND j.enabled
     ORDER BY s.next_fire_ms LIMIT $2
  )sql";

  PgSchedulerStore(PgPool& pool, Settings settings);
  explicit PgSchedulerStore(PgPool& pool) : PgSchedulerStore(pool, Settings{}) {}

  ScanOutcome Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                   ScanPlanner& planner) override;
  std::vector<ClaimedFire> ClaimForDispatch(std::string_view node_id, std::span<const std::int64_t> log_ids,
                                            std::int64_t claim_ms,
                                            std::span<const std::int64_t> doubtful_claims) override;
  std::vector<ClaimedFire> OwnUnclaimed(std::string_view node_id, std::int64_t after_log_id,
                                        int limit) override;
  std::uint64_t CommitsInDoubt() override;
  std::vector<std::int64_t> WithdrawnAt(std::span<const std::int64_t> instants_ms) override;
  void MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) override;
  std::vector<std::int64_t> CreateShards(std::int64_t base_log_id, int total, std::string_view node_id,
                                         std::int64_t now_ms) override;

 private:
  PgPool& pool_;
  Settings settings_;
  // The workflows' schedules (store/workflow_table.hpp, ScanDue); used by the scanning thread only.
  std::optional<ScanPlanner> workflow_planner_;
};

// Makes table schedule_partition hold exactly `partitions` rows (0..partitions-1), under the migration lock
// (store/migrations.hpp), in one transaction. Returns the number it held before. Throws
// std::invalid_argument when `partitions` < 1.
int ResizeSchedulePartitions(pqxx::connection& conn, int partitions);

}  // namespace cronwheel::admin
