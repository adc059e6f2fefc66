#pragma once
// Failed fires: retries and alarms (XXL-JOB's JobFailMonitorHelper, docs/xxl-job-protocol.md §11). Every
// admin runs it (AdminApp drives RunOnce() from a PeriodicTask every second; XXL-JOB every 10 s); a round is
// safe on several admins at once (claims with FOR UPDATE SKIP LOCKED, idempotent updates).
//
// A failed fire (trigger failed, or a result other than 200) with alarm_status 0 is claimed
// (alarm_status -1) and, in the same transaction:
//   * if it has retries left, a RETRY row is written (retry_count - 1, parent_log_id = the failed fire,
//     same param and shard), due after a back-off of retry_backoff_s * 2^(attempt-1), at most
//     `max_backoff` (XXL-JOB retries at once; retry_backoff_s = 0 keeps that);
//   * a FIX_DELAY job waiting for this run gets its next fire (a failed trigger sends no callback;
//     schedule/next_fire.hpp).
// After the commit the retries are handed to `schedule_retry` (they wait in the hashed wheel timer). A
// final failure (no retry left) is alarmed (AlarmSender); alarm_status becomes 1 (no alarm: none
// configured, or a retry follows), 2 (sent) or 3 (failed). XXL-JOB alarms every failed attempt; here one
// alarm says the job has failed for good. A fire left at -1 for 10 minutes (its admin died mid-alarm) is
// marked 3.
//
// Alert channels (admin/model/alert_channel.hpp) are told by their rules (admin/model/alert_rule.hpp): the
// store decides under a lock per job and channel and records each decision (alert_log); a delivery that fails
// is tried again by later rounds after a back-off (AlertRetryDelayMs), on any admin, kMaxAlertAttempts times
// in all. Nothing here blocks scheduling: rounds run on their own thread.
//
// Thread-safety: RunOnce is called from one thread at a time.

#include <chrono>
#include <functional>
#include <string>

#include "admin/model/fire.hpp"
#include "admin/results/alarm.hpp"
#include "admin/results/result_store.hpp"
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

  FailureMonitor(Settings settings, ringwheel::Clock& clock, ResultStore& store, AlarmSender& alarms,
                 ScheduleRetry schedule_retry);

  struct Round {
    int claimed = 0;
    int retries = 0;
    int alarms_sent = 0;
    int alarms_failed = 0;
    int alerts_retried = 0;  // alert deliveries attempted again
    int recoveries = 0;      // RECOVERED alerts sent
  };
  Round RunOnce();

 private:
  // Alarms a final failure: the job's alarm_email and alarm_webhook, and its channels by their rules;
  // sets `status` and collects the channels' deliveries.
  void Alarm(const FailedFire& fire, std::int64_t now, AlarmStatus& status,
             std::vector<AlertDelivery>& deliveries, Round& round);
  // Alarms the workflow runs that ended FAILED to their group's alert channels (ResultStore::ClaimRunAlarms).
  void AlarmFailedRuns(std::int64_t now, Round& round);
  Settings settings_;
  ringwheel::Clock& clock_;
  ResultStore& store_;
  AlarmSender& alarms_;
  ScheduleRetry schedule_retry_;
};

}  // namespace cronwheel::admin
