#pragma once
// The login throttle: `max_failures` failed logins within `window` for one key (a username in any case, a
// client address, a user changing their password) block further attempts for that key until the oldest
// failure leaves the window (the API answers 429 with Retry-After). Blocked attempts do not verify the
// password. Counters live in this admin process (each admin of a cluster counts its own).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace cronwheel::admin {

// Failed-login counters with a sliding window. Pure data structure: the caller passes "now".
class LoginThrottle final {
 public:
  struct Settings {
    int max_failures = 5;
    std::chrono::milliseconds window{std::chrono::minutes(5)};
    std::size_t max_keys = 100'000;  // beyond this the oldest keys are forgotten first
  };
  explicit LoginThrottle(Settings settings) : settings_(settings) {}

  // nullopt when `key` may try now; otherwise how long until it may.
  std::optional<std::chrono::milliseconds> RetryAfter(const std::string& key, std::int64_t now_ms);
  void RecordFailure(const std::string& key, std::int64_t now_ms);
  void Clear(const std::string& key);

 private:
  void Prune(std::deque<std::int64_t>& times, std::int64_t now_ms) const;

  Settings settings_;
  std::mutex mu_;
  std::unordered_map<std::string, std::deque<std::int64_t>> failures_;  // ascending instants
};

}  // namespace cronwheel::admin
