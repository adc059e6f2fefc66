#include "admin/store/pg_lease_store.hpp"

#include <fmt/format.h>

#include "admin/store/fire_log.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {

PgLeaseStore::PgLeaseStore(PgPool& pool) : pool_(pool) {}

PgLeaseStore::~PgLeaseStore() = default;

void PgLeaseStore::HoldLock(const std::string& node_id, int lock_key) {
  if (lock_conn_ && lock_conn_->is_open()) return;
  lock_conn_.reset();
  auto conn = std::make_unique<pqxx::connection>(pool_.dsn());
  pqxx::nontransaction tx(*conn);
  tx.exec(PgPool::kDefaultSessionSetup);
  const bool got =
      tx.exec_params1(R"sql(SELECT pg_try_advisory_lock($1, $2))sql", kNodeLockClass, lock_key)[0].as<bool>();
  if (!got) {
    throw NodeConflict(fmt::format(
        "node id '{}' is in use by another running admin (advisory lock {}/{} is held); give each admin its "
        "own node_id",
        node_id, kNodeLockClass, lock_key));
  }
  lock_conn_ = std::move(conn);
}

void PgLeaseStore::ReleaseLock() {
  lock_conn_.reset();
}

void PgLeaseStore::Heartbeat(const std::string& node_id, int lock_key, const std::string& address,
                             std::int64_t now_ms, std::int64_t lease_until_ms) {
  pqxx::work tx(*lock_conn_);
  tx.exec_params(R"sql(
    INSERT INTO admin_node (node_id, lock_key, address, started_ms, heartbeat_ms, lease_until_ms)
    VALUES ($1, $2, $3, $4, $4, $5)
    ON CONFLICT (node_id) DO UPDATE SET lock_key = $2, address = $3, heartbeat_ms = $4, lease_until_ms = $5
  )sql",
                 node_id, lock_key, address, now_ms, lease_until_ms);
  tx.commit();
}

std::vector<std::string> PgLeaseStore::DeadNodes(const std::string& node_id, std::int64_t now_ms,
                                                 std::int64_t heartbeat_before_ms) {
  std::vector<std::string> dead;
  pqxx::read_transaction tx(*lock_conn_);
  // Advisory locks belong to one database; pg_locks lists the whole server's.
  for (const auto& r : tx.exec_params(R"sql(
         SELECT n.node_id FROM admin_node n
          WHERE n.node_id <> $1
            AND (n.lease_until_ms < $2
                 OR (n.heartbeat_ms < $3
                     AND NOT EXISTS (SELECT 1 FROM pg_locks l
                                      WHERE l.locktype = 'advisory' AND l.classid = $4
                                        AND l.objid = n.lock_key::oid AND l.objsubid = 2 AND l.granted
                                        AND l.database = (SELECT oid FROM pg_database
                                                           WHERE datname = current_database()))))
       )sql",
                                      node_id, now_ms, heartbeat_before_ms, kNodeLockClass)) {
    dead.push_back(r["node_id"].as<std::string>());
  }
  return dead;
}

std::vector<ClaimedFire> PgLeaseStore::TakeFires(const std::string& node_id, FireOwner whose,
                                                 const std::string& owner, int limit,
                                                 std::int64_t lock_wait_ms) {
  const auto kind = whose == FireOwner::kSelf       ? fire_log::Owner::kSelf
                    : whose == FireOwner::kDeadNode ? fire_log::Owner::kDeadNode
                                                    : fire_log::Owner::kHandedOver;
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // A dead run's transaction may hold some of its own rows until PostgreSQL notices it is gone.
    if (whose == FireOwner::kSelf) tx.exec(fmt::format("SET LOCAL lock_timeout = {}", lock_wait_ms));
    auto batch = fire_log::ReOwn(tx, node_id, kind, whose == FireOwner::kSelf ? node_id : owner, limit);
    tx.commit();
    return batch;
  });
}

void PgLeaseStore::ForgetNode(const std::string& node, std::int64_t lease_before_ms) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(R"sql(
      DELETE FROM admin_node n
       WHERE n.node_id = $1 AND n.lease_until_ms < $2
         AND NOT EXISTS (SELECT 1 FROM fire_open WHERE owner_node = $1 AND trigger_ms = 0)
    )sql",
                   node, lease_before_ms);
    tx.commit();
  });
}

bool PgLeaseStore::AnotherNodeAlive(const std::string& node_id, std::int64_t now_ms,
                                    std::int64_t heartbeat_after_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec_params1(R"sql(
             SELECT count(*) FROM admin_node
              WHERE node_id <> $1 AND lease_until_ms >= $2 AND heartbeat_ms >= $3
           )sql",
                           node_id, now_ms, heartbeat_after_ms)[0]
               .as<int>() > 0;
  });
}

std::size_t PgLeaseStore::HandOver(const std::string& node_id, std::span<const std::int64_t> log_ids) {
  const auto n = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto handed = fire_log::HandOver(tx, node_id, log_ids);
    tx.exec_params(R"sql(DELETE FROM admin_node WHERE node_id = $1)sql", node_id);
    tx.commit();
    return handed;
  });
  lock_conn_.reset();  // releases the advisory lock
  return n;
}

}  // namespace cronwheel::admin
