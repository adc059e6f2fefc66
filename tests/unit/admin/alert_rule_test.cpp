// Alert rules (admin/model/alert_rule.hpp): threshold, silence window and the kinds of failure, step by step
// on instants given as numbers (no clock is read).
#include "admin/model/alert_rule.hpp"

#include <gtest/gtest.h>

namespace {

using cronwheel::admin::AlertDecision;
using cronwheel::admin::AlertRule;
using cronwheel::admin::AlertState;
using cronwheel::admin::DecideAlert;

constexpr std::int64_t kT0 = 1767225600000;
const AlertRule kEvery{.events = {"FAILED", "TIMEOUT", "LOST"}, .threshold = 1, .silence_ms = 0};

// Feeds failures at the given instants (seconds after kT0, scheduled = now), a success before those marked;
// returns the decisions.
std::vector<AlertDecision> Feed(const AlertRule& rule, const std::vector<std::pair<int, bool>>& failures,
                                AlertState& state, std::vector<int>* suppressed = nullptr) {
  std::vector<AlertDecision> out;
  for (const auto& [s, success_before] : failures) {
    const auto now = kT0 + std::int64_t{s} * 1000;
    const auto step = DecideAlert(rule, state, "FAILED", now, success_before, now);
    out.push_back(step.decision);
    if (suppressed != nullptr && step.decision == AlertDecision::kSend)
      suppressed->push_back(step.suppressed);
    state = step.next;
  }
  return out;
}

TEST(AlertRule, WithoutThresholdOrSilenceEveryFailureIsAlerted) {
  AlertState state;
  EXPECT_EQ(Feed(kEvery, {{0, false}, {1, false}, {2, false}}, state),
            (std::vector<AlertDecision>{AlertDecision::kSend, AlertDecision::kSend, AlertDecision::kSend}));
}

TEST(AlertRule, AThresholdWaitsForThatManyFailuresInARowAndASuccessStartsTheCountAgain) {
  AlertRule rule = kEvery;
  rule.threshold = 3;
  AlertState state;
  const auto got =
      Feed(rule, {{0, false}, {1, false}, {2, false}, {3, false}, {4, true}, {5, false}, {6, false}}, state);
  EXPECT_EQ(got, (std::vector<AlertDecision>{AlertDecision::kBelowThreshold, AlertDecision::kBelowThreshold,
                                             AlertDecision::kSend, AlertDecision::kSend,
                                             AlertDecision::kBelowThreshold, AlertDecision::kBelowThreshold,
                                             AlertDecision::kSend}));
  EXPECT_EQ(state.streak, 3);
}

TEST(AlertRule, ASilenceWindowSendsOneAlertPerWindowAndTheNextOneCountsTheRest) {
  AlertRule rule = kEvery;
  rule.silence_ms = 60'000;
  AlertState state;
  std::vector<int> suppressed;
  // A job failing every second for two and a half minutes: one alert a minute.
  std::vector<std::pair<int, bool>> failures;
  failures.reserve(150);
  for (int s = 0; s < 150; ++s)
    failures.emplace_back(s, false);
  const auto got = Feed(rule, failures, state, &suppressed);
  EXPECT_EQ(std::count(got.begin(), got.end(), AlertDecision::kSend), 3);
  EXPECT_EQ(got[0], AlertDecision::kSend);
  EXPECT_EQ(got[59], AlertDecision::kSuppress);
  EXPECT_EQ(got[60], AlertDecision::kSend);
  EXPECT_EQ(got[120], AlertDecision::kSend);
  EXPECT_EQ(suppressed, (std::vector<int>{0, 59, 59}));
  EXPECT_EQ(state.suppressed, 29);
  // A flapping job (a success between failures) is silenced too.
  AlertState flapping;
  EXPECT_EQ(Feed(rule, {{0, false}, {10, true}, {20, true}, {70, true}}, flapping),
            (std::vector<AlertDecision>{AlertDecision::kSend, AlertDecision::kSuppress,
                                        AlertDecision::kSuppress, AlertDecision::kSend}));
}

TEST(AlertRule, OnlyASentAlertMarksTheJobAsAlertedForItsRecovery) {
  AlertRule rule = kEvery;
  rule.threshold = 2;
  rule.silence_ms = 60'000;
  AlertState state;
  Feed(rule, {{0, false}}, state);
  EXPECT_FALSE(state.alerted) << "below the threshold: nothing was sent";
  Feed(rule, {{1, false}}, state);
  EXPECT_TRUE(state.alerted);
  // After a recovery (the store resets the state), a failure held back by the window marks nothing.
  state.alerted = false;
  state.streak = 0;
  Feed(rule, {{5, true}, {6, false}}, state);
  EXPECT_FALSE(state.alerted);
}

TEST(AlertRule, AKindTheChannelDoesNotAlertChangesNothing) {
  const AlertRule timeouts{.events = {"TIMEOUT"}, .threshold = 1, .silence_ms = 0};
  const AlertState state{.streak = 2, .last_failure_ms = kT0, .silenced_until_ms = 0, .suppressed = 0};
  const auto step = DecideAlert(timeouts, state, "FAILED", kT0 + 1000, false, kT0 + 1000);
  EXPECT_EQ(step.decision, AlertDecision::kNotSubscribed);
  EXPECT_EQ(step.next.streak, 2);
  EXPECT_EQ(DecideAlert(timeouts, state, "TIMEOUT", kT0 + 1000, false, kT0 + 1000).decision,
            AlertDecision::kSend);
}

TEST(AlertRule, FailuresAreClassifiedByTheirResult) {
  using cronwheel::admin::AlertEventOf;
  EXPECT_EQ(AlertEventOf(false, 502, "job execute timeout"), "TIMEOUT");
  EXPECT_EQ(AlertEventOf(false, 500, std::string(cronwheel::admin::kLostResultMessage) + " (executor x)"),
            "LOST");
  EXPECT_EQ(AlertEventOf(false, 500, "exit 1"), "FAILED");
  EXPECT_EQ(AlertEventOf(false, 0, ""), "FAILED") << "a failed trigger";
  EXPECT_EQ(AlertEventOf(true, 0, ""), "MISFIRE") << "a skipped instant: never triggered, no result";
}

TEST(AlertRule, AMisfireCountsIntoTheStreakAndItsOwnSilenceWindow) {
  const AlertRule rule{.events = {"FAILED", "MISFIRE"}, .threshold = 2, .silence_ms = 60'000};
  auto step = DecideAlert(rule, AlertState{}, "MISFIRE", kT0, false, kT0 + 6000);
  EXPECT_EQ(step.decision, AlertDecision::kBelowThreshold) << "one skipped instant of the two in a row";
  step = DecideAlert(rule, step.next, "FAILED", kT0 + 1000, false, kT0 + 6000);
  EXPECT_EQ(step.decision, AlertDecision::kSend) << "a misfire then a failure: two in a row";
  step = DecideAlert(rule, step.next, "MISFIRE", kT0 + 2000, false, kT0 + 7000);
  EXPECT_EQ(step.decision, AlertDecision::kSuppress) << "inside the window";
  EXPECT_EQ(step.next.suppressed, 1);
  EXPECT_EQ(DecideAlert(AlertRule{.events = {"FAILED"}}, AlertState{}, "MISFIRE", kT0, false, kT0).decision,
            AlertDecision::kNotSubscribed)
      << "a channel that did not ask for misfires";
}

TEST(AlertRule, DeliveryRetriesBackOffUpToTenMinutes) {
  using cronwheel::admin::AlertRetryDelayMs;
  EXPECT_EQ(AlertRetryDelayMs(1), 10'000);
  EXPECT_EQ(AlertRetryDelayMs(2), 20'000);
  EXPECT_EQ(AlertRetryDelayMs(4), 80'000);
  EXPECT_EQ(AlertRetryDelayMs(30), 600'000);
}

}  // namespace
