#include "admin/model/alert_rule.hpp"

#include <algorithm>

namespace cronwheel::admin {

const std::vector<std::string_view>& AlertEvents() {
  static const std::vector<std::string_view> kEvents = {kAlertFailed, kAlertTimeout, kAlertLost,
                                                        kAlertMisfire, kAlertRecovered};
  return kEvents;
}

std::string_view AlertEventOf(bool skipped, int handle_code, std::string_view handle_msg) {
  if (skipped) return kAlertMisfire;
  if (handle_code == 502) return kAlertTimeout;
  if (handle_msg.starts_with(kLostResultMessage)) return kAlertLost;
  return kAlertFailed;
}

std::string_view ToString(AlertDecision d) {
  switch (d) {
    case AlertDecision::kSend:
      return "SEND";
    case AlertDecision::kSuppress:
      return "SUPPRESSED";
    case AlertDecision::kBelowThreshold:
      return "BELOW_THRESHOLD";
    case AlertDecision::kNotSubscribed:
      return "NOT_SUBSCRIBED";
  }
  return "SEND";
}

AlertStep DecideAlert(const AlertRule& rule, const AlertState& state, std::string_view event,
                      std::int64_t scheduled_ms, bool success_since, std::int64_t now_ms) {
  AlertStep step{.decision = AlertDecision::kSend, .next = state};
  if (std::find(rule.events.begin(), rule.events.end(), event) == rule.events.end()) {
    step.decision = AlertDecision::kNotSubscribed;
    return step;
  }
  // A failure older than the last one counted (fires finish out of order) still counts, once.
  step.next.streak = success_since ? 1 : state.streak + 1;
  step.next.last_failure_ms = std::max(state.last_failure_ms, scheduled_ms);
  if (step.next.streak < rule.threshold) {
    step.decision = AlertDecision::kBelowThreshold;
    return step;
  }
  // One alert per window, a flapping job's too.
  if (now_ms < state.silenced_until_ms) {
    step.decision = AlertDecision::kSuppress;
    step.next.suppressed = state.suppressed + 1;
    return step;
  }
  step.suppressed = state.suppressed;
  step.next.suppressed = 0;
  step.next.alerted = true;
  step.next.silenced_until_ms = now_ms + rule.silence_ms;
  return step;
}

std::int64_t AlertRetryDelayMs(int attempt) {
  const int doublings = std::clamp(attempt - 1, 0, 6);
  return std::min<std::int64_t>(std::int64_t{10'000} << doublings, 600'000);
}

}  // namespace cronwheel::admin
