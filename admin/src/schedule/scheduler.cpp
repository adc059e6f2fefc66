#include "admin/schedule/scheduler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_map>

#include "admin/schedule/late_fires.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {
namespace {

std::int64_t NextSecondMs(std::int64_t now_ms) {
  return (now_ms / 1000 + 1) * 1000;
}

// The next instant after now_ms that is `offset` past a second.
std::int64_t NextScanMs(std::int64_t now_ms, std::chrono::milliseconds offset) {
  const auto at = now_ms / 1000 * 1000 + offset.count();
  return at > now_ms ? at : at + 1000;
}

}  // namespace

Scheduler::Scheduler(Settings settings, ringwheel::Clock& clock, SchedulerStore& store, FireSink& sink)
    : settings_(std::move(settings)),
      clock_(clock),
      store_(store),
      sink_(sink),
      planner_(settings_.scan),
      ring_(settings_.ring_lookback_s) {}

Scheduler::~Scheduler() {
  Stop();
}

void Scheduler::Start() {
  schedule_thread_ = std::jthread([this](const std::stop_token& st) { ScheduleLoop(st); });
  ring_thread_ = std::jthread([this](const std::stop_token& st) { RingLoop(st); });
}

void Scheduler::StopScanning() {
  if (schedule_thread_.joinable()) {
    schedule_thread_.request_stop();
    schedule_thread_.join();
  }
}

void Scheduler::Stop() {
  StopScanning();
  if (ring_thread_.joinable()) {
    ring_thread_.request_stop();
    ring_thread_.join();
  }
}

std::vector<Fire> Scheduler::TakeRing() {
  std::vector<Fire> out;
  for (auto& e : ring_.TakeAll())
    out.push_back(std::move(e.item));
  cronwheel::MutexLock lock(mu_);
  std::move(unclaimed_.begin(), unclaimed_.end(), std::back_inserter(out));
  unclaimed_.clear();
  std::move(deferred_.begin(), deferred_.end(), std::back_inserter(out));
  deferred_.clear();
  return out;
}

void Scheduler::Defer(Fire fire) {
  {
    cronwheel::MutexLock lock(mu_);
    if (fire.scheduled_ms > deferred_sent_until_ms_) {
      deferred_.push_back(std::move(fire));
      return;
    }
  }
  // Its instant's deferred fires were handed on already (this one came back late): now.
  std::vector<Fire> one;
  one.push_back(std::move(fire));
  sink_.Dispatch(std::move(one));
}

void Scheduler::SendDeferred(std::int64_t boundary_ms) {
  std::vector<Fire> due;
  {
    cronwheel::MutexLock lock(mu_);
    deferred_sent_until_ms_ = std::max(deferred_sent_until_ms_, boundary_ms);
    const auto first_due = std::partition(deferred_.begin(), deferred_.end(), [boundary_ms](const Fire& f) {
      return f.scheduled_ms > boundary_ms;
    });
    std::move(first_due, deferred_.end(), std::back_inserter(due));
    deferred_.erase(first_due, deferred_.end());
  }
  // Claimed a lead ahead and held here for their second: asked at it, as ClaimAndSend asks.
  if (!due.empty()) DropWithdrawn(due);
  if (!due.empty()) sink_.Dispatch(std::move(due));
}

Scheduler::Stats Scheduler::stats() const {
  cronwheel::MutexLock lock(mu_);
  Stats s = stats_;
  s.ring_size = ring_.size();
  s.unclaimed = unclaimed_.size();
  return s;
}

void Scheduler::Submit(std::vector<Fire> fires) {
  const auto now = clock_.NowMs();
  std::vector<Fire> due;
  for (auto& f : fires) {
    if (f.scheduled_ms <= now) {
      due.push_back(std::move(f));
    } else {
      const auto at = f.scheduled_ms;
      const auto id = f.log_id;
      ring_.Push(at, id, std::move(f));
    }
  }
  if (!due.empty()) {
    std::stop_source never;
    ClaimAndSend(std::move(due), now, never.get_token());
  }
}

