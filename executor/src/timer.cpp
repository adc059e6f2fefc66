#include "timer.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace cronwheel::executor {

ClockTimer::ClockTimer(ringwheel::Clock& clock)
    : clock_(clock),
      state_(std::make_shared<State>()),
      thread_([this](const std::stop_token& st) { Loop(st); }) {}

ClockTimer::~ClockTimer() {
  Stop();
}

Timer::Handle ClockTimer::After(std::chrono::nanoseconds delay, std::function<void()> task) {
  const auto deadline = clock_.SteadyNow() + std::chrono::duration_cast<ringwheel::SteadyTime::duration>(
                                                 std::max(delay, std::chrono::nanoseconds{0}));
  Key key;
  {
    std::lock_guard lock(state_->mu);
    key = Key{deadline, state_->next_seq++};
    state_->entries.emplace(key, std::move(task));
    if (deadline < state_->waiting_until) state_->wake.request_stop();
  }
  return Handle([weak = std::weak_ptr<State>(state_), key] {
    if (const auto s = weak.lock()) {
      std::lock_guard lock(s->mu);
      s->entries.erase(key);
    }
  });
}

void ClockTimer::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  std::lock_guard lock(state_->mu);
  state_->entries.clear();
}

void ClockTimer::Loop(const std::stop_token& stop) {
  State& s = *state_;
  const std::stop_callback on_stop(stop, [&s] {
    std::lock_guard lock(s.mu);
    s.wake.request_stop();
  });
  while (!stop.stop_requested()) {
    std::function<void()> task;
    std::stop_token wake;
    ringwheel::SteadyTime deadline;
    {
      std::lock_guard lock(s.mu);
      s.waiting_until = ringwheel::SteadyTime{};
      const auto now = clock_.SteadyNow();
      if (!s.entries.empty() && s.entries.begin()->first.first <= now) {
        task = std::move(s.entries.begin()->second);
        s.entries.erase(s.entries.begin());
      } else {
        // Nothing due: wait for the earliest deadline (or a day, then look again).
        deadline = s.entries.empty() ? now + std::chrono::hours(24) : s.entries.begin()->first.first;
        if (stop.stop_requested()) break;
        s.wake = std::stop_source{};
        wake = s.wake.get_token();
        s.waiting_until = deadline;
      }
    }
    if (task) {
      try {
        task();
      } catch (const std::exception& ex) {
        spdlog::error("timer task failed: {}", ex.what());
      }
      continue;
    }
    clock_.WaitUntil(deadline, wake);
  }
}

std::unique_ptr<Timer> MakeTimer(ringwheel::Clock& clock) {
  return std::make_unique<ClockTimer>(clock);
}

}  // namespace cronwheel::executor
