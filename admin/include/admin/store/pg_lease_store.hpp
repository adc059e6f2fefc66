#pragma once
// LeaseStore (schedule/lease_store.hpp) on PostgreSQL: the one writer of admin_node. A node's liveness is
// a session-level advisory lock (kNodeLockClass, the node's key) held on a connection of its own, which
// PostgreSQL drops the moment the process dies; the fires are re-owned through store/fire_log.hpp.
//
// Thread-safety: as LeaseStore (the lock connection is used only under NodeLease's serialisation).

#include <memory>
#include <pqxx/pqxx>

#include "admin/schedule/lease_store.hpp"

namespace cronwheel::admin {

class PgPool;

// First key of the two-int advisory locks admins hold ('cw').
inline constexpr int kNodeLockClass = 0x6377;

class PgLeaseStore final : public LeaseStore {
 public:
  explicit PgLeaseStore(PgPool& pool);
  ~PgLeaseStore() override;
  PgLeaseStore(const PgLeaseStore&) = delete;
  PgLeaseStore& operator=(const PgLeaseStore&) = delete;

  void HoldLock(const std::string& node_id, int lock_key) override;
  void ReleaseLock() override;
  void Heartbeat(const std::string& node_id, int lock_key, const std::string& address, std::int64_t now_ms,
                 std::int64_t lease_until_ms) override;
  std::vector<std::string> DeadNodes(const std::string& node_id, std::int64_t now_ms,
                                     std::int64_t heartbeat_before_ms) override;
  std::vector<ClaimedFire> TakeFires(const std::string& node_id, FireOwner whose, const std::string& owner,
                                     int limit, std::int64_t lock_wait_ms) override;
  void ForgetNode(const std::string& node, std::int64_t lease_before_ms) override;
  bool AnotherNodeAlive(const std::string& node_id, std::int64_t now_ms,
                        std::int64_t heartbeat_after_ms) override;
  std::size_t HandOver(const std::string& node_id, std::span<const std::int64_t> log_ids) override;

 private:
  PgPool& pool_;
  std::unique_ptr<pqxx::connection> lock_conn_;  // holds the advisory lock
};

}  // namespace cronwheel::admin
