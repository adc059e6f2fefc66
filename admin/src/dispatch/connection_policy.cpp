#include "admin/dispatch/connection_policy.hpp"

#include <algorithm>

namespace cronwheel::admin {

ConnectionPolicy::ConnectionPolicy(const Settings& settings) : settings_(settings) {
  settings_.max_open = std::max<std::size_t>(settings_.max_open, 1);
  settings_.initial_window = std::clamp<std::size_t>(settings_.initial_window, 1, settings_.max_open);
  window_ = settings_.initial_window;
}

bool ConnectionPolicy::MayOpen(Time now, Time oldest_queued) {
  if (open_cap_ && now - last_stall_ > kCeilingMemory) open_cap_.reset();
  if (open_ >= open_cap_.value_or(settings_.max_open) || unproven_ >= window_ || now < hold_until_) {
    return false;
  }
  return open_ == 0 || replacements_ > 0 || now - oldest_queued >= kGrowAfter;
}

std::size_t ConnectionPolicy::OnAttempt(Time /*now*/) {
  if (replacements_ > 0) --replacements_;
  ++open_;
  return ++unproven_;
}

void ConnectionPolicy::OnConnected(Time now, std::chrono::nanoseconds took, std::size_t place) {
  if (took > kSynRetransmit) Evidence(now, place);
}

void ConnectionPolicy::OnConnectFailed(Time now, ConnectFailure why, std::size_t place) {
  --open_;
  --unproven_;
  if (why == ConnectFailure::kTimedOut || (why == ConnectFailure::kRefused && open_ > 0)) {
    Evidence(now, place);
  }
}

void ConnectionPolicy::OnAnswered(Time now, bool first, std::chrono::nanoseconds since_attempt, bool kept) {
  if (kept) {
    last_kept_ = now;
  } else {
    replacements_ = std::min(replacements_ + 1, settings_.max_open);
  }
  if (!first) return;
  const bool limited = unproven_ >= window_;  // the window held openings back: a bigger one may help
  --unproven_;
  Proven(now, since_attempt, limited);
}

void ConnectionPolicy::OnLost(Time now, bool first, std::size_t place) {
  --open_;
  if (!first) return;
  --unproven_;
  Evidence(now, place);
}

void ConnectionPolicy::OnClosed() {
  --open_;
}

void ConnectionPolicy::Evidence(Time now, std::size_t place) {
  ++evidence_;
  last_evidence_ = now;
  if (now < hold_until_) return;  // the same episode: one decrease per hold-off
  const auto limit = std::max<std::size_t>(place, 2) - 1;
  window_ = std::max<std::size_t>(std::min(window_ / 2, limit), 1);
  ceiling_ = std::min(ceiling_.value_or(limit), limit);
  backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
  hold_until_ = now + backoff_;
}

bool ConnectionPolicy::KeepsConnections(Time now) const {
  return last_kept_ && now - *last_kept_ <= kCeilingMemory;
}

void ConnectionPolicy::Stalled(Time now, std::size_t stalled) {
  last_stall_ = now;
  open_cap_ = std::max<std::size_t>(open_ > stalled ? open_ - stalled : 0, 1);
}

void ConnectionPolicy::Proven(Time now, std::chrono::nanoseconds since_attempt, bool limited) {
  if (now >= hold_until_) backoff_ = Millis{0};
  if (ceiling_ && now - last_evidence_ > kCeilingMemory) ceiling_.reset();
  if (now - quickest_since_ > kCeilingMemory / 2) {
    quickest_before_ = quickest_now_;
    quickest_now_ = std::chrono::nanoseconds::max();
    quickest_since_ = now;
  }
  quickest_now_ = std::min(quickest_now_, since_attempt);
  const auto quickest = std::min(quickest_now_, quickest_before_);
  if (!limited) return;
  if (since_attempt > 2 * quickest + kAnswerSlack) return;  // queued at the executor: more would queue too
  window_ = std::min(window_ + 1, ceiling_.value_or(settings_.max_open));
}

ConnectionPolicy::Millis ConnectionPolicy::ReuseLimit(Time now) {
  if (keep_alive_ && now - keep_alive_learned_ > settings_.keep_alive_memory) {
    keep_alive_.reset();  // learn it again: the executor may have been reconfigured
  }
  if (!keep_alive_) return settings_.max_idle;
  return std::min(settings_.max_idle, *keep_alive_ * 3 / 4);
}

void ConnectionPolicy::LearnKeepAlive(Millis keep_alive, Time now) {
  if (!keep_alive_ || keep_alive < *keep_alive_) keep_alive_ = keep_alive;
  keep_alive_learned_ = now;
}

void ConnectionPolicy::FoundClosedAfterIdle(Millis idle, Time now) {
  if (idle >= settings_.min_keep_alive_observation) LearnKeepAlive(idle, now);
}

void ConnectionPolicy::FirstWritten(std::uintptr_t id, Time now) {
  first_requests_[id] = First{now};
}

void ConnectionPolicy::FirstOver(std::uintptr_t id) {
  first_requests_.erase(id);
}

}  // namespace cronwheel::admin
