#pragma once
// Batched writes of fire outcomes to job_log. The trigger pools record one TriggerResult per fire; a
// writer thread flushes everything recorded every `flush_interval` in one UPDATE ... FROM
// json_to_recordset statement, so the database sees a few statements per second, not one per fire.
// A failed flush (database down) keeps the results and retries next interval: nothing recorded is lost
// while the process lives. Record() never blocks on the database.
//
// Thread-safety: Record() from any thread. Lifetime: flushes what is left in Stop() / the destructor.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admin/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

// The outcome of sending one fire (XXL-JOB's trigger_* columns, §7 step 4f).
struct TriggerResult {
  std::int64_t log_id = 0;
  std::int64_t trigger_ms = 0;
  int trigger_code = 0;     // 200 accepted by the executor, else failed
  std::string trigger_msg;  // appended to what the row already says
  std::string executor_address;
  std::string executor_handler;
  std::string executor_param;
  int shard_index = 0;
  int shard_total = 1;
  int retry_count = 0;
};

class TriggerRecorder {
 public:
  virtual ~TriggerRecorder() = default;
  virtual void Record(TriggerResult result) = 0;

 protected:
  TriggerRecorder() = default;
  TriggerRecorder(const TriggerRecorder&) = default;
  TriggerRecorder& operator=(const TriggerRecorder&) = default;
};

class PgLogWriter final : public TriggerRecorder {
 public:
  struct Settings {
    std::chrono::milliseconds flush_interval{20};
    std::size_t max_batch = 5000;         // rows per statement
    std::size_t max_pending = 1'000'000;  // beyond this the oldest results are dropped (logged)
  };

  PgLogWriter(Settings settings, ringwheel::Clock& clock, PgPool& pool);
  ~PgLogWriter() override;
  PgLogWriter(const PgLogWriter&) = delete;
  PgLogWriter& operator=(const PgLogWriter&) = delete;

  void Record(TriggerResult result) override;
  // Writes everything recorded so far now (tests, shutdown). Returns false if the database failed.
  bool Flush();
  void Stop();

  [[nodiscard]] std::size_t pending() const;

 private:
  void Loop(const std::stop_token& stop);
  bool WriteBatch(const std::vector<TriggerResult>& batch);

  Settings settings_;
  ringwheel::Clock& clock_;
  PgPool& pool_;
  mutable std::mutex mu_;
  std::vector<TriggerResult> pending_;
  std::mutex flush_mu_;  // one flush at a time
  int failures_ = 0;
  std::jthread thread_;
};

}  // namespace cronwheel::admin
