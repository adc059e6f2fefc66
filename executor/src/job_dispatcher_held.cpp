// JobDispatcher (job_dispatcher.hpp), fires sent ahead of their instant (ahead-of-time dispatch,
// docs/architecture.md): a fire held until its instant (runAtMs), replaced by a later /run of the same log id
// with replaceHeld, started at its instant, dropped, and what /accepted answers. Queueing, the block
// strategies and the worker pool are job_dispatcher.cpp's; what the admin asks to end,
// job_dispatcher_kill.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cronwheel/mutex.hpp"
#include "job_dispatcher.hpp"
#include "job_dispatcher_state.hpp"
#include "kill_messages.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {

xxljob::Envelope JobDispatcher::Hold(const xxljob::TriggerParam& p, std::int64_t received_ms) {
  // Checked now as at its instant: a handler that cannot be resolved is refused while the admin can still
  // record it as a failed trigger.
  if (const Resolution res = resolver_(p); !res.error.empty()) return xxljob::Envelope::Fail(res.error);
  std::uint64_t arm = 0;  // the serial of the instant this fire is the first of, which it arms
  {
    cronwheel::MutexLock lock(mu_);
    if (p.replace_held) {
      if (auto replaced = ReplaceHeldLocked(p, received_ms)) return *std::move(replaced);
    }
    if (auto refusal = RefusalLocked(p)) return *std::move(refusal);
    auto fire = std::make_shared<Fire>();
    fire->param = p;
    fire->received_ms = received_ms;
    log_ids_.Activate(p.log_id);
    held_[p.log_id].fire = std::move(fire);
    // One start per instant: the first fire held for it arms it; the others join its list.
    auto [instant, fresh] = held_instants_.try_emplace(p.run_at_ms);
    instant->second.log_ids.push_back(p.log_id);
    if (fresh) arm = instant->second.serial = ++instants_armed_;
  }
  if (arm != 0) {
    // Armed outside mu_ (the timer may run the task at once, and the task takes mu_).
    auto start =
        start_timer_.After(std::chrono::milliseconds(std::max<std::int64_t>(p.run_at_ms - clock_.NowMs(), 0)),
                           [this, at = p.run_at_ms] { StartInstant(at); });
    cronwheel::MutexLock lock(mu_);
    if (const auto it = held_instants_.find(p.run_at_ms);
        it != held_instants_.end() && it->second.serial == arm)
      it->second.start = std::move(start);
  }
  return {xxljob::kCodeSuccess, fmt::format("held; starts at runAtMs {}", p.run_at_ms), nullptr};
}

std::optional<xxljob::Envelope> JobDispatcher::ReplaceHeldLocked(const xxljob::TriggerParam& p,
                                                                 std::int64_t received_ms) {
  if (const auto h = held_.find(p.log_id); h != held_.end()) {
    if (h->second.fire->param.job_id != p.job_id)
      return xxljob::Envelope::Fail(xxljob::RepeatTriggerMsg(p.log_id));
    auto fire = std::make_shared<Fire>();
    fire->param = p;
    fire->param.run_at_ms = h->second.fire->param.run_at_ms;  // its start stays armed
    fire->received_ms = received_ms;
    h->second.fire = std::move(fire);
    return xxljob::Envelope{
        xxljob::kCodeSuccess,
        fmt::format("held fire replaced; starts at runAtMs {}", h->second.fire->param.run_at_ms), nullptr};
  }
  // Started, run or withdrawn here already: it stays as it was (200: the fire is accepted, as it ran or
  // runs). Never seen here (an executor restarted since): held as a new /run is.
  if (log_ids_.Knows(p.log_id)) {
    return xxljob::Envelope{
        xxljob::kCodeSuccess,
        fmt::format("logId:{} was no longer held here (started, run or withdrawn): not replaced", p.log_id),
        nullptr};
  }
  return std::nullopt;
}

