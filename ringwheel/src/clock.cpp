#include "ringwheel/clock.hpp"

#include <condition_variable>
#include <mutex>

namespace ringwheel {

bool RealClock::WaitUntil(SteadyTime deadline, std::stop_token stop) {
  // A condition_variable_any wait with a stop_token returns as soon as stop is requested.
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_until(lock, stop, deadline, [] { return false; });
  return !stop.stop_requested();
}

RealClock& RealClock::Instance() {
  static RealClock clock;
  return clock;
}

}  // namespace ringwheel
