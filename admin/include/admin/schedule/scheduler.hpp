#pragma once
// The admin's two scheduling threads (docs/architecture.md, "The life of one fire", steps 1-2):
//
//  * Schedule thread, every second at `scan_offset` past the wall-clock second: one scan transaction
//    (SchedulerStore::Scan: lock row FOR UPDATE, read jobs due within the pre-read window, plan, write
//    the fires and the jobs' next times, COMMIT). Only after the commit are the fires handed on: those
//    already due are claimed and sent at once, the others go into the time ring at their second.
//    A full batch (as many jobs as pre_read_count) means scan again at once instead of waiting.
//  * Ring thread: `dispatch_lead` before each second boundary T it drains the ring up to T (the current
//    slot and the ones before it, so a late tick loses nothing), claims those fires in one statement,
//    waits until T (never early) and hands them to the FireSink (the trigger pools).
//    With `run_ahead` (ahead-of-time dispatch, docs/architecture.md): it drains and claims `run_ahead`
//    before T and hands the fires on at once; the trigger sends each fire whose executor starts fires at
//    their instant on its own timer (cronwheel-executor), and gives every other back through Defer(),
//    which the ring thread hands on at T, never early.
//
// A claim that fails (database down) is retried every second; fires claimed later than the misfire
// threshold follow their job's misfire strategy (ResolveLateFires).
//
// Commits whose outcome is unknown (CommitOutcomeUnknown: the primary died or failed over during a COMMIT;
// docs/architecture.md, "When the primary dies") are resolved from the database once it answers again,
// so a fire is neither lost nor sent twice:
//  * A claim in doubt may have marked its fires as being sent by this node without this node learning it.
//    Each claim has a stamp of its own (its claim_ms, strictly increasing in this node); the fires of a claim
//    in doubt keep its stamp (Fire::doubtful_claims) and go back to the claims retried each second, whose
//    claim first releases the rows still marked with that stamp and not accepted by an executor, then
//    claims them again. A claim that succeeded has a stamp no fire keeps, so it is never released.
//  * Any other commit in doubt (the scan's, or a callback's child jobs, a failure's retries, an API
//    trigger, all in this admin's database pool) may have written fires owned by this node that it does not
//    hold. When SchedulerStore::CommitsInDoubt moves, the schedule thread reads this node's open, unclaimed
//    fires (OwnUnclaimed) before its next scan and submits them: the ring refuses a fire it holds already,
//    and the claim takes each row once, so one held twice is still sent once. A commit can also land after
//    its connection was lost (the server still alive, or waiting for its synchronous standby's
//    acknowledgement), so the fires are read back again 2, 5, 10, 20 and 30 s after the doubt was seen
//    (kDoubtRereads).
//  * A skip a claim decided (a late fire, MarkSkipped) that fails goes back to the retried claims with the
//    claim's stamp, so it is decided again rather than left claimed and never sent.
//
// Thread-safety: Submit/Stats may be called from any thread. Start/StopScanning/TakeRing/Stop from one
// owner thread. Lifetime: clock, store and sink must outlive the Scheduler; the destructor stops both
// threads.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/schedule/scheduler_store.hpp"
#include "admin/schedule/seams.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/throttled_log.hpp"
#include "ringwheel/clock.hpp"
#include "ringwheel/second_ring.hpp"

namespace cronwheel::admin {

class Scheduler final {
 public:
  // When, after a commit in doubt was seen, the schedule thread reads its own unclaimed fires back: at once,
  // then again in case the commit landed later (see the class comment).
  static constexpr std::array<std::chrono::seconds, 6> kDoubtRereads{
      std::chrono::seconds(0),  std::chrono::seconds(2),  std::chrono::seconds(5),
      std::chrono::seconds(10), std::chrono::seconds(20), std::chrono::seconds(30)};

  struct Settings {
    std::string node_id;
    int pre_read_count = 3000;                     // XXL-JOB: (fast max + slow max) * 10
    ScanSettings scan;                             // pre-read window, misfire threshold
    std::chrono::milliseconds dispatch_lead{200};  // claim this long before the second boundary
    // Where in each second the scan runs. XXL-JOB scans at the second itself, when every fire of that second
    // is being sent: the scan's statements then queue behind the burst for the cores and the database (and
    // two admins' scans meet). Half a second later the burst of a second is over (below N = 5,000 fires a
    // second on two cores: docs/performance.md), and the pre-read window still covers 4.5 s ahead.
    std::chrono::milliseconds scan_offset{500};
    int ring_lookback_s = 2;  // slots drained behind the current one
    // Hand each second's fires on this long before it (0 = at the second): the lead of ahead-of-time
    // dispatch. Below the pre-read window less a second, so the scan has written them by then.
    std::chrono::milliseconds run_ahead{0};
  };

