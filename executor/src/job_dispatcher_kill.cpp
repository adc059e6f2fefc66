// JobDispatcher (job_dispatcher.hpp), what ends fires: what the admin asks, /kill (a job's whole thread, as
// XXL-JOB), /killFires (cronwheel's extension: named fires only, security review 2, N4) and /cancel (held
// fires, for ahead-of-time dispatch); and the executor's own end, a drain (SIGTERM) and Stop.
#include <algorithm>
#include <set>

#include "cronwheel/mutex.hpp"
#include "job_dispatcher.hpp"
#include "job_dispatcher_state.hpp"
#include "kill_messages.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {

xxljob::Envelope JobDispatcher::Kill(int job_id) {
  std::vector<Report> reports;
  {
    cronwheel::MutexLock lock(mu_);
    DropHeldLocked(job_id, std::string(kKillMsg), reports);
    const auto it = threads_.find(job_id);
    if (it == threads_.end() && reports.empty()) {
      return {xxljob::kCodeSuccess, "job thread already killed.", nullptr};
    }
    if (it != threads_.end()) {
      const auto t = it->second;  // the map's pointer goes when it is retired
      RetireLocked(*t, std::string(kKillMsg), reports);
    }
  }
  Deliver(std::move(reports));
  return xxljob::Envelope::Success();
}

std::vector<std::int64_t> JobDispatcher::KillFires(const std::vector<std::int64_t>& log_ids) {
  const std::set<std::int64_t> wanted(log_ids.begin(), log_ids.end());
  std::vector<Report> reports;
  std::vector<std::int64_t> killed;
  {
    cronwheel::MutexLock lock(mu_);
    for (const auto id : wanted) {
      const auto h = held_.find(id);
      if (h == held_.end()) continue;
      if (ClaimLocked(h->second.fire)) {
        reports.push_back(Report{h->second.fire, xxljob::kCodeFail,
                                 std::string(kKillMsg) + std::string(kHeldKilled), false});
        killed.push_back(id);
      }
      held_.erase(h);  // its instant's start task finds it gone and skips it
    }
    // A running fire is reported and its stop token requested, as at its timeout: its job thread goes on
    // with the fires queued behind it, which are not the killer's.
    for (const auto& [job_id, t] : threads_) {
      if (t->running && wanted.contains(t->running->param.log_id) && ClaimLocked(t->running)) {
        reports.push_back(
            Report{t->running, xxljob::kCodeFail, std::string(kKillMsg) + std::string(kRunningKilled), true});
        killed.push_back(t->running->param.log_id);
      }
      for (auto it = t->queue.begin(); it != t->queue.end();) {
        if (!wanted.contains((*it)->param.log_id)) {
          ++it;
          continue;
        }
        if (ClaimLocked(*it)) {
          reports.push_back(
              Report{*it, xxljob::kCodeFail, std::string(kKillMsg) + std::string(kQueuedKilled), false});
          killed.push_back((*it)->param.log_id);
        }
        it = t->queue.erase(it);
      }
      if (!t->stop && !t->running && t->queue.empty()) ArmIdleLocked(*t);
    }
    if (draining_) drained_.notify_all();
  }
  Deliver(std::move(reports));
  return killed;
}

std::vector<std::int64_t> JobDispatcher::Cancel(const std::vector<std::int64_t>& log_ids) {
  std::vector<std::int64_t> dropped;
  std::vector<std::shared_ptr<Fire>> fires;
  {
    cronwheel::MutexLock lock(mu_);
    for (const auto id : log_ids) {
      const auto it = held_.find(id);
      if (it == held_.end()) continue;
      if (ClaimLocked(it->second.fire)) {
        dropped.push_back(id);
        fires.push_back(it->second.fire);
      }
      held_.erase(it);  // its instant's start task finds it gone and skips it
    }
    if (draining_) drained_.notify_all();
  }
  if (trace_ != nullptr) {
    for (const auto& f : fires)
      trace_->Record(f->param.log_id, f->param.job_id, f->received_ms, 0);
  }
  for (const auto& f : fires) {
    logs_.Append(f->param.log_date_time, f->param.log_id,
                 "----------- cancelled before its instant by the scheduling center: not run");
  }
  return dropped;
}

void JobDispatcher::Stop(std::string_view reason) {
  std::vector<Report> reports;
  std::vector<std::unique_ptr<Worker>> workers;
  {
    cronwheel::MutexLock lock(mu_);
    stopped_ = true;
    DropHeldLocked(std::nullopt, std::string(reason), reports);
    for (auto& [at, instant] : held_instants_)
      instant.start.Cancel();
    held_instants_.clear();
    std::vector<std::shared_ptr<JobThread>> live;
    live.reserve(threads_.size());
    for (const auto& [id, t] : threads_)
      live.push_back(t);
    for (const auto& t : live)
      RetireLocked(*t, std::string(reason), reports);
    pool_stopping_ = true;
    workers.swap(workers_);
    starvation_check_.Cancel();
    drain_deadline_.Cancel();
  }
  work_cv_.notify_all();
  drained_.notify_all();
  Deliver(std::move(reports));
  // Each worker ends after the fire it runs (a handler that ignores its stop token delays this).
  for (const auto& w : workers) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void JobDispatcher::BeginDrain(std::chrono::milliseconds timeout) {
  cronwheel::MutexLock lock(mu_);
  if (draining_) return;
  draining_ = true;
  drain_deadline_ = timer_.After(timeout, [this] { AbandonDrain(); });
}

bool JobDispatcher::Draining() const {
  return draining_.load();
}

bool JobDispatcher::IdleLocked() const {
  return held_.empty() && std::all_of(threads_.begin(), threads_.end(), [](const auto& entry) {
           return !entry.second->running && entry.second->queue.empty();
         });
}

bool JobDispatcher::AwaitDrained() {
  // The deadline is a task on the timer (BeginDrain), so the wait follows the injected clock.
  cronwheel::MutexLock lock(mu_);
  drained_.wait(lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return drain_abandoned_ || stopped_ || IdleLocked();
  });
  const bool idle = IdleLocked();
  auto deadline = std::move(drain_deadline_);
  lock.Unlock();
  deadline.Cancel();
  return idle;
}

void JobDispatcher::AbandonDrain() {
  {
    cronwheel::MutexLock lock(mu_);
    drain_abandoned_ = true;
  }
  drained_.notify_all();
}

}  // namespace cronwheel::executor
