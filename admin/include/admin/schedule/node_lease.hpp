#pragma once
// An admin node's membership of the cluster, and the recovery of fires other nodes left behind
// (docs/architecture.md "The life of one fire", step 8; fixes XXL-JOB's weakness of
// docs/xxl-job-protocol.md §15 item 3: its ring lives only in memory and a crash loses up to 5 s of fires).
//
// Liveness. A node holds its lock (LeaseStore::HoldLock: on PostgreSQL a session-level advisory lock on a
// connection of its own) and renews its row (heartbeat, lease until) every `heartbeat`. PostgreSQL drops
// the lock the moment the process dies (kill -9 closes its socket), so:
//   a node is dead  <=>  lease_until_ms < now
//                        OR (its advisory lock is free AND heartbeat_ms < now - lock_grace).
// The grace keeps a live node whose connection merely blipped from being declared dead at once.
//
// A node judges its peers only once it has itself been in contact with the database for a whole `lease`
// (heartbeats without a failure since its start or its last failed round). A database outage longer than
// the lease makes every lease end and, when PostgreSQL restarts, drops every lock: a node back first would
// otherwise declare its live peers dead, re-own the fires they were sending that very moment and send them
// a second time (the executor answers "repeat trigger job" while the first run is queued or running, and a
// fire with retries then ran twice: the fault e2e test met this). After a lease every live peer has taken
// its lock again and renewed its lease. The cost: a node that has just started or reconnected recovers a
// dead peer's fires at most one lease later; handed-over fires (owner NULL) it takes at once.
//
// Recovery, every heartbeat: the pending rows (trigger_code 0, not skipped) of dead nodes, and orphaned
// rows handed over at shutdown (owner NULL), are re-owned with FOR UPDATE SKIP LOCKED, so two live nodes
// never take the same row, and given to `on_recovered` (the Scheduler: sent at once if on time, else
// misfire strategy; future ones wait in the ring). A restarted node (same node_id) takes back its own
// rows at Start(). The ownership check at dispatch (SchedulerStore::ClaimForDispatch) guarantees a node
// wrongly declared dead cannot also send what was taken from it.
//
// Rows a dead node had claimed for sending (dispatch_ms > 0) may already have reached an executor; they
// are sent again with the same log id, which cronwheel's executor runs only once. (An executor without
// that de-duplication may run such a fire twice; XXL-JOB would lose it.)
//
// The policy is here (when, how many, what is logged); the database work is the LeaseStore's
// (schedule/lease_store.hpp), so the rounds run on a fake store in unit tests.
//
// Thread-safety: Start/HandOver/Stop from the owner thread; AnotherNodeAlive from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/lease_store.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/throttled_log.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class NodeLease final {
 public:
  struct Settings {
    std::string node_id;
    std::string address;  // shown in admin_node, for operators
    std::chrono::milliseconds heartbeat{1000};
    std::chrono::milliseconds lease{10'000};
    std::chrono::milliseconds lock_grace{2500};
    // How long this node must have been in contact with the database before it judges its peers (above);
    // nullopt: the lease. (The pg tests of the recovery SQL set 0.)
    std::optional<std::chrono::milliseconds> judge_after;
    int claim_batch = 5000;  // rows re-owned per statement
  };
  using OnRecovered = std::function<void(std::vector<ClaimedFire>)>;

  NodeLease(Settings settings, ringwheel::Clock& clock, LeaseStore& store, OnRecovered on_recovered);
  ~NodeLease();
  NodeLease(const NodeLease&) = delete;
  NodeLease& operator=(const NodeLease&) = delete;

  // Takes the node lock, writes the admin_node row, takes back this node's own pending rows (a previous
  // run with the same node id), and starts the heartbeat/recovery thread. Throws NodeConflict when
  // another live process holds this node id, the store's errors when the database is unreachable.
  void Start();

  // One heartbeat + recovery round now (the thread runs this every `heartbeat`; tests call it): handed-over
  // fires are taken; dead peers' fires only once this node has been in contact for a lease (above).
  // Safe to call while the thread runs (rounds are serialised).
  void Tick();

  // Whether some other node is alive now.
  bool AnotherNodeAlive();

  // Shutdown: gives up this node's pending rows that are not being sent (dispatch_ms 0) plus `log_ids`
  // (taken out of the ring), so live nodes pick them up within a heartbeat; then deletes the node row and
  // releases the lock. Returns the number of rows handed over.
  std::size_t HandOver(std::span<const std::int64_t> log_ids);

  // Stops the thread (without handing over).
  void Stop();

  // The advisory-lock key of a node id (stable, non-negative).
  static int LockKey(std::string_view node_id);

 private:
  void Loop(const std::stop_token& stop);
  void Heartbeat();
  // Takes handed-over fires, and the fires of dead peers when `judge_peers`.
  void Recover(bool judge_peers);
  // Takes every pending fire of `whose` (batch by batch) into `out`.
  void TakeAll(FireOwner whose, const std::string& owner, std::vector<ClaimedFire>& out);

  Settings settings_;
  ringwheel::Clock& clock_;
  LeaseStore& store_;
  OnRecovered on_recovered_;
  int lock_key_;
  // Serialises rounds and the store's lock; guards failures_ and in_contact_since_.
  cronwheel::Mutex tick_mu_;
  ThrottledLog failures_ ABSL_GUARDED_BY(tick_mu_);
  // Since when this node's rounds have all succeeded (nullopt after a failed round, until the next good one).
  std::optional<ringwheel::SteadyTime> in_contact_since_ ABSL_GUARDED_BY(tick_mu_);
  std::jthread thread_;
};

}  // namespace cronwheel::admin
