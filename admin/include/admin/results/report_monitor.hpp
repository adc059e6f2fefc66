#pragma once
// The dashboard's per-day counts and log retention (XXL-JOB's JobLogReportHelper, docs/xxl-job-protocol.md
// §11), every minute, through a ResultStore (results/result_store.hpp). First the daily partitions of the
// fires two days ahead (on PostgreSQL store/log_partitions.hpp). Then
// per-day counts (UTC days) into log_report for today and the two days before: running = PENDING + RUNNING,
// success = SUCCESS, failed = FAILED + SKIPPED. Retention, at most once a day (the first at start): drops
// the days of fires scheduled before 00:00 UTC of (today - retention days), with their archived output (the
// fire output archive, partitioned as the fires), and deletes such fires from the default partition, 1000
// rows per transaction, so no lock is held long; then ended workflow runs, ended alerts (alert_log) and
// fired or cancelled run-once requests older than the same cut-off. Off when retention_days < 3 (XXL-JOB
// 3.1+).
//
// Thread-safety: RunOnce is called from one thread at a time.

#include <cstdint>

#include "admin/results/result_store.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class ReportMonitor {
 public:
  ReportMonitor(ringwheel::Clock& clock, ResultStore& store, int retention_days);
  // Creates the coming days' partitions, updates the report, and runs retention when a day has passed since
  // the last time. Returns what retention removed.
  RetentionOutcome RunOnce();
  // Removes fires older than the retention; returns what it removed.
  RetentionOutcome ApplyRetention(std::int64_t now_ms);

 private:
  ringwheel::Clock& clock_;
  ResultStore& store_;
  int retention_days_;
  std::int64_t last_retention_ms_ = -1;
};

}  // namespace cronwheel::admin
