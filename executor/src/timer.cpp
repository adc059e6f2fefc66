#include "timer.hpp"

#include <spdlog/spdlog.h>

#include <string>

namespace cronwheel::executor {

WheelTimer::WheelTimer(ringwheel::Clock& clock, std::chrono::milliseconds tick, std::size_t ticks_per_wheel)
    : wheel_(clock, ringwheel::HashedWheelTimer::Settings{tick, ticks_per_wheel, 0, 100'000}) {}

WheelTimer::~WheelTimer() {
  Stop();
}

Timer::Handle WheelTimer::After(std::chrono::nanoseconds delay, std::function<void()> task) {
  auto timeout = wheel_.NewTimeout(
      [task = std::move(task)] {
        try {
          task();
        } catch (const std::exception& e) {
          spdlog::error("timer task failed: {}", e.what());
        }
      },
      delay);
  if (!timeout.ok()) {
    spdlog::debug("timer: {}", std::string(timeout.status().message()));
    return {};
  }
  return Handle([timeout = *timeout]() mutable { timeout.Cancel(); });
}

void WheelTimer::Stop() {
  wheel_.Stop();
}

}  // namespace cronwheel::executor
