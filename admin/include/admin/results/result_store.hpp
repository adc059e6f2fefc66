#pragma once
// What the results area (callbacks, the failure, lost-result and report monitors) needs from the database:
// the interface results owns, implemented on PostgreSQL by PgResultStore (admin/store/pg_result_store.hpp,
// through the fire tables' owner store/fire_log.hpp, the job table's owner store/job_repository.hpp and
// store/log_partitions.hpp) and by fakes in tests. The rules (which results count, retries and their
// back-off, what is alarmed, which executor is gone) are the callers'; each method is one transaction.
//
// Thread-safety: implementations are called from any thread at once. Errors: infrastructure failures throw.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/model/alert_channel.hpp"
#include "admin/model/alert_rule.hpp"
#include "admin/model/fire.hpp"

namespace cronwheel::admin {

// A fire's job log as the admin archives it (table fire_output; docs/operations.md, "The fire output
// archive"): its text within the admin's cap (output_archive_max_bytes; cronwheel/head_tail.hpp), valid
// UTF-8 without NUL bytes.
struct ArchivedLog {
  std::string content;
  std::int64_t log_bytes = 0;  // the size of the whole log on the executor
  std::int64_t left_out = 0;   // bytes of it not in `content`
};

// An executor's result for one fire.
struct HandleResult {
  std::int64_t log_id = 0;
  int handle_code = 0;  // never 0 (0 means "no result yet")
  std::string handle_msg;
  std::int64_t start_ms = 0;          // when the executor started the fire (epoch ms); 0 = not reported
  std::optional<std::string> output;  // the handler's output as compact JSON (at most 16 KiB); nullopt = none
  std::optional<ArchivedLog> log;     // the fire's job log, sent with its result (jobLog): archived with it
  std::int64_t pull_log_at_ms = 0;    // > 0: no log came; the admin reads it from the executor's /log then
};

// A fire whose job log the output puller reads from its executor (results/output_puller.hpp).
struct OutputPull {
  std::int64_t log_id = 0;
  std::int64_t scheduled_ms = 0;
  int attempts = 0;              // pulls tried, this one included
  std::string executor_address;  // where it ran; "" = nowhere known (never accepted, or the fire is gone)
  std::int64_t log_date_ms = 0;  // the fire's trigger_ms: the logDateTim of /log
  std::optional<std::string> group_token;  // its group's own access token, if the group has one
};
// What a pull did: archived, failed for good (error, no retry), or to be tried again at retry_at_ms.
struct PulledOutput {
  std::int64_t log_id = 0;
  std::int64_t scheduled_ms = 0;
  std::optional<ArchivedLog> log;  // archived
  std::string error;               // why not ("" when archived)
  std::int64_t retry_at_ms = 0;    // > 0: try again then (kept queued); 0: final
};

// A fire whose result was recorded: what the start-lag metric needs of it.
struct RecordedResult {
  std::int64_t log_id = 0;
  TriggerType type = TriggerType::kCron;
  std::int64_t scheduled_ms = 0;
  std::int64_t start_ms = 0;  // as reported; 0 = not reported
};

// What recording a batch of results did: the fires recorded, by log id (a repeat or an unknown id is not),
// and the child fires it wrote.
struct CallbacksRecorded {
  std::vector<RecordedResult> recorded;
  std::vector<Fire> children;
};

// A failed or skipped fire claimed for retry and alarm, with what the failure monitor needs of its job and
// group (job_* fields are unset when the job was deleted).
struct FailedFire {
  std::int64_t log_id = 0;
  int job_id = 0;
  int group_id = 0;
  std::string trigger_type;
  std::int64_t scheduled_ms = 0;
  int retries_left = 0;
  std::string executor_param;
  int shard_index = 0;
  int shard_total = 1;
  std::int64_t broadcast_log_id = 0;  // a shard of a broadcast: the broadcast's id (its retry keeps it)
  std::int64_t workflow_run_id = 0;   // a workflow node's fire: its run (its retry keeps it); else 0
  std::string workflow_node;          // and its node's key
  int trigger_code = 0;
  std::string trigger_msg;
  int handle_code = 0;
  std::string handle_msg;
  bool skipped = false;  // a misfire skipped (status SKIPPED): never sent, alerted as MISFIRE, never retried
  bool job_exists = false;
  std::string job_description;
  int job_retry_count = 0;
  int job_retry_backoff_s = 0;
  std::string alarm_email;
  std::string alarm_webhook;
  std::vector<AlertChannel> alert_channels;  // the job's and its group's, each once
  std::string schedule_type;
  std::string schedule_conf;
  std::string time_zone;
  bool job_enabled = false;
  std::int64_t job_next_fire_ms = 0;
  std::string app_name;
};

// A RETRY fire to write for a failed one.
struct PlannedRetry {
  int job_id = 0;
  int group_id = 0;
  std::int64_t due_ms = 0;
  std::string param;
  int retries_left = 0;  // after this retry
  int shard_index = 0;
  int shard_total = 1;
  std::int64_t broadcast_log_id = 0;  // the failed fire's: a retried shard stays in its broadcast
  std::int64_t workflow_run_id = 0;   // the failed fire's: a retried node's fire stays in its run
  std::string workflow_node;
  std::int64_t parent_log_id = 0;
  std::string note;
};

// Final alarm state of a claimed fire, which leaves the queue: status 1 (no alarm), 2 (sent) or 3 (failed),
// and a note appended to its handle_msg ("" = none).
struct AlarmStatus {
  std::int64_t log_id = 0;
  int status = 1;
  std::string note;
};

// A fire sent to an executor and still without a result.
struct RunningFire {
  std::int64_t log_id = 0;
  std::string executor_address;
  std::string app_name;
  bool manual_group = false;               // its group's addresses are configured, not registered
  std::optional<std::string> group_token;  // the group's own access token, if it has one
};

// One alert decided for a final failure on one channel (tables alert_state, alert_log;
// admin/model/alert_rule.hpp).
struct AlertPlan {
  std::int64_t alert_id = 0;  // its alert_log row
  AlertChannel channel;
  AlertDecision decision = AlertDecision::kSend;
  int suppressed = 0;  // kSend: failures a silence window held back since the previous alert
};
// What one delivery attempt of an alert did.
struct AlertDelivery {
  std::int64_t alert_id = 0;
  int attempts_before = 0;  // attempts before this one
  bool ok = false;
  bool final = false;  // no further attempt whatever happened (the channel was deleted)
  std::string message;
};
// An alert whose delivery failed, due for another attempt.
struct PendingAlert {
  std::int64_t alert_id = 0;
  int attempts = 0;
  std::optional<AlertChannel> channel;  // nullopt: deleted meanwhile
  nlohmann::json alarm;                 // the alarm's values as the failure monitor recorded them
  int suppressed = 0;
};

// A FAILED workflow run whose alarm is due (workflow_run.alarm_status), claimed for sending.
struct RunAlarm {
  std::int64_t run_id = 0;
  int workflow_id = 0;
  std::string workflow_name;
  std::string app_name;  // its group's
  std::string trigger_type;
  std::int64_t scheduled_ms = 0;
  std::string note;                    // the run's
  std::string failed_nodes;            // "b FAILED (fire 123), c KILLED (fire 124)"
  std::vector<AlertChannel> channels;  // its group's alert channels
};
// A run alarm's end: status 2 (sent) or 3 (failed, or no channel alerts FAILED), and a note for the run.
struct RunAlarmDone {
  std::int64_t run_id = 0;
  int status = 3;
  std::string note;
};

// What retention removed.
struct RetentionOutcome {
  int partitions = 0;              // whole days dropped (of fires, and of their archived output with them)
  std::int64_t default_rows = 0;   // fires deleted one by one (instants outside the daily partitions)
  std::int64_t workflow_runs = 0;  // ended workflow runs that started before the cutoff
  std::int64_t alerts = 0;         // alert_log rows of alerts decided before the cutoff (ended ones)
  std::int64_t run_onces = 0;      // run_once requests due before the cutoff that were fired or cancelled
  std::int64_t withdrawals = 0;    // fire_withdrawn rows of instants before the cutoff
};

class ResultStore {
 public:
  virtual ~ResultStore() = default;

