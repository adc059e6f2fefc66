// JobDispatcher (job_dispatcher.hpp), what the admin asks to end: /kill (a job's whole thread, as XXL-JOB),
// /killFires (cronwheel's extension: named fires only, security review 2, N4) and /cancel (held fires, for
// ahead-of-time dispatch).
#include <set>

#include "job_dispatcher.hpp"
#include "job_dispatcher_state.hpp"
#include "kill_messages.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {

xxljob::Envelope JobDispatcher::Kill(int job_id) {
  std::vector<Report> reports;
  {
    std::lock_guard lock(mu_);
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
    std::lock_guard lock(mu_);
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
    std::lock_guard lock(mu_);
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

}  // namespace cronwheel::executor
