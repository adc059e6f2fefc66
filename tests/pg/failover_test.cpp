// What the admin's store does when its PostgreSQL primary dies or fails over (docs/architecture.md, "When the
// primary dies"): idle connections to a server that closed them are dropped before they are lent, a
// connection that meets a read-only server is discarded, and a COMMIT whose acknowledgement is lost is
// reported as CommitOutcomeUnknown and resolved from the database: the scan's fires read back, a claim
// released by its stamp. The lost acknowledgement is real: a TCP proxy cuts the connection right after
// forwarding COMMIT, which PostgreSQL then carries out (cwtest/tcp_proxy.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <pqxx/pqxx>
#include <thread>

#include "admin/store/fire_log.hpp"
#include "admin/store/pg_lease_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "cwtest/fake_clock.hpp"
#include "cwtest/tcp_proxy.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

class FailoverPg : public cwtest::PgFixture {
 protected:
  // The test database's DSN with its host and port replaced by the proxy's, TLS off (the proxy reads the
  // protocol's bytes).
  std::string ThroughProxy(const cwtest::TcpProxy& proxy) {
    std::string host;
    std::string port;
    {
      pqxx::connection conn(db_dsn());
      host = conn.hostname();
      port = conn.port();
    }
    std::string dsn = db_dsn();
    const auto at = dsn.find(host + ":" + port);
    EXPECT_NE(at, std::string::npos) << dsn;
    dsn.replace(at, host.size() + 1 + port.size(), fmt::format("127.0.0.1:{}", proxy.port()));
    return dsn + (dsn.find('?') == std::string::npos ? "?" : "&") + "sslmode=disable";
  }
  std::string db_dsn() { return pool_->dsn(); }
  int UpstreamPort() {
    pqxx::connection conn(db_dsn());
    return std::stoi(conn.port());
  }
  // A pool through the proxy, its sessions named so that the test can see them end.
  std::unique_ptr<PgPool> ProxiedPool(const cwtest::TcpProxy& proxy) {
    return std::make_unique<PgPool>(PgPool::Settings{
        .dsn = ThroughProxy(proxy),
        .size = 2,
        .session_setup = std::string(PgPool::kDefaultSessionSetup) + "; SET application_name = 'proxied'"});
  }
  // Until the server has ended the cut sessions: it carries out the COMMIT it read, then meets the end of the
  // stream. The client learns nothing of it, and may look before the server has done either.
  void AwaitCutSessionsEnded() {
    for (int i = 0;
         i < 500 && Count("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'proxied' "
                          "AND state <> 'idle'") > 0;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  template <class Fn>
  auto WithTx(Fn fn) {
    auto conn = pool_->Acquire();
    pqxx::work tx(*conn);
    auto out = fn(tx);
    tx.commit();
    return out;
  }
  cwtest::FakeClock clock_{kT0};
};

TEST_F(FailoverPg, AnIdleConnectionWhoseServerEndedItIsDroppedBeforeItIsLentNotFailedOnUse) {
  PgPool pool({.dsn = db_dsn(), .size = 1});
  PgSchedulerStore store(pool);
  EXPECT_TRUE(store.OwnUnclaimed("node-a", 0, 10).empty());  // the pool's one connection, now idle
  // As a primary that died: its backends end and close their sockets while the connection sits idle.
  const auto ended = [&] {
    return Count(
               "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
               "pg_backend_pid() AND backend_type = 'client backend'") == 0;
  };
  Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
      "pg_backend_pid() AND application_name = 'cronwheel-admin'");
  for (int i = 0; i < 200 && !ended(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The next use opens a new connection instead of failing on the dead one.
  EXPECT_NO_THROW(EXPECT_TRUE(store.OwnUnclaimed("node-a", 0, 10).empty()));
  EXPECT_EQ(pool.stats().stale, 1u);
  EXPECT_EQ(pool.stats().discarded, 1u);
}

TEST_F(FailoverPg, AConnectionThatMeetsAReadOnlyServerIsDiscardedAsUnavailable) {
  AddJob(AddGroup(), "* * * * * ?", kT0 + 1000);
  // A server that cannot take writes (a standby, a primary being demoted) refuses with SQLSTATE 25006.
  PgPool pool({.dsn = db_dsn(), .size = 2, .session_setup = "SET default_transaction_read_only = on"});
  PgSchedulerStore store(pool);
  ScanPlanner planner;
  EXPECT_THROW(store.Scan("node-a", 10, clock_, planner), DatabaseUnavailable);
  EXPECT_EQ(pool.stats().discarded, 1u);
  EXPECT_EQ(pool.stats().open, 0);
  EXPECT_EQ(pool.stats().commits_in_doubt, 0u);
}

TEST_F(FailoverPg,
       ACommitWhoseAcknowledgementIsLostIsInDoubtAndAScanItMadeIsReadBackAsThisAdminsUnclaimedFires) {
  const int job = AddJob(AddGroup(), "* * * * * ?", kT0 + 1000);
  cwtest::TcpProxy proxy("127.0.0.1", UpstreamPort());
  const auto pool = ProxiedPool(proxy);
  PgSchedulerStore store(*pool);
  ScanPlanner planner;
  proxy.CutAfter(cwtest::TcpProxy::kPgCommit);
  EXPECT_THROW(store.Scan("node-a", 10, clock_, planner), CommitOutcomeUnknown);
  EXPECT_EQ(proxy.cuts(), 1);
  AwaitCutSessionsEnded();
  EXPECT_EQ(store.CommitsInDoubt(), 1u);
  // PostgreSQL carried the COMMIT out: the fires and the job's advance are there.
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job)), 5);
  EXPECT_EQ(NextFire(job), kT0 + 6000);
  // The admin holds none of them in memory; reading back finds exactly them, in log id order, page by page.
  const auto first = store.OwnUnclaimed("node-a", 0, 3);
  ASSERT_EQ(first.size(), 3u);
  const auto rest = store.OwnUnclaimed("node-a", first.back().log_id, 3);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_LT(first.back().log_id, rest.front().log_id);
  EXPECT_EQ(rest.back().scheduled_ms, kT0 + 5000);
  EXPECT_TRUE(store.OwnUnclaimed("node-b", 0, 10).empty()) << "another admin's are not this one's";
  // Claimed, a fire is no longer "unclaimed"; the next scan writes no instant twice.
  ASSERT_EQ(store.ClaimForDispatch("node-a", LogIds(first), kT0 + 900, {}).size(), 3u);
  EXPECT_EQ(store.OwnUnclaimed("node-a", 0, 10).size(), 2u);
  EXPECT_TRUE(store.Scan("node-a", 10, clock_, planner).fires.empty());
}