  // --- callbacks (results/callback_service.hpp)
  // For each of `log_ids` that is a fire: its group's own token (nullopt = the group has none).
  virtual std::vector<std::pair<std::int64_t, std::optional<std::string>>> GroupTokensOf(
      std::span<const std::int64_t> log_ids) = 0;
  // Records `results` (sorted by log id) on the fires that have none yet, closes them, queues the failed ones
  // for the failure monitor, gives a FIX_DELAY job waiting for one of them its next fire, and writes the
  // child fires of the succeeded ones owned by `node_id` (store/fire_log.hpp, InsertChildren); a succeeded
  // workflow node's fire ends its node and starts what follows it (store/workflow_table.hpp), its fires
  // among the children.
  virtual CallbacksRecorded RecordCallbacks(std::span<const HandleResult> results, const std::string& node_id,
                                            std::int64_t now_ms) = 0;

  // --- failures (results/failure_monitor.hpp)
  // Decides the retries of the claimed fires.
  using PlanRetries = std::function<std::vector<PlannedRetry>(std::span<const FailedFire> claimed)>;
  struct FailuresClaimed {
    std::vector<FailedFire> claimed;
    std::vector<Fire> retries;  // as planned, in order, owned by the node
    std::vector<Fire> started;  // workflow nodes started after a node's final failure: due now
  };
  // In one transaction: gives up alarms claimed before `stuck_before_ms` and never finished; claims for
  // `node_id` at most `limit` queued failed or skipped fires; writes the retries `plan` returns; gives a
  // FIX_DELAY job waiting for a claimed fire its next fire (a failed trigger or a skipped instant brings no
  // callback); ends the workflow nodes whose fire failed for good and starts what follows them
  // (store/workflow_table.hpp).
  virtual FailuresClaimed ClaimFailures(const std::string& node_id, std::int64_t now_ms, int limit,
                                        std::int64_t stuck_before_ms, const PlanRetries& plan) = 0;
  virtual void SetAlarmStatus(std::span<const AlarmStatus> statuses) = 0;
  // For a final failure of kind `event` (AlertEventOf): under a lock of each of the fire's channels' state
  // for its job, decides by the channel's rule (DecideAlert), keeps the new state and records the decision in
  // alert_log with `alarm` (kSend: outcome SENDING, leased for 10 minutes). A channel that does not alert
  // `event` is left out.
  virtual std::vector<AlertPlan> PlanAlerts(const FailedFire& fire, std::string_view event,
                                            const nlohmann::json& alarm, std::int64_t now_ms) = 0;
  // Records deliveries: SENT, or RETRYING after AlertRetryDelayMs, or FAILED after kMaxAlertAttempts.
  virtual void FinishAlerts(std::span<const AlertDelivery> deliveries, std::int64_t now_ms) = 0;
  // Takes at most `limit` alerts due for another attempt (RETRYING, or SENDING past its lease: an admin died
  // while sending), leasing each for 10 minutes.
  virtual std::vector<PendingAlert> ClaimAlertRetries(std::int64_t now_ms, int limit) = 0;
  // For at most `limit` job-and-channel states whose alert was sent and whose job has a fire that succeeded
  // since its last failure: resets the state (no failures in a row, not alerted) and, for the channels that
  // alert RECOVERED, records a RECOVERED alert (SENDING, leased for 10 minutes) and returns it to send, with
  // that fire in its alarm ("event": "job_recovered", "streak": the failures in a row before it).
  virtual std::vector<PendingAlert> ClaimRecoveries(std::int64_t now_ms, int limit) = 0;

