#include "ringwheel/clock.hpp"

#include <condition_variable>

#include "cronwheel/mutex.hpp"

namespace ringwheel {

bool RealClock::WaitUntil(SteadyTime deadline, std::stop_token stop) {
  // A condition_variable_any wait with a stop_token returns as soon as stop is requested.
  cronwheel::Mutex mu;
  std::condition_variable_any cv;
  cronwheel::MutexLock lock(mu);
  cv.wait_until(lock.native(), stop, deadline, [] { return false; });
  return !stop.stop_requested();
}

RealClock& RealClock::Instance() {
  static RealClock clock;
  return clock;
}

}  // namespace ringwheel
