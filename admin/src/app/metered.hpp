#pragma once
// Decorators of the admin's seams that count what passes through them into AdminMetrics
// (admin/app/metrics.hpp), so the stages of the fire path carry no metrics code of their own: AdminApp
// wraps each production implementation once and hands the wrapper to the stages.
//
//   MeteredTriggerRecorder  every trigger outcome: fires sent / failed, and the fire lag of CRON fires
//                           (scheduled instant -> the executor's answer to /run, read when the outcome is
//                           recorded, right after the answer)
//   MeteredExecutorClient   requests to executors by method and result, and their latency
//   MeteredSchedulerStore   scans (result, duration, jobs read, partition lock wait, partitions held) and
//                           skipped misfires (written by a scan, or marked when claimed too late)
//   MeteredAlarmSender      alarms sent and failed
//
// Thread-safety: as the wrapped object; the metrics are atomics. Lifetime: the wrapped object, the metrics
// and the clock outlive the wrapper.

#include "admin/app/metrics.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "admin/results/alarm.hpp"
#include "admin/schedule/scheduler_store.hpp"
#include "admin/schedule/seams.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class MeteredTriggerRecorder final : public TriggerRecorder {
 public:
  MeteredTriggerRecorder(TriggerRecorder& inner, AdminMetrics& m, ringwheel::Clock& clock)
      : inner_(inner), m_(m), clock_(clock) {}
  void Record(TriggerResult result) override;

 private:
  TriggerRecorder& inner_;
  AdminMetrics& m_;
  ringwheel::Clock& clock_;
};

class MeteredExecutorClient final : public ExecutorClient {
 public:
  MeteredExecutorClient(ExecutorClient& inner, AdminMetrics& m, ringwheel::Clock& clock)
      : inner_(inner), m_(m), clock_(clock) {}
  void RunAsync(const std::string& address, const std::string& token, const xxljob::TriggerParam& param,
                std::int64_t send_by_ms, RunDone done) override;
  RunReply Run(const std::string& address, const std::string& token,
               const xxljob::TriggerParam& param) override;
  xxljob::Envelope Beat(const std::string& address, const std::string& token) override;
  xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Log(const std::string& address, const std::string& token,
                       const xxljob::LogParam& param) override;
  // An operator's rare request: not measured.
  xxljob::Envelope Cancel(const std::string& address, const std::string& token,
                          const xxljob::CancelParam& param) override {
    return inner_.Cancel(address, token, param);
  }
  void AcceptedAsync(const std::string& address, const std::string& token, const xxljob::CancelParam& param,
                     RunDone done) override {
    inner_.AcceptedAsync(address, token, param, std::move(done));
  }
  xxljob::Envelope Drain(const std::string& address, const std::string& token) override {
    return inner_.Drain(address, token);
  }

 private:
  template <class Call>
  auto Measure(AdminMetrics::Method& method, Call&& call);
  ExecutorClient& inner_;
  AdminMetrics& m_;
  ringwheel::Clock& clock_;
};

class MeteredSchedulerStore final : public SchedulerStore {
 public:
  MeteredSchedulerStore(SchedulerStore& inner, AdminMetrics& m, ringwheel::Clock& clock)
      : inner_(inner), m_(m), clock_(clock) {}
  ScanOutcome Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                   ScanPlanner& planner) override;
  std::vector<ClaimedFire> ClaimForDispatch(std::string_view node_id, std::span<const std::int64_t> log_ids,
                                            std::int64_t claim_ms,
                                            std::span<const std::int64_t> doubtful_claims) override;
  std::vector<ClaimedFire> OwnUnclaimed(std::string_view node_id, std::int64_t after_log_id,
                                        int limit) override {
    return inner_.OwnUnclaimed(node_id, after_log_id, limit);
  }
  std::uint64_t CommitsInDoubt() override { return inner_.CommitsInDoubt(); }
  std::vector<std::int64_t> WithdrawnAt(std::span<const std::int64_t> instants_ms) override;
  void MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) override;
  std::vector<std::int64_t> CreateShards(std::int64_t base_log_id, int total, std::string_view node_id,
                                         std::int64_t now_ms) override;

 private:
  SchedulerStore& inner_;
  AdminMetrics& m_;
  ringwheel::Clock& clock_;
};

class MeteredAlarmSender final : public AlarmSender {
 public:
  MeteredAlarmSender(AlarmSender& inner, AdminMetrics& m) : inner_(inner), m_(m) {}
  AlarmOutcome Send(const AlarmEvent& event) override;

 private:
  AlarmSender& inner_;
  AdminMetrics& m_;
};

}  // namespace cronwheel::admin