void Scheduler::ScheduleLoop(const std::stop_token& stop) {
  // At scan_offset past each wall-clock second (XXL-JOB's schedule thread: at the second).
  if (!clock_.WaitUntilWallMs(NextScanMs(clock_.NowMs(), settings_.scan_offset), stop)) return;
  while (!stop.stop_requested()) {
    bool again = false;
    try {
      ResolveDoubts();
      const auto scan_start = clock_.SteadyNow();
      auto outcome = store_.Scan(settings_.node_id, settings_.pre_read_count, clock_, planner_);
      const auto took =
          std::chrono::duration_cast<std::chrono::microseconds>(clock_.SteadyNow() - scan_start);
      scan_failures_.Success();
      std::vector<Fire> due;
      std::uint64_t written = 0;
      std::uint64_t skipped = 0;
      for (const auto& c : outcome.fires) {
        ++written;
        if (c.skipped) {
          ++skipped;
          continue;
        }
        Fire f = FireFromCommitted(c);
        if (c.scheduled_ms <= outcome.now_ms || c.type == TriggerType::kMisfire) {
          due.push_back(std::move(f));
        } else {
          ring_.Push(c.scheduled_ms, c.log_id, std::move(f));
        }
      }
      {
        cronwheel::MutexLock lock(mu_);
        ++stats_.scans;
        stats_.scan_jobs_read += outcome.jobs_read;
        stats_.partitions_total = outcome.partitions_total;
        stats_.partitions_held = outcome.partitions_held;
        stats_.last_scan = took;
        stats_.last_lock_wait = outcome.lock_wait;
        stats_.fires_written += written;
        stats_.fires_skipped += skipped;
        if (outcome.full_batch) ++stats_.full_batches;
      }
      if (!due.empty()) ClaimAndSend(std::move(due), outcome.now_ms, stop);
      again = outcome.full_batch;
    } catch (const std::exception& e) {
      {
        cronwheel::MutexLock lock(mu_);
        ++stats_.scan_errors;
      }
      if (const auto n = scan_failures_.Failure(clock_.SteadyNow())) {
        spdlog::error("schedule scan failed ({} time(s) in a row): {}", *n, e.what());
      }
    }
    if (!again && !clock_.WaitUntilWallMs(NextScanMs(clock_.NowMs(), settings_.scan_offset), stop)) return;
  }
}

void Scheduler::RingLoop(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    const std::int64_t boundary = NextSecondMs(clock_.NowMs());
    const bool ahead = settings_.run_ahead.count() > 0;
    const auto lead = std::max(settings_.dispatch_lead, settings_.run_ahead);
    if (!clock_.WaitUntilWallMs(boundary - lead.count(), stop)) return;
    std::vector<Fire> fires;
    {
      cronwheel::MutexLock lock(mu_);
      fires.swap(unclaimed_);
    }
    for (auto& e : ring_.Drain(boundary))
      fires.push_back(std::move(e.item));
    // Ahead: handed on at once (the trigger defers what must wait for the instant).
    if (!fires.empty()) ClaimAndSend(std::move(fires), ahead ? 0 : boundary, stop);
    // Sleep past the boundary so the next round targets the following second.
    if (clock_.NowMs() < boundary && !clock_.WaitUntilWallMs(boundary, stop)) return;
    if (ahead) SendDeferred(boundary);
  }
}

std::int64_t Scheduler::NextClaimStamp() {
  const auto now = clock_.NowMs();
  auto last = last_claim_ms_.load();
  for (;;) {
    const auto stamp = std::max(now, last + 1);
    if (last_claim_ms_.compare_exchange_weak(last, stamp)) return stamp;
  }
}

