#include "cronwheel/periodic_task.hpp"

#include <spdlog/spdlog.h>

#include "cronwheel/throttled_log.hpp"

namespace cronwheel {

PeriodicTask::PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn)
    : settings_(std::move(settings)), clock_(clock), fn_(std::move(fn)) {
  thread_ = std::jthread([this](const std::stop_token& stop) {
    if (!clock_.WaitFor(settings_.first_delay, stop)) return;
    ThrottledLog failures;
    do {
      try {
        fn_();
        failures.Success();
      } catch (const std::exception& e) {
        if (const auto n = failures.Failure(clock_.SteadyNow())) {
          spdlog::warn("{} failed ({} time(s) in a row): {}", settings_.name, *n, e.what());
        }
      }
    } while (clock_.WaitFor(settings_.interval, stop));
  });
}

PeriodicTask::~PeriodicTask() {
  Stop();
}

void PeriodicTask::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

}  // namespace cronwheel
