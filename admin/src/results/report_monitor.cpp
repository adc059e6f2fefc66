#include "admin/results/report_monitor.hpp"

#include <spdlog/spdlog.h>

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;
constexpr int kRetentionBatch = 1000;

}  // namespace

ReportMonitor::ReportMonitor(ringwheel::Clock& clock, ResultStore& store, int retention_days)
    : clock_(clock), store_(store), retention_days_(retention_days) {}

RetentionOutcome ReportMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  store_.EnsurePartitions(now);
  store_.UpdateReport(now, 3);  // today and the two days before
  if (last_retention_ms_ < 0 || now - last_retention_ms_ >= kDayMs) {
    last_retention_ms_ = now;
    return ApplyRetention(now);
  }
  return {};
}

RetentionOutcome ReportMonitor::ApplyRetention(std::int64_t now_ms) {
  if (retention_days_ < 3) return {};
  const auto cutoff = now_ms - now_ms % kDayMs - static_cast<std::int64_t>(retention_days_) * kDayMs;
  const auto dropped = store_.DropFiresBefore(cutoff, kRetentionBatch);
  if (dropped.partitions > 0 || dropped.default_rows > 0 || dropped.workflow_runs > 0 || dropped.alerts > 0 ||
      dropped.run_onces > 0) {
    spdlog::info(
        "log retention: dropped {} day(s) of fires with their archived output, and deleted {} other fire(s), "
        "{} workflow run(s), {} alert(s) and {} run-once request(s) older than {} days",
        dropped.partitions, dropped.default_rows, dropped.workflow_runs, dropped.alerts, dropped.run_onces,
        retention_days_);
  }
  return dropped;
}

}  // namespace cronwheel::admin
