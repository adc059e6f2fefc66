#include "admin/periodic_task.hpp"

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

PeriodicTask::PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn)
    : settings_(std::move(settings)), clock_(clock), fn_(std::move(fn)) {
  thread_ = std::jthread([this](const std::stop_token& stop) {
    if (!clock_.WaitFor(settings_.first_delay, stop)) return;
    int failures = 0;
    do {
      try {
        fn_();
        failures = 0;
      } catch (const std::exception& e) {
        if (failures++ % 60 == 0) spdlog::warn("{} failed: {}", settings_.name, e.what());
      }
    } while (clock_.WaitFor(settings_.interval, stop));
  });
}

PeriodicTask::~PeriodicTask() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace cronwheel::admin
