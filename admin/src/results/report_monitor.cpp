#include "admin/results/report_monitor.hpp"

#include <spdlog/spdlog.h>

#include "admin/store/log_partitions.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = log_partitions::kDayMs;
constexpr int kRetentionBatch = 1000;

}  // namespace

ReportMonitor::ReportMonitor(ringwheel::Clock& clock, PgPool& pool, int retention_days)
    : clock_(clock), pool_(pool), retention_days_(retention_days) {}

log_partitions::Dropped ReportMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  EnsurePartitions(now);
  UpdateReport(now);
  if (last_retention_ms_ < 0 || now - last_retention_ms_ >= kDayMs) {
    last_retention_ms_ = now;
    return ApplyRetention(now);
  }
  return {};
}

void ReportMonitor::UpdateReport(std::int64_t now_ms) {
  const auto today = now_ms - now_ms % kDayMs;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    for (int back = 0; back < 3; ++back) {
      const auto start = today - back * kDayMs;
      tx.exec_params(R"sql(
        INSERT INTO log_report (day, running_count, success_count, failed_count, updated_ms)
        SELECT to_timestamp($1 / 1000.0)::date,
               count(*) FILTER (WHERE status IN ('PENDING', 'RUNNING')),
               count(*) FILTER (WHERE status = 'SUCCESS'),
               count(*) FILTER (WHERE status IN ('FAILED', 'SKIPPED')), $3
          FROM job_log WHERE scheduled_ms >= $1 AND scheduled_ms < $2
        ON CONFLICT (day) DO UPDATE
           SET running_count = EXCLUDED.running_count, success_count = EXCLUDED.success_count,
               failed_count = EXCLUDED.failed_count, updated_ms = EXCLUDED.updated_ms
      )sql",
                     start, start + kDayMs, now_ms);
    }
    tx.commit();
  });
}

log_partitions::Dropped ReportMonitor::ApplyRetention(std::int64_t now_ms) {
  if (retention_days_ < 3) return {};
  const auto cutoff = now_ms - now_ms % kDayMs - static_cast<std::int64_t>(retention_days_) * kDayMs;
  const auto dropped = WithConnection(pool_, [&](pqxx::connection& conn) {
    return log_partitions::DropBefore(conn, cutoff, kRetentionBatch);
  });
  if (dropped.partitions > 0 || dropped.default_rows > 0) {
    spdlog::info("log retention: dropped {} day(s) of fires and deleted {} other fire(s) older than {} days",
                 dropped.partitions, dropped.default_rows, retention_days_);
  }
  return dropped;
}

void ReportMonitor::EnsurePartitions(std::int64_t now_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) { log_partitions::Ensure(conn, now_ms); });
}

}  // namespace cronwheel::admin
