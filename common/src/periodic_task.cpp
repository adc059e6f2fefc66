#include "cronwheel/periodic_task.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "cronwheel/throttled_log.hpp"

namespace cronwheel {

std::chrono::milliseconds PeriodicTask::NextWait(const Settings& settings, int failures_in_a_row,
                                                 double draw) {
  using std::chrono::milliseconds;
  milliseconds base = settings.interval;
  if (failures_in_a_row > 0 && settings.failure_interval > milliseconds::zero()) {
    base = settings.failure_interval;
    const auto cap = std::max(settings.max_failure_interval, settings.failure_interval);
    for (int i = 1; i < failures_in_a_row && base < cap; ++i)
      base = std::min(base * 2, cap);
  }
  const auto jitter = std::clamp(settings.jitter, milliseconds::zero(), base);
  const auto offset =
      static_cast<milliseconds::rep>((2.0 * draw - 1.0) * static_cast<double>(jitter.count()));
  return std::max(base + milliseconds(offset), milliseconds::zero());
}

PeriodicTask::PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn)
    : settings_(std::move(settings)), clock_(clock), fn_(std::move(fn)) {
  thread_ = std::jthread([this](const std::stop_token& stop) {
    if (!clock_.WaitFor(settings_.first_delay, stop)) return;
    std::mt19937_64 rng(settings_.seed != 0 ? settings_.seed : std::random_device{}());
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    ThrottledLog failures;
    int in_a_row = 0;
    do {
      try {
        fn_();
        failures.Success();
        in_a_row = 0;
      } catch (const std::exception& e) {
        ++in_a_row;
        if (const auto n = failures.Failure(clock_.SteadyNow())) {
          spdlog::warn("{} failed ({} time(s) in a row): {}", settings_.name, *n, e.what());
        }
      }
    } while (clock_.WaitFor(NextWait(settings_, in_a_row, uniform(rng)), stop));
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