TEST_F(FailoverPg, AClaimWhoseAcknowledgementIsLostIsReleasedByItsStampAndOnlyByIt) {
  AddJob(AddGroup(), "* * * * * ?", kT0 + 1000);
  cwtest::TcpProxy proxy("127.0.0.1", UpstreamPort());
  const auto pool = ProxiedPool(proxy);
  PgSchedulerStore store(*pool);
  ScanPlanner planner;
  const auto fires = store.Scan("node-a", 10, clock_, planner).fires;
  ASSERT_EQ(fires.size(), 5u);
  const std::vector<std::int64_t> ids{fires[0].log_id, fires[1].log_id};
  proxy.CutAfter(cwtest::TcpProxy::kPgCommit);
  EXPECT_THROW(store.ClaimForDispatch("node-a", ids, kT0 + 800, {}), CommitOutcomeUnknown);
  AwaitCutSessionsEnded();
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE dispatch_ms = {}", kT0 + 800)), 2)
      << "the claim was committed";
  // A plain claim finds them taken; another stamp releases nothing; the claim's own stamp releases both.
  EXPECT_TRUE(store.ClaimForDispatch("node-a", ids, kT0 + 1800, {}).empty());
  EXPECT_TRUE(
      store.ClaimForDispatch("node-a", ids, kT0 + 1801, std::vector<std::int64_t>{kT0 + 799}).empty());
  EXPECT_TRUE(store.ClaimForDispatch("node-b", ids, kT0 + 1802, std::vector<std::int64_t>{kT0 + 800}).empty())
      << "only the owner's own claims are released";
  const auto again = store.ClaimForDispatch("node-a", ids, kT0 + 1803, std::vector<std::int64_t>{kT0 + 800});
  EXPECT_EQ(LogIds(again), ids);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE dispatch_ms = {}", kT0 + 1803)), 2);
  // Once an executor accepted a fire, no stamp releases it.
  Exec(fmt::format("UPDATE fire_open SET trigger_ms = {} WHERE log_id = {}", kT0 + 1900, ids[0]));
  EXPECT_EQ(LogIds(store.ClaimForDispatch("node-a", ids, kT0 + 1904, std::vector<std::int64_t>{kT0 + 1803})),
            std::vector<std::int64_t>{ids[1]});
}

