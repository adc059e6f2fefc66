#pragma once
// Batched writes of trigger results to job_log. The trigger pools record one TriggerResult per fire; a
// writer thread flushes everything recorded every `flush_interval` in one statement per `max_batch` rows
// (fire_log::RecordTriggerResults), so the database sees a few statements per second, not one per fire.
// A failed flush (database down) keeps the results and retries next interval: nothing recorded is lost
// while the process lives, up to `max_pending` results (beyond that the oldest are dropped, logged).
// Record() never blocks on the database.
//
// Thread-safety: Record() from any thread. Lifetime: flushes what is left in Stop() / the destructor.

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
    std::size_t max_batch = 5000;         // rows per statement
    std::size_t max_pending = 1'000'000;  // beyond this the oldest results are dropped (logged)
  };

  TriggerResultWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool);
  ~TriggerResultWriter() override;
  TriggerResultWriter(const TriggerResultWriter&) = delete;
  TriggerResultWriter& operator=(const TriggerResultWriter&) = delete;

  // O(1).
  void Record(TriggerResult result) override;
  // Writes everything recorded so far now (tests, shutdown). Returns false if the database failed.
  bool Flush();
  void Stop();

  [[nodiscard]] std::size_t pending() const;

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
  std::jthread thread_;
};

}  // namespace cronwheel::admin
