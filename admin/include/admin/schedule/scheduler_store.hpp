#pragma once
// What the scheduler needs from the database, as an interface free of libpqxx: PgSchedulerStore
// (store/pg_scheduler_store.hpp) in production, an in-memory fake in unit tests (tests/support).
//
// The ownership protocol of a fire (its job_log row) is written down in store/fire_log.hpp, which holds
// every statement that writes job_log: Scan writes the row owned by this node before the fire enters the
// ring; ClaimForDispatch returns a row only while this node still owns it; recovery
// (schedule/node_lease.hpp) re-owns the pending rows of dead nodes.
// Thread-safety: implementations are safe to call from several threads.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct ScanOutcome {
  std::int64_t now_ms = 0;  // the instant the scan decided with (read after the partitions were locked)
  std::size_t jobs_read = 0;
  bool full_batch = false;  // jobs_read == limit: more may be due, scan again at once
  std::vector<CommittedFire> fires;
  int partitions_total = 0;                // P (schedule/partitions.hpp)
  int partitions_held = 0;                 // the partitions this scan locked and scanned
  std::chrono::microseconds lock_wait{0};  // time spent taking them
};

class SchedulerStore {
 public:
  virtual ~SchedulerStore() = default;

  // One scan transaction: locks this node's schedule partitions (schedule/partitions.hpp; never waiting for
  // one another admin holds), reads now from `clock`, reads at most `limit` enabled jobs of those partitions
  // with next_fire_ms <= now + pre_read, asks `planner`, writes the planned rows (owner_node = node_id) and
  // the job advances, commits. Throws on database failure (nothing is written then).
  virtual ScanOutcome Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                           ScanPlanner& planner) = 0;

  // Marks the given rows as being sent by node_id (dispatch_ms = now_ms) where node_id still owns them
  // and they are pending, not skipped and not yet claimed. Returns those rows. Throws on database failure.
  virtual std::vector<ClaimedFire> ClaimForDispatch(std::string_view node_id,
                                                    std::span<const std::int64_t> log_ids,
                                                    std::int64_t now_ms) = 0;

  // Records rows as skipped misfires (status SKIPPED) with `note` appended to trigger_msg.
  virtual void MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) = 0;

  // SHARDING_BROADCAST: turns the pending row `base_log_id` (shard 0 of 1) into shard 0 of `total` and
  // writes shards 1..total-1 as copies owned by node_id and already claimed for sending, in one
  // transaction. Returns the new rows' ids by shard index (index 0 = base_log_id). Returns just
  // {base_log_id} when the row was expanded before (a recovered fire is never expanded twice).
  virtual std::vector<std::int64_t> CreateShards(std::int64_t base_log_id, int total,
                                                 std::string_view node_id, std::int64_t now_ms) = 0;

 protected:
  SchedulerStore() = default;
  SchedulerStore(const SchedulerStore&) = default;
  SchedulerStore& operator=(const SchedulerStore&) = default;
};

}  // namespace cronwheel::admin
