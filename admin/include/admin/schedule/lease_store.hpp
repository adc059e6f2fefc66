#pragma once
// What NodeLease (schedule/node_lease.hpp) needs from the database: the interface schedule owns for
// membership and recovery, implemented on PostgreSQL by PgLeaseStore (admin/store/pg_lease_store.hpp:
// table admin_node, a session-level advisory lock per node on a dedicated connection, and the re-owning of
// fire rows through store/fire_log.hpp) and by fakes in tests.
//
// Thread-safety: called by one NodeLease, from its thread and its owner's, serialised by NodeLease (except
// AnotherNodeAlive, which may come from any thread). Errors: infrastructure failures throw; NodeConflict
// when another live process holds this node id.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/model/fire.hpp"

namespace cronwheel::admin {

// Another running admin uses this node id.
class NodeConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whose pending fires a live node takes.
enum class FireOwner {
  kSelf,      // this node's own (a restart with the same node id): waits for row locks, at most lock_wait_ms
  kDeadNode,  // a node declared dead: never waits for a row another node holds
  kHandedOver,  // fires handed over at shutdown (no owner): never waits
};

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;

  // Holds this node's lock (taking it if it is not held, on a connection of its own, which PostgreSQL
  // closes when the process dies). NodeConflict when another live process holds it.
  virtual void HoldLock(const std::string& node_id, int lock_key) = 0;
  // Lets the lock go (closing its connection): after a failure, and at hand-over.
  virtual void ReleaseLock() = 0;
  // Writes the node's row: heartbeat now, lease until `lease_until_ms`.
  virtual void Heartbeat(const std::string& node_id, int lock_key, const std::string& address,
                         std::int64_t now_ms, std::int64_t lease_until_ms) = 0;
  // Other nodes that are dead at `now_ms`: their lease ended, or their lock is free and their last heartbeat
  // is older than `heartbeat_before_ms` (docs/architecture.md, step 8).
  virtual std::vector<std::string> DeadNodes(const std::string& node_id, std::int64_t now_ms,
                                             std::int64_t heartbeat_before_ms) = 0;
  // Makes `node_id` the owner of at most `limit` pending fires of `whose` (`owner`: the dead node's id), in
  // one transaction, and returns them; a fire with a trigger result or a callback is never taken.
  virtual std::vector<ClaimedFire> TakeFires(const std::string& node_id, FireOwner whose,
                                             const std::string& owner, int limit,
                                             std::int64_t lock_wait_ms) = 0;
  // Deletes the row of dead node `node` when its lease ended before `lease_before_ms` and none of its fires
  // is left pending.
  virtual void ForgetNode(const std::string& node, std::int64_t lease_before_ms) = 0;
  // Whether another node's lease runs at `now_ms` with a heartbeat since `heartbeat_after_ms`.
  virtual bool AnotherNodeAlive(const std::string& node_id, std::int64_t now_ms,
                                std::int64_t heartbeat_after_ms) = 0;
  // Gives up the node's pending fires not being sent, and `log_ids`, for live nodes to take; deletes its
  // row. Returns how many fires.
  virtual std::size_t HandOver(const std::string& node_id, std::span<const std::int64_t> log_ids) = 0;

 protected:
  LeaseStore() = default;
  LeaseStore(const LeaseStore&) = default;
  LeaseStore& operator=(const LeaseStore&) = default;
};

}  // namespace cronwheel::admin
