#pragma once
// Batched writes of trigger results to job_log. The trigger pools record one TriggerResult per fire; a
// writer thread flushes everything recorded every `flush_interval` in one statement per `max_batch` rows
// (fire_log::RecordTriggerResults), so the database sees a few statements per second, not one per fire.
// A failed flush (database down) keeps the results and retries next interval: nothing recorded is lost
// while the process lives, up to `max_pending` results (beyond that the oldest are dropped, logged).
// Record() never blocks on the database.
//
// Kept back for the callback. The result of a fire accepted ahead of its instant (TriggerResult::sent_ahead)
// waits until `hold_for_callback` after the instant. The fire's callback usually comes first: the callback's
// transaction takes the result (TakeHeld) and writes it with the handle result in one update of the row
// (fire_log::RecordHandleResults), so the fire's job_log row is updated once instead of twice and its
// fire_open row is deleted without being updated first. One whose callback has not come by then is
// written by the next flush, as any other. A second result of the same fire (routed again, replaced)
// releases the first: both are then written in order. Meanwhile the row shows no trigger result: whoever
// reads where a fire went (the fires executors hold for a job, a kill) calls Flush() first. An admin that
// dies meanwhile leaves the fire "claimed, no trigger result"; a live admin recovers it and sends it again,
// and the executor, which holds the log id or ran it, does not run it twice (docs/architecture.md,
// "Ahead-of-time dispatch").
//
// A flush gives way to callbacks: its statement waits at most `lock_wait` for a row another transaction
// holds, then the batch is rolled back and written again at the next flush. A callback closing the same
// fires locks their fire_open and job_log rows in whatever order its plan visits them, and so does this
// batch; when the two orders crossed they deadlocked, and PostgreSQL's detector waits deadlock_timeout (1 s)
// before it breaks the tie. Trigger results kept back that long are what recovery reads as "sent, no
// result" when an admin dies meanwhile (docs/architecture.md, "Delivery to executors"). Locking the rows in
// id order (SELECT ... FOR UPDATE) instead doubled PostgreSQL's CPU per fire (docs/performance.md).
//
// Thread-safety: Record(), TakeHeld() and GiveBack() from any thread. Lifetime: flushes what is left, held
// results included, in Stop() / the destructor; that last flush is tried again while it gives way (for at
// most `stop_wait`): a graceful stop leaves no sent fire without its trigger result, which a live admin's
// recovery would send again.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "admin/schedule/seams.hpp"
#include "admin/store/pg_pool.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/throttled_log.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class TriggerResultWriter final : public TriggerRecorder {
 public:
  struct Settings {
    std::chrono::milliseconds flush_interval{20};
    std::size_t max_batch = 5000;               // rows per statement
    std::size_t max_pending = 1'000'000;        // beyond this the oldest results are dropped (logged)
    std::chrono::milliseconds lock_wait{100};   // the longest a flush waits for a row lock (see above)
    std::chrono::milliseconds stop_wait{5000};  // Stop's last flush gives way at most this long in all
    // A result of a fire sent ahead waits for its callback until this long after the fire's instant;
    // 0 = never kept back.
    std::chrono::milliseconds hold_for_callback{1000};
  };

  TriggerResultWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool);
  ~TriggerResultWriter() override;
  TriggerResultWriter(const TriggerResultWriter&) = delete;
  TriggerResultWriter& operator=(const TriggerResultWriter&) = delete;

  // O(1); O(log held) for a result kept back.
  void Record(TriggerResult result) override;
  // The results kept back for the callbacks of `log_ids`, taken out of the writer: the caller writes them
  // (fire_log::RecordHandleResults), or gives them back if its transaction failed. At most one per log
  // id, in no particular order. O(|log_ids| log held).
  std::vector<TriggerResult> TakeHeld(std::span<const std::int64_t> log_ids);
  // Results taken and not written: written by the next flush, ahead of anything recorded since.
  void GiveBack(std::vector<TriggerResult> results);
  // Writes everything recorded so far now, the results kept back included (tests, shutdown, a read of
  // where fires went). Returns false if the database failed or the flush gave way (the results are kept
  // for the next one).
  bool Flush();
  // Stops the writer thread and writes what is left (see Lifetime above). Blocks at most about
  // stop_wait + the time of one flush.
  void Stop();

  // Results not written yet, those kept back included.
  [[nodiscard]] std::size_t pending() const;
  // Results kept back for a callback now.
  [[nodiscard]] std::size_t held() const;
  // Results taken by callbacks (TakeHeld) since the start, less those given back.
  [[nodiscard]] std::uint64_t taken() const;
  // Flushes that gave way to another transaction's row locks (and were written again).
  [[nodiscard]] std::uint64_t gave_way() const;

 private:
  struct Held {
    TriggerResult result;
    std::multimap<std::int64_t, std::int64_t>::iterator release;  // into release_
  };
  void Loop(const std::stop_token& stop);
  // Writes pending_ after moving into it the held results due by `release_by_ms` (all: INT64_MAX).
  bool FlushUntil(std::int64_t release_by_ms);
  bool WriteBatch(std::span<const TriggerResult> batch);
  // Under mu_: moves the held result of `log_id`, if any, to the end of pending_.
  void ReleaseLocked(std::int64_t log_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Settings settings_;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  mutable cronwheel::Mutex mu_;
  std::deque<TriggerResult> pending_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::int64_t, Held> held_ ABSL_GUARDED_BY(mu_);  // by log id
  // Release instant (epoch ms) -> log id.
  std::multimap<std::int64_t, std::int64_t> release_ ABSL_GUARDED_BY(mu_);
  std::uint64_t taken_ ABSL_GUARDED_BY(mu_) = 0;
  // One flush at a time; FlushUntil takes mu_ inside it, never the other way round.
  cronwheel::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  ThrottledLog failures_;
  std::atomic<std::uint64_t> gave_way_{0};
  std::jthread thread_;
};

}  // namespace cronwheel::admin
