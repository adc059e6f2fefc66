#include "admin/dispatch/trigger_pools.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cronwheel/mutex.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::admin {

void SlowJobTracker::Roll(std::int64_t now_ms) {
  const auto minute = now_ms / 60'000;
  if (minute != minute_) {
    minute_ = minute;
    counts_.clear();
  }
}

void SlowJobTracker::Record(int job_id, std::chrono::nanoseconds took, std::int64_t now_ms) {
  if (took <= threshold_) return;
  cronwheel::MutexLock lock(mu_);
  Roll(now_ms);
  ++counts_[job_id];
}

bool SlowJobTracker::IsSlow(int job_id, std::int64_t now_ms) {
  cronwheel::MutexLock lock(mu_);
  Roll(now_ms);
  auto it = counts_.find(job_id);
  return it != counts_.end() && it->second > limit_;
}

TriggerPools::TriggerPools(Settings settings, ringwheel::Clock& clock, FireTrigger& trigger,
                           TriggerRecorder& recorder)
    : settings_(settings),
      clock_(clock),
      trigger_(trigger),
      recorder_(recorder),
      tracker_(settings.slow_threshold, settings.slow_limit) {
  fast_.name = "fast";
  fast_.capacity = settings_.fast_queue;
  slow_.name = "slow";
  slow_.capacity = settings_.slow_queue;
  for (int i = 0; i < settings_.fast_threads; ++i) {
    fast_.workers.emplace_back([this](const std::stop_token& st) { Work(fast_, st); });
  }
  for (int i = 0; i < settings_.slow_threads; ++i) {
    slow_.workers.emplace_back([this](const std::stop_token& st) { Work(slow_, st); });
  }
}

TriggerPools::~TriggerPools() {
  Drain();
  for (auto* pool : {&fast_, &slow_}) {
    for (auto& w : pool->workers)
      w.request_stop();
    pool->ready.notify_all();
    pool->workers.clear();  // joins
  }
}

void TriggerPools::Dispatch(std::vector<Fire> fires) {
  if (fires.empty()) return;
  trigger_.Prefetch(fires);
  const auto now = clock_.NowMs();
  std::vector<Fire> rejected;
  std::size_t wake_fast = 0;
  std::size_t wake_slow = 0;
  {
    cronwheel::MutexLock lock(mu_);
    const auto fast_before = fast_.queue.size();
    const auto slow_before = slow_.queue.size();
    for (auto& f : fires) {
      Pool& pool = tracker_.IsSlow(f.job_id, now) ? slow_ : fast_;
      if (pool.queue.size() >= pool.capacity) {
        rejected.push_back(std::move(f));
        ++rejected_;
        ++pool.rejected;
        continue;
      }
      pool.queue.push_back(std::move(f));
    }
    wake_fast = std::min(fast_.queue.size() - fast_before, fast_.idle);
    wake_slow = std::min(slow_.queue.size() - slow_before, slow_.idle);
  }
  // One idle worker per queued fire, not every worker: a burst of fires wakes no more threads than it needs.
  for (std::size_t i = 0; i < wake_fast; ++i)
    fast_.ready.notify_one();
  for (std::size_t i = 0; i < wake_slow; ++i)
    slow_.ready.notify_one();
  for (auto& f : rejected) {
    TriggerResult r;
    r.log_id = f.log_id;
    r.scheduled_ms = f.scheduled_ms;
    r.type = f.type;
    r.trigger_ms = now;
    r.trigger_code = xxljob::kCodeFail;
    r.trigger_msg =
        fmt::format("Trigger failed: the {} trigger pool is full ({} fires queued); the fire was not sent",
                    tracker_.IsSlow(f.job_id, now) ? "slow" : "fast",
                    tracker_.IsSlow(f.job_id, now) ? slow_.capacity : fast_.capacity);
    recorder_.Record(std::move(r));
  }
  if (!rejected.empty()) spdlog::error("trigger pools full: {} fire(s) recorded as failed", rejected.size());
}

void TriggerPools::Work(Pool& pool, const std::stop_token& stop) {
  cronwheel::MutexLock lock(mu_);
  for (;;) {
    ++pool.idle;
    const bool woken = pool.ready.wait(
        lock.native(), stop, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !pool.queue.empty(); });
    --pool.idle;
    if (!woken) return;
    Fire fire = std::move(pool.queue.front());
    pool.queue.pop_front();
    ++pool.in_flight;
    lock.Unlock();
    const auto start = clock_.SteadyNow();
    const int job_id = fire.job_id;
    // Returns once the /run is handed to the executor client; the outcome comes later, on its thread.
    trigger_.Trigger(fire, [this, &pool, job_id, start] {
      tracker_.Record(job_id, clock_.SteadyNow() - start, clock_.NowMs());
      cronwheel::MutexLock done_lock(mu_);
      --pool.in_flight;
      ++pool.sent;
      if (Idle()) idle_.notify_all();
    });
    lock.Lock();
  }
}

bool TriggerPools::Idle() const {
  return fast_.queue.empty() && slow_.queue.empty() && fast_.in_flight == 0 && slow_.in_flight == 0;
}

void TriggerPools::Drain() {
  cronwheel::MutexLock lock(mu_);
  idle_.wait(lock.native(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return Idle(); });
}

TriggerPools::Stats TriggerPools::stats() const {
  cronwheel::MutexLock lock(mu_);
  return {.sent_fast = fast_.sent,
          .sent_slow = slow_.sent,
          .rejected = rejected_,
          .queued_fast = fast_.queue.size(),
          .queued_slow = slow_.queue.size(),
          .rejected_fast = fast_.rejected,
          .rejected_slow = slow_.rejected};
}

}  // namespace cronwheel::admin
