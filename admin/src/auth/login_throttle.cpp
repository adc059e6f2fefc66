#include "admin/auth/login_throttle.hpp"

#include <algorithm>

namespace cronwheel::admin {

void LoginThrottle::Prune(std::deque<std::int64_t>& times, std::int64_t now_ms) const {
  while (!times.empty() && times.front() <= now_ms - settings_.window.count())
    times.pop_front();
}

std::optional<std::chrono::milliseconds> LoginThrottle::RetryAfter(const std::string& key,
                                                                   std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  if (it == failures_.end()) return std::nullopt;
  Prune(it->second, now_ms);
  if (it->second.empty()) {
    failures_.erase(it);
    return std::nullopt;
  }
  if (static_cast<int>(it->second.size()) < settings_.max_failures) return std::nullopt;
  // Blocked until enough failures leave the window for one more attempt.
  const auto idx = it->second.size() - static_cast<std::size_t>(settings_.max_failures);
  return std::chrono::milliseconds(it->second[idx] + settings_.window.count() - now_ms);
}

void LoginThrottle::RecordFailure(const std::string& key, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (failures_.size() >= settings_.max_keys && !failures_.contains(key)) {
    // Forget keys whose failures have all left the window; if none, the one with the oldest failure.
    for (auto it = failures_.begin(); it != failures_.end();) {
      Prune(it->second, now_ms);
      it = it->second.empty() ? failures_.erase(it) : std::next(it);
    }
    if (failures_.size() >= settings_.max_keys) {
      auto oldest = std::min_element(failures_.begin(), failures_.end(), [](const auto& a, const auto& b) {
        return a.second.back() < b.second.back();
      });
      failures_.erase(oldest);
    }
  }
  auto& times = failures_[key];
  Prune(times, now_ms);
  times.push_back(now_ms);
  // Only the newest max_failures instants decide when the key is free again.
  while (static_cast<int>(times.size()) > settings_.max_failures)
    times.pop_front();
}

void LoginThrottle::Clear(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

}  // namespace cronwheel::admin
