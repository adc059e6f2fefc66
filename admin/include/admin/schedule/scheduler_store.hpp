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

  // Marks the given rows as being sent by node_id (dispatch_ms = claim_ms) where node_id still owns them
  // and they are pending, not skipped and not yet claimed. Returns those rows. Throws on database failure;
  // CommitOutcomeUnknown when the claim may or may not have been committed.
  //
  // `doubtful_claims`: the stamps (claim_ms) of earlier claims of some of these rows whose commit outcome
  // was unknown. A row this node claimed with one of them, still not accepted by an executor, was never sent
  // (the claim's caller did not learn it had it): in the same transaction it is released first and then
  // claimed again. A stamp names one claim: the scheduler gives each of its claims a stamp of its own
  // (strictly increasing per node), so a claim that succeeded is never released this way.
  virtual std::vector<ClaimedFire> ClaimForDispatch(std::string_view node_id,
                                                    std::span<const std::int64_t> log_ids,
                                                    std::int64_t claim_ms,
                                                    std::span<const std::int64_t> doubtful_claims) = 0;

  // This node's open fires that nobody has claimed (dispatch_ms 0) and no executor accepted, with log id
  // above `after_log_id`, in log id order, at most `limit`: what a transaction whose commit outcome was
  // unknown may have written for this node (a scan's fires, a callback's child jobs, a failure's retries)
  // without this node holding them in memory. Nothing is written. Throws on database failure.
  virtual std::vector<ClaimedFire> OwnUnclaimed(std::string_view node_id, std::int64_t after_log_id,
                                                int limit) = 0;

  // How many commits this store's database connections lost before learning their outcome, since it was
  // made (all of the admin's transactions count, not only the scheduler's). When it moves, the scheduler
  // resolves what those commits may have written (OwnUnclaimed).
  virtual std::uint64_t CommitsInDoubt() = 0;

  // Of the fires whose instant is one of `instants_ms`, those withdrawn after an admin claimed them: a stop,
  // change or delete of their job, or an edit of a calendar it follows, committed before their instant
  // (fire_log::WithdrawUnsent, sql/031). They are closed already and must not be sent. The scheduler asks at
  // the instant, just before it sends; a withdrawal still in progress for one of these instants is waited
  // for (each instant's second is a lock the withdrawal holds shared and this takes exclusively), so the
  // answer and the withdrawal agree on which fires went. Any order. Throws on database failure.
  virtual std::vector<std::int64_t> WithdrawnAt(std::span<const std::int64_t> instants_ms) = 0;

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