  struct Stats {
    std::uint64_t scans = 0;
    std::uint64_t scan_errors = 0;
    std::uint64_t full_batches = 0;
    std::uint64_t fires_written = 0;
    std::uint64_t fires_skipped = 0;           // DO_NOTHING misfires
    std::uint64_t fires_dispatched = 0;        // claimed and handed to the sink
    std::uint64_t fires_lost_claim = 0;        // owned by another node by the time of the claim
    std::uint64_t fires_held_concurrency = 0;  // skipped at the claim: the job was at its concurrency limit
    std::uint64_t fires_withdrawn = 0;  // claimed, then withdrawn before their instant (a stop): not sent
    std::uint64_t withdrawal_check_errors = 0;  // the check at the instant failed: the fires were sent
    std::uint64_t claim_errors = 0;
    std::uint64_t claims_in_doubt = 0;  // claims whose commit outcome was unknown (retried by stamp)
    std::uint64_t doubts_resolved = 0;  // times the schedule thread read its own unclaimed fires back
    std::uint64_t fires_adopted = 0;    // fires so read back and submitted (most were held already)
    std::size_t ring_size = 0;
    std::size_t unclaimed = 0;  // waiting for the database to claim them
    int partitions_total = 0;   // schedule partitions in the cluster, as of the last scan
    int partitions_held = 0;    // partitions the last scan locked and scanned
    std::uint64_t scan_jobs_read = 0;
    std::chrono::microseconds last_scan{0};       // duration of the last scan transaction
    std::chrono::microseconds last_lock_wait{0};  // time the last scan spent taking its partitions
  };

  Scheduler(Settings settings, ringwheel::Clock& clock, SchedulerStore& store, FireSink& sink);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the schedule and ring threads.
  void Start();
  // Stops the schedule thread (no new scans); the ring thread keeps sending what is in the ring.
  void StopScanning();
  // Removes and returns everything in the ring and not yet claimed (for hand-over at shutdown).
  std::vector<Fire> TakeRing();
  // Stops both threads.
  void Stop();

  // A fire handed on ahead of its instant that must be sent at it (its executor cannot hold it): handed on
  // again at its instant by the ring thread, or at once when that has passed. Any thread.
  void Defer(Fire fire);

  // Fires this node owns that were written elsewhere (manual triggers, retries, child jobs, re-owned fires
  // of a dead node): due ones (scheduled_ms <= now) are claimed and sent at once, future ones wait in the
  // ring until their time.
  void Submit(std::vector<Fire> fires);

  [[nodiscard]] Stats stats() const;
  [[nodiscard]] std::size_t ring_size() const { return ring_.size(); }

 private:
  void ScheduleLoop(const std::stop_token& stop);
  void RingLoop(const std::stop_token& stop);
  // Claims `fires` (all due by now_ms or about to be) and sends the on-time ones; keeps the ones the
  // database could not claim for the next attempt. `send_at_ms`: do not send before this instant.
  void ClaimAndSend(std::vector<Fire> fires, std::int64_t send_at_ms, const std::stop_token& stop);
  // At the send: drops from `send` the fires withdrawn since their claim (SchedulerStore::WithdrawnAt).
  void DropWithdrawn(std::vector<Fire>& send);
  // A stamp for a new claim: now, or one more than the last stamp when that is not earlier.
  std::int64_t NextClaimStamp();
  // When the store counted commits in doubt since the last call: submits this node's open, unclaimed fires
  // (the schedule thread, before a scan). Throws on database failure (retried at the next scan).
  void ResolveDoubts();

  Settings settings_;
  ringwheel::Clock& clock_;
  SchedulerStore& store_;
  FireSink& sink_;
  ScanPlanner planner_;
  ringwheel::SecondRing<Fire> ring_;

  // Hands on the deferred fires due by `boundary_ms` (the ring thread, at that instant).
  void SendDeferred(std::int64_t boundary_ms);

  mutable cronwheel::Mutex mu_;  // guards stats_, unclaimed_ and deferred_
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<Fire> unclaimed_ ABSL_GUARDED_BY(mu_);  // claims that failed: retried each tick
  std::vector<Fire> deferred_ ABSL_GUARDED_BY(mu_);   // handed back by Defer() until their instant
  // The instant up to which deferred fires were handed on.
  std::int64_t deferred_sent_until_ms_ ABSL_GUARDED_BY(mu_) = 0;
  ThrottledLog scan_failures_;
  ThrottledLog claim_failures_;
  std::atomic<std::int64_t> last_claim_ms_{0};  // the last claim's stamp (NextClaimStamp)
  // The schedule thread's: CommitsInDoubt when last seen, when it moved, and how many of the reads after it
  // (kDoubtRereads) were made.
  std::uint64_t doubts_seen_ = 0;
  ringwheel::SteadyTime doubt_seen_at_{};
  std::size_t rereads_done_ = kDoubtRereads.size();  // none pending until a doubt is seen

  std::jthread schedule_thread_;
  std::jthread ring_thread_;
};

}  // namespace cronwheel::admin
