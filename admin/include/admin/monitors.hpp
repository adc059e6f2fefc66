#pragma once
// The admin's background monitors (XXL-JOB's JobFailMonitorHelper, JobCompleteHelper, JobRegistryHelper
// and JobLogReportHelper, xxl-job-protocol.md §3, §11). Every admin runs them; each round is safe to run
// on several admins at once (claims with FOR UPDATE SKIP LOCKED, idempotent updates). AdminApp drives each
// RunOnce() from a PeriodicTask; tests call RunOnce() directly.
//
// FailureMonitor (every second; XXL-JOB every 10 s). A failed fire (trigger failed, or a result other
// than 200) with alarm_status 0 is claimed (alarm_status -1) and, in the same transaction:
//   * if it has retries left, a RETRY row is written (retry_count - 1, parent_log_id = the failed fire,
//     same param and shard), due after a back-off of retry_backoff_s * 2^(attempt-1), at most
//     `max_backoff` (XXL-JOB retries at once; retry_backoff_s = 0 keeps that);
//   * a FIX_DELAY job waiting for this run gets its next fire (a failed trigger sends no callback).
// After the commit the retries are handed to `schedule_retry` (they wait in the hashed wheel timer). A
// final failure (no retry left) is alarmed (AlarmSender); alarm_status becomes 1 (no alarm: none
// configured, or a retry follows), 2 (sent) or 3 (failed). XXL-JOB alarms every failed attempt; here one
// alarm says the job has failed for good. A fire left at -1 for 10 minutes (its admin died mid-alarm) is
// marked 3.
//
// LostResultMonitor (every minute). A fire RUNNING for more than `lost_after` (10 minutes) on an executor
// that is gone gets handle_code 500 "Job result lost, marked as failure" (then the failure monitor
// retries and alarms). "Gone" for an AUTO group: its address is not in the live registry; for a MANUAL
// group: its /beat does not answer 200 (XXL-JOB compares with the registry for both and so fails healthy
// long runs of manual groups, §15 item 5).
//
// RegistryMonitor (every 10 s): deletes registrations older than 90 s.
//
// ReportMonitor (every minute): per-day counts (UTC days) into log_report for today and the two days
// before: running = PENDING + RUNNING, success = SUCCESS, failed = FAILED + SKIPPED. Retention, at most
// once a day (the first at start): deletes fires scheduled before 00:00 UTC of (today - retention days),
// 1000 rows per transaction, so no lock is held long. Off when retention_days < 3 (XXL-JOB 3.1+).
//
// Thread-safety: each monitor's RunOnce is called from one thread at a time.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "admin/alarm.hpp"
#include "admin/executor_client.hpp"
#include "admin/fire.hpp"
#include "admin/job_catalog.hpp"
#include "admin/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class FailureMonitor {
 public:
  struct Settings {
    std::string node_id;
    int batch = 1000;
    std::chrono::seconds max_backoff{3600};
  };
  // Sends a retry after `delay`.
  using ScheduleRetry = std::function<void(Fire fire, std::chrono::milliseconds delay)>;

  FailureMonitor(Settings settings, ringwheel::Clock& clock, PgPool& pool, AlarmSender& alarms,
                 ScheduleRetry schedule_retry);

  struct Round {
    int claimed = 0;
    int retries = 0;
    int alarms_sent = 0;
    int alarms_failed = 0;
  };
  Round RunOnce();

  // Back-off before retry `attempt` (1-based) of a job with `backoff_s`.
  static std::chrono::milliseconds Backoff(int backoff_s, int attempt, std::chrono::seconds max);

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  AlarmSender& alarms_;
  ScheduleRetry schedule_retry_;
};

class LostResultMonitor {
 public:
  LostResultMonitor(ringwheel::Clock& clock, PgPool& pool, JobCatalog& catalog, ExecutorClient& client,
                    std::string global_token,
                    std::chrono::milliseconds lost_after = std::chrono::minutes(10));
  // Returns the number of fires marked lost.
  int RunOnce();

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  JobCatalog& catalog_;
  ExecutorClient& client_;
  std::string global_token_;
  std::chrono::milliseconds lost_after_;
};

class ReportMonitor {
 public:
  ReportMonitor(ringwheel::Clock& clock, PgPool& pool, int retention_days);
  // Updates the report; runs retention when a day has passed since the last time. Returns rows deleted.
  std::int64_t RunOnce();
  // Recomputes the report rows of the three days ending with the day of now_ms.
  void UpdateReport(std::int64_t now_ms);
  // Deletes fires older than the retention; returns how many.
  std::int64_t ApplyRetention(std::int64_t now_ms);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  int retention_days_;
  std::int64_t last_retention_ms_ = -1;
};

}  // namespace cronwheel::admin
