#pragma once
// A failure that repeats (a database outage seen by a loop that retries every second, an admin that does
// not answer heartbeats) is logged without flooding the log: the first failure of a streak, then at most
// once per `interval` while the streak lasts, each time with the number of failures so far. A success ends
// the streak, so the next failure is logged at once again.
//
// Time comes from the caller (steady time from its injected ringwheel::Clock), so the rule is testable
// without sleeping.
//
// Thread-safety: all members may be called from any thread (one mutex; failures are rare by definition).

#include <chrono>
#include <cstdint>
#include <optional>

#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel {

class ThrottledLog final {
 public:
  explicit ThrottledLog(std::chrono::milliseconds interval = std::chrono::minutes(1)) : interval_(interval) {}

  // Counts one failure at `now`. Returns the streak's failure count (1 for the first) when this failure
  // should be logged, nullopt when it should not.
  std::optional<std::uint64_t> Failure(ringwheel::SteadyTime now) {
    cronwheel::MutexLock lock(mu_);
    ++count_;
    if (count_ == 1 || now - last_logged_ >= interval_) {
      last_logged_ = now;
      return count_;
    }
    return std::nullopt;
  }

  // Ends the streak. Returns how many failures it had (0 when there was none).
  std::uint64_t Success() {
    cronwheel::MutexLock lock(mu_);
    const auto n = count_;
    count_ = 0;
    return n;
  }

 private:
  std::chrono::milliseconds interval_;
  cronwheel::Mutex mu_;
  std::uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  ringwheel::SteadyTime last_logged_ ABSL_GUARDED_BY(mu_){};
};

}  // namespace cronwheel