// A database restored from a backup shows the fires that were open at its restore point; whether each ran
// after that point is not known. after_restore closes those of admins that are not alive, unsent.
TEST_F(FailoverPg, AfterARestoreTheOpenFiresOfAdminsHoldingNoLockAreClosedUnsentAndALiveAdminsAreLeftAlone) {
  const int g = AddGroup();
  const int job = AddJob(g, "* * * * * ?", kT0 + 60'000);
  const auto now = kT0 + 600'000;  // ten minutes after the restore point
  Exec(fmt::format(
      "INSERT INTO admin_node (node_id, lock_key, address, started_ms, heartbeat_ms, lease_until_ms) VALUES "
      "('old-admin', 1, '', {0}, {0}, {1}), ('live-admin', 2, '', {2}, {2}, {3})",
      now - 5000, now + 5000, now, now + 10'000));
  // old-admin's lease still runs (a restore point seconds back) but no session holds its lock; live-admin's
  // lock is held, as a live admin's is.
  pqxx::connection live_session(db_dsn());
  {
    pqxx::nontransaction tx(live_session);
    tx.exec_params("SELECT pg_advisory_lock($1, 2)", kNodeLockClass);
  }
  const auto pending = AddFire(job, g, "CRON", kT0 + 1000, 0, 0, 0, "", 0, "old-admin");
  const auto claimed = AddFire(job, g, "RETRY", kT0 + 2000, 0, 0, 0, "", 0, "old-admin");
  Exec(fmt::format("UPDATE fire_open SET dispatch_ms = {} WHERE log_id = {}", kT0 + 1900, claimed));
  const auto running =
      AddFire(job, g, "CRON", kT0 + 3000, 200, 0, 0, "http://127.0.0.1:9/", kT0 + 3000, "old-admin");
  const auto handed_over = AddFire(job, g, "MANUAL", kT0 + 4000, 0, 0, 0, "", 0, "");
  const auto lives = AddFire(job, g, "CRON", now + 1000, 0, 0, 0, "", 0, "live-admin");
  const auto closed = WithTx([&](pqxx::work& tx) { return fire_log::CloseAfterRestore(tx, now); });
  EXPECT_EQ(closed.unsent, 3u);
  EXPECT_EQ(closed.running, 1u);
  const auto status = [&](std::int64_t id) {
    return Exec(fmt::format("SELECT status FROM job_log WHERE id = {}", id))[0][0].as<std::string>();
  };
  for (const auto id : {pending, claimed, handed_over})
    EXPECT_EQ(status(id), "SKIPPED") << "fire " << id;
  EXPECT_EQ(status(running), "FAILED");
  EXPECT_EQ(status(lives), "PENDING");
  EXPECT_EQ(Count("SELECT count(*) FROM fire_open"), 1) << "only the live admin's fire stays open";
  // The skipped ones wait for their MISFIRE alert; the running one is neither retried nor alarmed.
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_alarm WHERE log_id IN ({}, {}, {})", pending,
                              claimed, handed_over)),
            3);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_alarm WHERE log_id = {}", running)), 0);
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job_log WHERE id = {} AND alarm_status = 1 AND handle_msg LIKE "
                        "'result unknown: the database was restored%'",
                        running)),
      1);
  // Run again: nothing more to close.
  const auto again = WithTx([&](pqxx::work& tx) { return fire_log::CloseAfterRestore(tx, now); });
  EXPECT_EQ(again.unsent + again.running, 0u);
}

}  // namespace
