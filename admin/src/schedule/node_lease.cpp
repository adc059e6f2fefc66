#include "admin/schedule/node_lease.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "admin/store/fire_log.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {

int NodeLease::LockKey(std::string_view node_id) {
  std::uint32_t h = 2166136261U;  // FNV-1a
  for (const char ch : node_id) {
    const auto c = static_cast<unsigned char>(ch);
    h ^= c;
    h *= 16777619U;
  }
  return static_cast<int>(h & 0x7fffffffU);
}

NodeLease::NodeLease(Settings settings, ringwheel::Clock& clock, PgPool& pool, OnRecovered on_recovered)
    : settings_(std::move(settings)),
      clock_(clock),
      pool_(pool),
      on_recovered_(std::move(on_recovered)),
      lock_key_(LockKey(settings_.node_id)) {}

NodeLease::~NodeLease() {
  Stop();
}

void NodeLease::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

void NodeLease::EnsureLock() {
  if (lock_conn_ && lock_conn_->is_open()) return;
  lock_conn_.reset();
  auto conn = std::make_unique<pqxx::connection>(pool_.dsn());
  pqxx::nontransaction tx(*conn);
  tx.exec(PgPool::kDefaultSessionSetup);
  const bool got =
      tx.exec_params1(R"sql(SELECT pg_try_advisory_lock($1, $2))sql", kNodeLockClass, lock_key_)[0]
          .as<bool>();
  if (!got) {
    throw NodeConflict(fmt::format(
        "node id '{}' is in use by another running admin (advisory lock {}/{} is held); give each admin its "
        "own node_id",
        settings_.node_id, kNodeLockClass, lock_key_));
  }
  lock_conn_ = std::move(conn);
}

void NodeLease::Heartbeat() {
  const auto now = clock_.NowMs();
  pqxx::work tx(*lock_conn_);
  tx.exec_params(R"sql(
    INSERT INTO admin_node (node_id, lock_key, address, started_ms, heartbeat_ms, lease_until_ms)
    VALUES ($1, $2, $3, $4, $4, $5)
    ON CONFLICT (node_id) DO UPDATE SET lock_key = $2, address = $3, heartbeat_ms = $4, lease_until_ms = $5
  )sql",
                 settings_.node_id, lock_key_, settings_.address, now, now + settings_.lease.count());
  tx.commit();
}

void NodeLease::Start() {
  EnsureLock();
  Heartbeat();
  // Rows a previous run of this node left pending are ours again: send or misfire them now.
  std::vector<ClaimedFire> own;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    for (;;) {
      pqxx::work tx(conn);
      // A dead run's transaction may hold some of these rows until PostgreSQL notices it is gone.
      tx.exec(fmt::format("SET LOCAL lock_timeout = {}", settings_.lease.count()));
      auto batch = fire_log::ReOwn(tx, settings_.node_id, fire_log::Owner::kSelf, settings_.node_id,
                                   settings_.claim_batch);
      tx.commit();
      const bool more = static_cast<int>(batch.size()) == settings_.claim_batch;
      std::move(batch.begin(), batch.end(), std::back_inserter(own));
      if (!more) break;
    }
  });
  if (!own.empty()) {
    spdlog::info("node {}: taking back {} pending fire(s) from its previous run", settings_.node_id,
                 own.size());
    on_recovered_(std::move(own));
  }
  thread_ = std::jthread([this](const std::stop_token& st) { Loop(st); });
}

void NodeLease::Loop(const std::stop_token& stop) {
  while (clock_.WaitFor(settings_.heartbeat, stop))
    Tick();
}

void NodeLease::Tick() {
  std::lock_guard lock(tick_mu_);
  try {
    EnsureLock();
    Heartbeat();
    Recover();
    failures_.Success();
  } catch (const NodeConflict& e) {
    // The connection holding our lock broke and someone else holds it now: only possible if another
    // process uses our node id. Keep trying; log loudly.
    if (const auto n = failures_.Failure(clock_.SteadyNow())) {
      spdlog::error("{} ({} time(s) in a row)", e.what(), *n);
    }
  } catch (const std::exception& e) {
    lock_conn_.reset();
    if (const auto n = failures_.Failure(clock_.SteadyNow())) {
      spdlog::warn("node heartbeat failed ({} time(s) in a row), retrying: {}", *n, e.what());
    }
  }
}

void NodeLease::Recover() {
  const auto now = clock_.NowMs();
  std::vector<std::string> dead;
  {
    pqxx::read_transaction tx(*lock_conn_);
    for (const auto& r :
         tx.exec_params(R"sql(
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
                        settings_.node_id, now, now - settings_.lock_grace.count(), kNodeLockClass)) {
      dead.push_back(r["node_id"].as<std::string>());
    }
  }
  std::vector<ClaimedFire> recovered;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    auto take = [&](fire_log::Owner whose, const std::string& owner) {
      for (;;) {
        pqxx::work tx(conn);
        auto batch = fire_log::ReOwn(tx, settings_.node_id, whose, owner, settings_.claim_batch);
        tx.commit();
        const bool more = static_cast<int>(batch.size()) == settings_.claim_batch;
        std::move(batch.begin(), batch.end(), std::back_inserter(recovered));
        if (!more) break;
      }
    };
    take(fire_log::Owner::kHandedOver, "");
    for (const auto& node : dead) {
      take(fire_log::Owner::kDeadNode, node);
      // Forget nodes gone for a minute whose rows are all taken.
      pqxx::work tx(conn);
      tx.exec_params(R"sql(
        DELETE FROM admin_node n
         WHERE n.node_id = $1 AND n.lease_until_ms < $2
           AND NOT EXISTS (SELECT 1 FROM fire_open WHERE owner_node = $1 AND trigger_ms = 0)
      )sql",
                     node, now - 60'000);
      tx.commit();
    }
  });
  if (!recovered.empty()) {
    spdlog::info("node {}: re-owned {} pending fire(s) of {} dead node(s) / hand-overs", settings_.node_id,
                 recovered.size(), dead.size());
    on_recovered_(std::move(recovered));
  }
}

bool NodeLease::AnotherNodeAlive() {
  const auto now = clock_.NowMs();
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    return tx.exec_params1(R"sql(
             SELECT count(*) FROM admin_node
              WHERE node_id <> $1 AND lease_until_ms >= $2 AND heartbeat_ms >= $3
           )sql",
                           settings_.node_id, now, now - settings_.lock_grace.count())[0]
               .as<int>() > 0;
  });
}

std::size_t NodeLease::HandOver(std::span<const std::int64_t> log_ids) {
  Stop();
  std::lock_guard lock(tick_mu_);
  std::size_t n = 0;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    n = fire_log::HandOver(tx, settings_.node_id, log_ids);
    tx.exec_params(R"sql(DELETE FROM admin_node WHERE node_id = $1)sql", settings_.node_id);
    tx.commit();
  });
  lock_conn_.reset();  // releases the advisory lock
  return n;
}

}  // namespace cronwheel::admin