void Scheduler::ResolveDoubts() {
  // Read before the fires, so a commit in doubt while they are read starts the reads over.
  const auto doubts = store_.CommitsInDoubt();
  const auto now = clock_.SteadyNow();
  if (doubts != doubts_seen_) {
    doubts_seen_ = doubts;
    doubt_seen_at_ = now;
    rereads_done_ = 0;
  }
  if (rereads_done_ >= kDoubtRereads.size() || now - doubt_seen_at_ < kDoubtRereads.at(rereads_done_)) return;
  constexpr int kPage = 5000;
  std::size_t adopted = 0;
  for (std::int64_t after = 0;;) {
    auto page = store_.OwnUnclaimed(settings_.node_id, after, kPage);
    if (page.empty()) break;
    after = page.back().log_id;
    const auto n = page.size();
    std::vector<Fire> fires;
    fires.reserve(n);
    for (auto& c : page) {
      Fire f = FireFromRecovered(std::move(c));
      f.late_recovered = false;  // this node's own fire, not a dead one's
      fires.push_back(std::move(f));
    }
    adopted += n;
    Submit(std::move(fires));
    if (n < static_cast<std::size_t>(kPage)) break;
  }
  // Past every read now due (a scan thread that stalled skips the ones it missed).
  while (rereads_done_ < kDoubtRereads.size() && now - doubt_seen_at_ >= kDoubtRereads.at(rereads_done_))
    ++rereads_done_;
  {
    cronwheel::MutexLock lock(mu_);
    ++stats_.doubts_resolved;
    stats_.fires_adopted += adopted;
  }
  if (rereads_done_ == 1 || adopted > 0) {
    spdlog::warn(
        "a commit's outcome was unknown (the database connection was lost while committing): read "
        "back {} open fire(s) of this admin that no claim had taken, and submitted them",
        adopted);
  }
}