void JobDispatcher::StartInstant(std::int64_t run_at_ms) {
  std::vector<std::shared_ptr<Fire>> fires;
  {
    cronwheel::MutexLock lock(mu_);
    const auto it = held_instants_.find(run_at_ms);
    if (it == held_instants_.end()) return;
    fires.reserve(it->second.log_ids.size());
    for (const auto id : it->second.log_ids) {
      if (const auto h = held_.find(id); h != held_.end()) fires.push_back(h->second.fire);
    }
    held_instants_.erase(it);
  }
  for (const auto id : StartFires(fires))
    StartHeld(id);
}

void JobDispatcher::StartHeld(std::int64_t log_id) {
  while (true) {  // again when a replacement came between the lookup and the start
    std::shared_ptr<Fire> fire;
    {
      cronwheel::MutexLock lock(mu_);
      const auto it = held_.find(log_id);
      if (it == held_.end()) return;  // dropped (killed, cancelled, stopped) meanwhile
      fire = it->second.fire;
    }
    if (StartFires({fire}).empty()) return;
  }
}

std::vector<std::int64_t> JobDispatcher::StartFires(const std::vector<std::shared_ptr<Fire>>& fires) {
  // In chunks: the first fires reach the workers while the later ones are being resolved.
  constexpr std::size_t kChunk = 128;
  std::vector<Resolution> res;
  std::vector<Report> reports;
  std::vector<std::int64_t> replaced;
  for (std::size_t from = 0; from < fires.size(); from += kChunk) {
    const auto to = std::min(fires.size(), from + kChunk);
    res.clear();
    for (auto i = from; i < to; ++i)
      res.push_back(resolver_(fires[i]->param));
    bool wake = false;
    bool join = false;
    {
      cronwheel::MutexLock lock(mu_);
      for (auto i = from; i < to; ++i) {
        const auto& fire = fires[i];
        const auto h = held_.find(fire->param.log_id);
        if (h == held_.end()) continue;  // dropped meanwhile (killed, cancelled, stopped): reported there
        if (h->second.fire != fire) {    // replaced since it was read: the caller starts the replacement
          replaced.push_back(fire->param.log_id);
          continue;
        }
        // It leaves held_ under the lock that queues it: a drain never sees the executor idle in between.
        held_.erase(h);
        auto& r = res[i - from];
        std::optional<xxljob::Envelope> refused;
        if (stopped_) {
          refused = xxljob::Envelope::Fail(std::string(xxljob::kStoppingMsg));
        } else if (!r.error.empty()) {
          refused = xxljob::Envelope::Fail(r.error);
        } else {
          refused = QueueLocked(fire, r, reports, wake);
        }
        // Refused at its instant: its /run was answered long ago, so the refusal is its result.
        if (refused && ClaimLocked(fire)) {
          reports.push_back(
              Report{fire, xxljob::kCodeFail, refused->msg.value_or("refused at its instant"), false});
        }
      }
      if (draining_) drained_.notify_all();
      join = exited_workers_ > 0;
    }
    if (wake) work_cv_.notify_one();
    Deliver(std::move(reports));
    reports.clear();
    if (join) JoinExitedWorkers();
  }
  return replaced;
}

void JobDispatcher::DropHeldLocked(std::optional<int> job_id, const std::string& reason,
                                   std::vector<Report>& reports) {
  for (auto it = held_.begin(); it != held_.end();) {
    if (job_id && it->second.fire->param.job_id != *job_id) {
      ++it;
      continue;
    }
    if (ClaimLocked(it->second.fire)) {
      reports.push_back(Report{it->second.fire, xxljob::kCodeFail, reason + std::string(kHeldKilled), false});
    }
    it = held_.erase(it);
  }
  if (draining_) drained_.notify_all();
}

std::vector<std::int64_t> JobDispatcher::Accepted(const std::vector<std::int64_t>& log_ids) {
  std::vector<std::int64_t> known;
  cronwheel::MutexLock lock(mu_);
  for (const auto id : log_ids) {
    if (log_ids_.Knows(id)) known.push_back(id);
  }
  return known;
}

std::size_t JobDispatcher::HeldFires() const {
  cronwheel::MutexLock lock(mu_);
  return held_.size();
}

std::uint64_t JobDispatcher::InstantsArmed() const {
  cronwheel::MutexLock lock(mu_);
  return instants_armed_;
}

}  // namespace cronwheel::executor
