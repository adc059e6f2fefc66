#include "pool_policy.hpp"

#include <algorithm>

namespace cronwheel::executor {

PoolPolicy::Action PoolPolicy::OnReady() {
  if (idle_ > 0) {
    if (waking_ > 0) return Action::kNone;  // the woken worker passes the wake on
    ++waking_;
    return Action::kWakeIdle;
  }
  if (live_ < limits_.workers) {
    ++live_;
    return Action::kStartWorker;
  }
  if (check_armed_) return Action::kNone;
  check_armed_ = true;
  return Action::kArmCheck;
}

PoolPolicy::Action PoolPolicy::OnTaken(std::size_t ready_left) {
  return ready_left > 0 ? OnReady() : Action::kNone;
}

void PoolPolicy::OnWake() {
  --idle_;
  if (waking_ > 0) --waking_;
}

bool PoolPolicy::MayEnd(std::size_t blocked) const {
  return live_ > limits_.workers && live_ - 1 - std::min(blocked, live_ - 1) >= limits_.workers;
}

PoolPolicy::Check PoolPolicy::OnCheck(std::size_t ready, std::size_t blocked, bool stopping) {
  check_armed_ = false;
  Check out;
  if (stopping || ready == 0) return out;
  out.wake_idle = idle_ > 0;
  const auto unblocked = live_ - std::min(blocked, live_);
  auto add = unblocked < limits_.workers ? limits_.workers - unblocked : 0;
  add = std::min({add, ready, limits_.max_workers - std::min(limits_.max_workers, live_)});
  live_ += add;
  out.start = add;
  check_armed_ = true;
  out.rearm = true;
  return out;
}

}  // namespace cronwheel::executor