  // --- workflow runs that failed (results/failure_monitor.hpp)
  // Claims at most `limit` FAILED runs whose alarm is due (or was claimed before `now_ms` - 10 min by an
  // admin that did not finish it). The default has none: stores without workflows.
  virtual std::vector<RunAlarm> ClaimRunAlarms(std::int64_t /*now_ms*/, int /*limit*/) { return {}; }
  virtual void FinishRunAlarms(std::span<const RunAlarmDone> /*done*/) {}

  // --- lost results (results/lost_result_monitor.hpp)
  // At most `limit` fires sent at or before `sent_before_ms` that still have no result, by log id.
  virtual std::vector<RunningFire> RunningSince(std::int64_t sent_before_ms, int limit) = 0;
  // Records "the executor is gone" (handle_code 500, `message`) on those still without a result.
  virtual void MarkLost(std::span<const std::int64_t> log_ids, std::int64_t now_ms,
                        const std::string& message) = 0;

  // --- the fire output archive (results/output_puller.hpp). The defaults have none: stores without it.
  // Claims at most `limit` fires whose log is due to be pulled at `now_ms`, moving their due time on by
  // `lease_ms` (another admin takes one whose puller died), attempts counted.
  virtual std::vector<OutputPull> ClaimOutputPulls(std::int64_t /*now_ms*/, std::int64_t /*lease_ms*/,
                                                   int /*limit*/) {
    return {};
  }
  // Archives what was pulled (or the error of a final failure) and leaves the queue; a retry stays queued,
  // due at its retry_at_ms, with its error.
  virtual void FinishOutputPulls(std::span<const PulledOutput> /*pulled*/, std::int64_t /*now_ms*/) {}

  // --- the daily report and retention (results/report_monitor.hpp)
  // The daily partitions of the fires two days ahead of `now_ms`.
  virtual void EnsurePartitions(std::int64_t now_ms) = 0;
  // The counts of the last `days` UTC days up to `now_ms`'s.
  virtual void UpdateReport(std::int64_t now_ms, int days) = 0;
  // Retention: drops the fires and their archived output (by whole days, then a batch of other rows),
  // deletes a batch of ended workflow runs that started before `cutoff_ms`, and deletes the alert_log rows of
  // ended alerts created before it and the run_once requests due before it that were fired or cancelled
  // (`batch` rows a transaction, until none is left).
  virtual RetentionOutcome DropFiresBefore(std::int64_t cutoff_ms, int batch) = 0;

 protected:
  ResultStore() = default;
  ResultStore(const ResultStore&) = default;
  ResultStore& operator=(const ResultStore&) = default;
};

}  // namespace cronwheel::admin
