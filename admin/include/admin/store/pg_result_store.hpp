#pragma once
// ResultStore (results/result_store.hpp) on PostgreSQL: the fire tables through their owner
// (store/fire_log.hpp), the job table's FIX_DELAY resume through its owner (store/job_repository.cpp), the
// daily partitions through store/log_partitions.hpp, and the one writer of log_report.
//
// Thread-safety: safe from any thread (pooled connections).

#include "admin/results/result_store.hpp"

namespace cronwheel::admin {

class PgPool;
class TriggerResultWriter;

class PgResultStore final : public ResultStore {
 public:
  // `held`: the writer whose trigger results kept back for callbacks RecordCallbacks writes with them
  // (nullptr: none).
  explicit PgResultStore(PgPool& pool, TriggerResultWriter* held = nullptr) : pool_(pool), held_(held) {}

  std::vector<std::pair<std::int64_t, std::optional<std::string>>> GroupTokensOf(
      std::span<const std::int64_t> log_ids) override;
  CallbacksRecorded RecordCallbacks(std::span<const HandleResult> results, const std::string& node_id,
                                    std::int64_t now_ms) override;
  FailuresClaimed ClaimFailures(const std::string& node_id, std::int64_t now_ms, int limit,
                                std::int64_t stuck_before_ms, const PlanRetries& plan) override;
  void SetAlarmStatus(std::span<const AlarmStatus> statuses) override;
  std::vector<AlertPlan> PlanAlerts(const FailedFire& fire, std::string_view event,
                                    const nlohmann::json& alarm, std::int64_t now_ms) override;
  void FinishAlerts(std::span<const AlertDelivery> deliveries, std::int64_t now_ms) override;
  std::vector<PendingAlert> ClaimAlertRetries(std::int64_t now_ms, int limit) override;
  std::vector<PendingAlert> ClaimRecoveries(std::int64_t now_ms, int limit) override;
  std::vector<RunningFire> RunningSince(std::int64_t sent_before_ms, int limit) override;
  void MarkLost(std::span<const std::int64_t> log_ids, std::int64_t now_ms,
                const std::string& message) override;
  void EnsurePartitions(std::int64_t now_ms) override;
  void UpdateReport(std::int64_t now_ms, int days) override;
  std::vector<RunAlarm> ClaimRunAlarms(std::int64_t now_ms, int limit) override;
  void FinishRunAlarms(std::span<const RunAlarmDone> done) override;
  RetentionOutcome DropFiresBefore(std::int64_t cutoff_ms, int batch) override;
  std::vector<OutputPull> ClaimOutputPulls(std::int64_t now_ms, std::int64_t lease_ms, int limit) override;
  void FinishOutputPulls(std::span<const PulledOutput> pulled, std::int64_t now_ms) override;

 private:
  CallbacksRecorded Record(std::span<const HandleResult> results, std::span<const TriggerResult> triggers,
                           const std::string& node_id, std::int64_t now_ms);

  PgPool& pool_;
  TriggerResultWriter* held_;
};

}  // namespace cronwheel::admin
