#pragma once
// The dashboard's per-day counts and log retention (XXL-JOB's JobLogReportHelper, docs/xxl-job-protocol.md
// §11), every minute. Per-day counts (UTC days) into log_report for today and the two days before: running =
// PENDING + RUNNING, success = SUCCESS, failed = FAILED + SKIPPED. Retention, at most once a day (the first
// at start): deletes fires scheduled before 00:00 UTC of (today - retention days), 1000 rows per
// transaction, so no lock is held long. Off when retention_days < 3 (XXL-JOB 3.1+).
//
// Thread-safety: RunOnce is called from one thread at a time.

#include <cstdint>

#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

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
