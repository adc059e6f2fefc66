#pragma once
// Alert rules (docs/operations.md, "Alert rules"): which failures a channel is told of, and how often. Each
// alert channel carries its rule:
//   events     the kinds of final failure it alerts: FAILED (the trigger or the handler failed), TIMEOUT (the
//              executor stopped the run at the job's timeout, handle code 502), LOST (the executor went away
//              and sent no result), MISFIRE (an instant was skipped: a fire found more than the misfire
//              threshold late, status SKIPPED; docs/xxl-job-protocol.md §5); and RECOVERED: a job whose
//              failure this channel was sent succeeded again (said once per alert sent: a flapping job's
//              failures held back by a silence window bring none)
//   threshold  alert only once a job has failed this many times in a row (1 = every failure, a misfire
//              counts as one); a success in between starts the count again
//   silence    after an alert, at most one alert per job per window; the failures in the window are counted
//              and the next alert says how many were not sent (a success in between does not clear it)
// The state is kept per job and channel (table alert_state); each decision is recorded (table alert_log).
//
// Pure functions and plain values; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin {

// The kinds of final failure a channel may alert.
inline constexpr std::string_view kAlertFailed = "FAILED";
inline constexpr std::string_view kAlertTimeout = "TIMEOUT";
inline constexpr std::string_view kAlertLost = "LOST";
inline constexpr std::string_view kAlertMisfire = "MISFIRE";
// Not a failure: a job that was alerted succeeded again.
inline constexpr std::string_view kAlertRecovered = "RECOVERED";
const std::vector<std::string_view>& AlertEvents();  // FAILED, TIMEOUT, LOST, MISFIRE, RECOVERED

// The message a fire gets when its executor went away without a result (LostResultMonitor), by which its
// alarm is a LOST one.
inline constexpr std::string_view kLostResultMessage =
    "Job result lost, marked as failure: the executor is gone and sent no result";

// Which kind of failure a finished fire is: MISFIRE for a skipped instant (`skipped`, status SKIPPED),
// TIMEOUT for handle code 502 (XXL-JOB's timeout code), LOST for kLostResultMessage, FAILED otherwise.
std::string_view AlertEventOf(bool skipped, int handle_code, std::string_view handle_msg);

struct AlertRule {
  std::vector<std::string> events;  // empty = none
  int threshold = 1;                // 1 to kMaxAlertThreshold
  std::int64_t silence_ms = 0;      // 0 to kMaxAlertSilenceMs
};
inline constexpr int kMaxAlertThreshold = 1000;
inline constexpr std::int64_t kMaxAlertSilenceMs = std::int64_t{7} * 24 * 3600 * 1000;

// A job's state on one channel.
struct AlertState {
  int streak = 0;                      // failures in a row counted so far
  std::int64_t last_failure_ms = 0;    // the scheduled instant of the last failure counted
  std::int64_t silenced_until_ms = 0;  // no alert before this instant
  int suppressed = 0;                  // failures not alerted since the last alert (silenced)
  bool alerted = false;                // an alert was sent and the job has not succeeded since
};

enum class AlertDecision {
  kSend,            // alert now
  kSuppress,        // within the silence window: counted into the next alert
  kBelowThreshold,  // not yet `threshold` failures in a row
  kNotSubscribed,   // the channel does not alert this kind of failure
};
std::string_view ToString(AlertDecision d);  // "SEND", "SUPPRESSED", "BELOW_THRESHOLD", "NOT_SUBSCRIBED"

struct AlertStep {
  AlertDecision decision = AlertDecision::kSend;
  AlertState next;     // the state to keep
  int suppressed = 0;  // kSend: failures silenced since the previous alert, to mention in this one
};

// The decision for one failure (`event`, of the fire scheduled at `scheduled_ms`) of a job on a channel with
// `rule` in `state`, at `now_ms`. `success_since` says whether the job succeeded after state.last_failure_ms
// (the streak then starts again). O(events).
AlertStep DecideAlert(const AlertRule& rule, const AlertState& state, std::string_view event,
                      std::int64_t scheduled_ms, bool success_since, std::int64_t now_ms);

// The back-off before delivery attempt `attempt` + 1 of an alert whose delivery failed: 10 s, 20 s, 40 s, ...
// at most 10 min; kMaxAlertAttempts attempts in all.
inline constexpr int kMaxAlertAttempts = 5;
std::int64_t AlertRetryDelayMs(int attempt);

}  // namespace cronwheel::admin
