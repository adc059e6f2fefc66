#include "ringwheel/hashed_wheel_timer.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "cronwheel/mutex.hpp"

namespace ringwheel {
namespace detail {

// One timeout. `state` is the only field shared between threads without the inbox mutex; `task` and
// `wheel` belong to the worker once the timeout has been handed over through the inbox.
struct TimeoutState {
  enum : int { kPending, kCancelled, kExpired, kStopped };
  std::atomic<int> state{kPending};
  SteadyTime deadline;
  std::function<void()> task;
  WheelHandle wheel;
  std::weak_ptr<TimerInbox> inbox;
};

// The MPSC queues between producers (NewTimeout, Cancel) and the worker. Shared with the handles, so a
// handle outliving the timer can still be cancelled harmlessly.
struct TimerInbox {
  cronwheel::Mutex mu;
  std::deque<std::shared_ptr<TimeoutState>> submitted ABSL_GUARDED_BY(mu);
  std::vector<std::shared_ptr<TimeoutState>> cancelled ABSL_GUARDED_BY(mu);
  bool stopped ABSL_GUARDED_BY(mu) = false;
  std::atomic<std::size_t> pending{0};
};

}  // namespace detail

namespace {

using detail::TimeoutState;

// Far enough for any real delay, small enough that SteadyNow() + delay cannot overflow.
constexpr std::chrono::nanoseconds kMaxDelay = std::chrono::hours(24 * 365 * 100);

HashedWheelTimer::Settings Validate(HashedWheelTimer::Settings s) {
  if (s.tick < std::chrono::milliseconds(1)) {
    throw std::invalid_argument("HashedWheelTimer: Settings::tick must be >= 1 ms, got " +
                                std::to_string(s.tick.count()) + " ms");
  }
  if (s.ticks_per_wheel < 1 || s.ticks_per_wheel > (std::size_t{1} << 30)) {
    throw std::invalid_argument("HashedWheelTimer: Settings::ticks_per_wheel must be 1..2^30, got " +
                                std::to_string(s.ticks_per_wheel));
  }
  if (s.max_transfers_per_tick == 0) {
    throw std::invalid_argument("HashedWheelTimer: Settings::max_transfers_per_tick must be >= 1");
  }
  return s;
}

}  // namespace

bool TimerHandle::Cancel() {
  if (!state_) return false;
  int expected = TimeoutState::kPending;
  if (!state_->state.compare_exchange_strong(expected, TimeoutState::kCancelled)) return false;
  if (const std::shared_ptr<detail::TimerInbox> inbox = state_->inbox.lock()) {
    inbox->pending.fetch_sub(1);
    const cronwheel::MutexLock lock(inbox->mu);
    if (!inbox->stopped) inbox->cancelled.push_back(state_);
  }
  return true;
}

bool TimerHandle::cancelled() const {
  return state_ && state_->state.load() == TimeoutState::kCancelled;
}

bool TimerHandle::expired() const {
  return state_ && state_->state.load() == TimeoutState::kExpired;
}

SteadyTime TimerHandle::deadline() const {
  return state_ ? state_->deadline : SteadyTime{};
}

HashedWheelTimer::HashedWheelTimer(Clock& clock) : HashedWheelTimer(clock, Settings{}) {}

HashedWheelTimer::HashedWheelTimer(Clock& clock, Settings settings)
    : clock_(clock),
      settings_(Validate(settings)),
      inbox_(std::make_shared<detail::TimerInbox>()),
      wheel_(clock.SteadyNow(), settings_.tick, settings_.ticks_per_wheel),
      worker_([this](const std::stop_token& stop) { Run(stop); }) {}

HashedWheelTimer::~HashedWheelTimer() {
  Stop();
}

absl::StatusOr<TimerHandle> HashedWheelTimer::NewTimeout(std::function<void()> task,
                                                         std::chrono::nanoseconds delay) {
  if (!task) return absl::InvalidArgumentError("HashedWheelTimer: the task is empty");
  const std::size_t pending = inbox_->pending.fetch_add(1) + 1;
  if (settings_.max_pending != 0 && pending > settings_.max_pending) {
    inbox_->pending.fetch_sub(1);
    return absl::ResourceExhaustedError("HashedWheelTimer: " + std::to_string(pending - 1) +
                                        " timeouts are pending, the maximum (Settings::max_pending = " +
                                        std::to_string(settings_.max_pending) + "); new timeout refused");
  }
  auto state = std::make_shared<TimeoutState>();
  state->deadline = clock_.SteadyNow() + std::clamp(delay, std::chrono::nanoseconds::zero(), kMaxDelay);
  state->task = std::move(task);
  state->inbox = inbox_;
  {
    const cronwheel::MutexLock lock(inbox_->mu);
    if (!inbox_->stopped) {
      inbox_->submitted.push_back(state);
      return TimerHandle(std::move(state));
    }
  }
  inbox_->pending.fetch_sub(1);
  return absl::FailedPreconditionError("HashedWheelTimer: the timer is stopped; new timeout refused");
}

std::vector<HashedWheelTimer::Unrun> HashedWheelTimer::Stop() {
  if (worker_.get_id() == std::this_thread::get_id()) {
    throw std::logic_error("HashedWheelTimer::Stop() called from one of its own tasks");
  }
  std::deque<std::shared_ptr<TimeoutState>> submitted;
  {
    const cronwheel::MutexLock lock(inbox_->mu);
    if (inbox_->stopped) return {};
    inbox_->stopped = true;
    inbox_->cancelled.clear();
  }
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
  {
    // No producer adds anything once `stopped` is set; take what is left.
    const cronwheel::MutexLock lock(inbox_->mu);
    submitted.swap(inbox_->submitted);
  }
  std::vector<Unrun> unrun;
  const auto collect = [&](const std::shared_ptr<TimeoutState>& s) {
    int expected = TimeoutState::kPending;
    if (s->state.compare_exchange_strong(expected, TimeoutState::kStopped)) {
      inbox_->pending.fetch_sub(1);
      unrun.push_back(Unrun{s->deadline, std::move(s->task)});
    }
    s->task = nullptr;
  };
  for (const auto& s : wheel_.TakeAll())
    collect(s);
  for (const auto& s : submitted)
    collect(s);
  std::stable_sort(unrun.begin(), unrun.end(),
                   [](const Unrun& a, const Unrun& b) { return a.deadline < b.deadline; });
  return unrun;
}

std::size_t HashedWheelTimer::pending() const {
  return inbox_->pending.load();
}

std::uint64_t HashedWheelTimer::failed_tasks() const {
  return failed_tasks_.load();
}

void HashedWheelTimer::Run(const std::stop_token& stop) {
  while (clock_.WaitUntil(wheel_.NextTickTime(), stop))
    Tick(clock_.SteadyNow());
}

void HashedWheelTimer::Tick(SteadyTime now) {
  std::vector<std::shared_ptr<TimeoutState>> cancelled;
  std::vector<std::shared_ptr<TimeoutState>> batch;
  {
    const cronwheel::MutexLock lock(inbox_->mu);
    cancelled.swap(inbox_->cancelled);
    const std::size_t n = std::min(inbox_->submitted.size(), settings_.max_transfers_per_tick);
    batch.assign(std::make_move_iterator(inbox_->submitted.begin()),
                 std::make_move_iterator(inbox_->submitted.begin() + static_cast<std::ptrdiff_t>(n)));
    inbox_->submitted.erase(inbox_->submitted.begin(),
                            inbox_->submitted.begin() + static_cast<std::ptrdiff_t>(n));
  }
  for (const auto& s : cancelled) {
    if (s->wheel.valid()) wheel_.Cancel(s->wheel);  // not yet transferred: skipped below instead
    s->task = nullptr;
  }
  for (auto& s : batch) {
    if (s->state.load() != TimeoutState::kPending) {
      s->task = nullptr;  // cancelled before it reached the wheel
      continue;
    }
    const SteadyTime deadline = s->deadline;
    s->wheel = wheel_.Schedule(deadline, s);
  }
  expired_.clear();
  wheel_.Advance(now, expired_);
  for (const auto& s : expired_) {
    int expected = TimeoutState::kPending;
    if (s->state.compare_exchange_strong(expected, TimeoutState::kExpired)) {
      inbox_->pending.fetch_sub(1);
      try {
        s->task();
      } catch (...) {
        failed_tasks_.fetch_add(1);
      }
    }
    s->task = nullptr;
  }
  expired_.clear();
}

}  // namespace ringwheel