void Scheduler::ClaimAndSend(std::vector<Fire> fires, std::int64_t send_at_ms, const std::stop_token& stop) {
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> doubtful;
  ids.reserve(fires.size());
  for (const auto& f : fires) {
    ids.push_back(f.log_id);
    doubtful.insert(doubtful.end(), f.doubtful_claims.begin(), f.doubtful_claims.end());
  }
  std::sort(doubtful.begin(), doubtful.end());
  doubtful.erase(std::unique(doubtful.begin(), doubtful.end()), doubtful.end());
  const auto stamp = NextClaimStamp();
  // Back to the claims retried each second; a claim or a skip whose outcome is unknown leaves its stamp on
  // the fires, so the retry releases what it may have marked.
  const auto retry_later = [this](std::vector<Fire> again, std::int64_t doubtful_stamp) {
    cronwheel::MutexLock lock(mu_);
    for (auto& f : again) {
      if (doubtful_stamp != 0) f.doubtful_claims.push_back(doubtful_stamp);
      unclaimed_.push_back(std::move(f));
    }
  };
  std::vector<ClaimedFire> claimed;
  try {
    claimed = store_.ClaimForDispatch(settings_.node_id, ids, stamp, doubtful);
  } catch (const std::exception& e) {
    const bool in_doubt = dynamic_cast<const CommitOutcomeUnknown*>(&e) != nullptr;
    if (const auto n = claim_failures_.Failure(clock_.SteadyNow())) {
      spdlog::error("claiming {} fire(s) failed ({} time(s) in a row), retrying each second: {}",
                    fires.size(), *n, e.what());
    }
    {
      cronwheel::MutexLock lock(mu_);
      ++stats_.claim_errors;
      if (in_doubt) ++stats_.claims_in_doubt;
    }
    retry_later(std::move(fires), in_doubt ? stamp : 0);
    return;
  }
  claim_failures_.Success();
  std::unordered_map<std::int64_t, Fire*> by_id;
  by_id.reserve(fires.size());
  for (auto& f : fires)
    by_id.emplace(f.log_id, &f);
  // Fires of jobs at their concurrency limit were recorded SKIPPED by the claim: not sent.
  const auto held = std::erase_if(claimed, [](const ClaimedFire& c) { return c.held_by_log_id != 0; });
  // Fires claimed late (the database was down, the ring stalled) follow their misfire strategy.
  auto resolution =
      ResolveLateFires(claimed, std::max(send_at_ms, clock_.NowMs()), settings_.scan.misfire_threshold);
  if (!resolution.skip.empty()) {
    try {
      store_.MarkSkipped(resolution.skip,
                         "misfire: claimed for sending more than the misfire threshold late "
                         "(the admin or its database was unavailable); skipped");
    } catch (const std::exception& e) {
      // Claimed by this node and neither skipped nor sent: decided again by the retried claim.
      spdlog::error("recording {} skipped misfire(s) failed, deciding them again: {}", resolution.skip.size(),
                    e.what());
      std::vector<Fire> again;
      for (const auto id : resolution.skip) {
        if (auto it = by_id.find(id); it != by_id.end()) again.push_back(std::move(*it->second));
      }
      retry_later(std::move(again), stamp);
    }
  }
  std::vector<Fire> send;
  send.reserve(resolution.send.size());
  for (const auto& c : resolution.send) {
    if (auto it = by_id.find(c.log_id); it != by_id.end()) {
      it->second->doubtful_claims.clear();
      send.push_back(std::move(*it->second));
    }
  }
  {
    cronwheel::MutexLock lock(mu_);
    stats_.fires_lost_claim += fires.size() - claimed.size() - held;
    stats_.fires_held_concurrency += held;
    stats_.fires_dispatched += send.size();
  }
  if (send.empty()) return;
  if (clock_.NowMs() < send_at_ms && !clock_.WaitUntilWallMs(send_at_ms, stop)) {
    // Stopped before their second: never send early; keep them for the hand-over (TakeRing).
    cronwheel::MutexLock lock(mu_);
    std::move(send.begin(), send.end(), std::back_inserter(unclaimed_));
    return;
  }
  DropWithdrawn(send);
  if (!send.empty()) sink_.Dispatch(std::move(send));
}

void Scheduler::DropWithdrawn(std::vector<Fire>& send) {
  // Asked now, at the send (the instant, or its lead when fires go ahead), not at the claim: a stop, change
  // or delete that committed before this moment is in what the database answers, and its fires stay here
  // (docs/architecture.md, "Stops and changes against the scan"). One lock per instant of the batch (one,
  // but after an outage) and an index lookup on fire_withdrawn, usually empty, whatever the batch's size.
  std::vector<std::int64_t> instants;
  instants.reserve(send.size());
  for (const auto& f : send)
    instants.push_back(f.scheduled_ms);
  std::sort(instants.begin(), instants.end());
  instants.erase(std::unique(instants.begin(), instants.end()), instants.end());
  std::vector<std::int64_t> withdrawn;
  try {
    withdrawn = store_.WithdrawnAt(instants);
  } catch (const std::exception& e) {
    // Sent as claimed: holding every fire until the database answers would make them all late for a stop
    // that, with the database out of reach, could hardly have committed. Counted and said.
    spdlog::warn("could not check {} fire(s) for withdrawals before sending them (sent as claimed): {}",
                 send.size(), e.what());
    cronwheel::MutexLock lock(mu_);
    ++stats_.withdrawal_check_errors;
    return;
  }
  if (withdrawn.empty()) return;
  std::sort(withdrawn.begin(), withdrawn.end());
  const auto dropped = std::erase_if(
      send, [&](const Fire& f) { return std::binary_search(withdrawn.begin(), withdrawn.end(), f.log_id); });
  if (dropped == 0) return;
  cronwheel::MutexLock lock(mu_);
  stats_.fires_withdrawn += dropped;
  stats_.fires_dispatched -= dropped;
}

}  // namespace cronwheel::admin
