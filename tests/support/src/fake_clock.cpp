#include "cwtest/fake_clock.hpp"

#include <iterator>

namespace cwtest {

FakeClock::FakeClock(std::int64_t start_ms)
    : wall_(std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::milliseconds{start_ms})),
      steady_(std::chrono::hours{1000}) {}

ringwheel::SystemTime FakeClock::WallNow() const {
  std::lock_guard lock(mu_);
  return ringwheel::SystemTime{wall_};
}

ringwheel::SteadyTime FakeClock::SteadyNow() const {
  std::lock_guard lock(mu_);
  return ringwheel::SteadyTime{steady_};
}

bool FakeClock::WaitUntil(ringwheel::SteadyTime deadline, std::stop_token stop) {
  std::unique_lock lock(mu_);
  const auto it = deadlines_.insert(deadline);
  cv_.notify_all();  // AwaitWaiters() watches the count
  const bool reached = cv_.wait(lock, stop, [&] { return ringwheel::SteadyTime{steady_} >= deadline; });
  deadlines_.erase(it);
  return reached;
}

void FakeClock::Advance(std::chrono::nanoseconds d) {
  {
    std::lock_guard lock(mu_);
    const auto sd = std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
    steady_ += sd;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }
  cv_.notify_all();
}

void FakeClock::SetWallMs(std::int64_t wall_ms) {
  {
    std::lock_guard lock(mu_);
    wall_ =
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::milliseconds{wall_ms});
  }
  cv_.notify_all();
}

void FakeClock::AdvanceToWallMs(std::int64_t wall_ms) {
  const auto target = std::chrono::milliseconds{wall_ms};
  std::chrono::nanoseconds d{};
  {
    std::lock_guard lock(mu_);
    d = target - std::chrono::duration_cast<std::chrono::nanoseconds>(wall_);
  }
  if (d.count() > 0) Advance(d);
}

int FakeClock::BlockedLocked() const {
  const auto first_ahead = deadlines_.upper_bound(ringwheel::SteadyTime{steady_});
  return static_cast<int>(std::distance(first_ahead, deadlines_.end()));
}

int FakeClock::Waiters() const {
  std::lock_guard lock(mu_);
  return BlockedLocked();
}

bool FakeClock::AwaitWaiters(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return BlockedLocked() >= n; });
}

}  // namespace cwtest
