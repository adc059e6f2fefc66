#pragma once
// Batched writes of trigger results to job_log. The trigger pools record one TriggerResult per fire; a
// writer thread flushes everything recorded every `flush_interval` in one statement per `max_batch` rows
// (fire_log::RecordTriggerResults), so the database sees a few statements per second, not one per fire.
// A failed flush (database down) keeps the results and retries next interval: nothing recorded is lost
// while the process lives, up to `max_pending` results (beyond that the oldest are dropped, logged).
// Record() never blocks on the database.
//
// A flush gives way to callbacks: its statement waits at most `lock_wait` for a row another transaction
// holds, then the batch is rolled back and written again at the next flush. A callback closing the same
// fires locks their fire_open and job_log rows in whatever order its plan visits them, and so does this
// batch; when the two orders crossed they deadlocked, and PostgreSQL's detector waits deadlock_timeout (1 s)
// before it breaks the tie. Trigger results kept back that long are what recovery reads as "sent, no
// result" when an admin dies meanwhile (docs/architecture.md, "Delivery to executors"). Locking the rows in
// id order (SELECT ... FOR UPDATE) instead doubled PostgreSQL's CPU per fire (docs/performance.md).
//
// Thread-safety: Record() from any thread. Lifetime: flushes what is left in Stop() / the destructor; that
// last flush is tried again while it gives way (for at most `stop_wait`): a graceful stop leaves no sent
// fire without its trigger result, which a live admin's recovery would send again.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "admin/schedule/seams.hpp"
#include "admin/store/pg_pool.hpp"
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
  };

  TriggerResultWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool);
  ~TriggerResultWriter() override;
  TriggerResultWriter(const TriggerResultWriter&) = delete;
  TriggerResultWriter& operator=(const TriggerResultWriter&) = delete;

  // O(1).
  void Record(TriggerResult result) override;
  // Writes everything recorded so far now (tests, shutdown). Returns false if the database failed or the
  // flush gave way (the results are kept for the next one).
  bool Flush();
  // Stops the writer thread and writes what is left (see Lifetime above). Blocks at most about
  // stop_wait + the time of one flush.
  void Stop();

  [[nodiscard]] std::size_t pending() const;
  // Flushes that gave way to another transaction's row locks (and were written again).
  [[nodiscard]] std::uint64_t gave_way() const;

 private:
  void Loop(const std::stop_token& stop);
  bool WriteBatch(std::span<const TriggerResult> batch);

  Settings settings_;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  mutable std::mutex mu_;
  std::deque<TriggerResult> pending_;
  std::mutex flush_mu_;  // one flush at a time
  ThrottledLog failures_;
  std::atomic<std::uint64_t> gave_way_{0};
  std::jthread thread_;
};

}  // namespace cronwheel::admin
