// NodeLease's rounds (schedule/node_lease.hpp) on a fake clock and an in-memory LeaseStore: what a start,
// a tick and a hand-over ask of the store, and what reaches the scheduler. The SQL of PgLeaseStore (the
// advisory lock, the dead-node query, the re-owning) is checked by the pg tests (SchedulerStorePg).
#include "admin/schedule/node_lease.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::admin;
using std::chrono::milliseconds;

constexpr std::int64_t kT0 = 1767225600000;
const auto kManual = milliseconds(3'600'000);  // the tests tick the lease themselves

// Pending fires by owner ("" = handed over); nodes with their lease and heartbeat; one lock per node id.
class MemoryLeaseStore final : public LeaseStore {
 public:
  struct Node {
    std::int64_t heartbeat_ms = 0;
    std::int64_t lease_until_ms = 0;
    bool locked = false;
  };
  std::map<std::string, std::vector<ClaimedFire>> pending;
  std::map<std::string, Node> nodes;
  std::vector<int> take_limits;  // the limit of each TakeFires call
  bool broken = false;

  void HoldLock(const std::string& node_id, int /*lock_key*/) override {
    Fail();
    if (holder_ == node_id) return;
    if (nodes[node_id].locked) throw NodeConflict("node id '" + node_id + "' is in use");
    nodes[node_id].locked = true;
    holder_ = node_id;
  }
  void ReleaseLock() override {
    if (auto it = nodes.find(holder_); it != nodes.end()) it->second.locked = false;
    holder_.clear();
  }
  void Heartbeat(const std::string& node_id, int, const std::string&, std::int64_t now_ms,
                 std::int64_t lease_until_ms) override {
    Fail();
    nodes[node_id].heartbeat_ms = now_ms;
    nodes[node_id].lease_until_ms = lease_until_ms;
  }
  std::vector<std::string> DeadNodes(const std::string& node_id, std::int64_t now_ms,
                                     std::int64_t heartbeat_before_ms) override {
    std::vector<std::string> dead;
    for (const auto& [id, n] : nodes) {
      if (id != node_id &&
          (n.lease_until_ms < now_ms || (!n.locked && n.heartbeat_ms < heartbeat_before_ms))) {
        dead.push_back(id);
      }
    }
    return dead;
  }
  std::vector<ClaimedFire> TakeFires(const std::string& node_id, FireOwner whose, const std::string& owner,
                                     int limit, std::int64_t) override {
    take_limits.push_back(limit);
    auto& from = pending[whose == FireOwner::kHandedOver ? "" : whose == FireOwner::kSelf ? node_id : owner];
    const auto n = std::min<std::size_t>(from.size(), static_cast<std::size_t>(limit));
    std::vector<ClaimedFire> taken(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
    from.erase(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
    return taken;
  }
  void ForgetNode(const std::string& node, std::int64_t lease_before_ms) override {
    if (nodes[node].lease_until_ms < lease_before_ms && pending[node].empty()) nodes.erase(node);
  }
  bool AnotherNodeAlive(const std::string& node_id, std::int64_t now_ms,
                        std::int64_t heartbeat_after_ms) override {
    for (const auto& [id, n] : nodes)
      if (id != node_id && n.lease_until_ms >= now_ms && n.heartbeat_ms >= heartbeat_after_ms) return true;
    return false;
  }
  std::size_t HandOver(const std::string& node_id, std::span<const std::int64_t> log_ids) override {
    auto& mine = pending[node_id];
    auto& handed = pending[""];
    const auto n = mine.size() + log_ids.size();
    handed.insert(handed.end(), mine.begin(), mine.end());
    for (const auto id : log_ids)
      handed.push_back({.log_id = id});
    mine.clear();
    nodes.erase(node_id);
    ReleaseLock();
    return n;
  }

 private:
  void Fail() const {
    if (broken) throw std::runtime_error("the database is unavailable");
  }
  std::string holder_;
};

std::vector<ClaimedFire> Fires(std::int64_t first, int n) {
  std::vector<ClaimedFire> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out.push_back({.log_id = first + i});
  return out;
}

class NodeLeaseTest : public ::testing::Test {
 protected:
  NodeLease::OnRecovered Into(std::vector<ClaimedFire>& sink) {
    return [&sink](std::vector<ClaimedFire> fires) { sink.insert(sink.end(), fires.begin(), fires.end()); };
  }
  cwtest::FakeClock clock_{kT0};
  MemoryLeaseStore store_;
};

TEST_F(NodeLeaseTest, AStartTakesTheLockWritesTheRowAndTakesBackItsOwnFiresBatchByBatch) {
  store_.pending["admin-a"] = Fires(1, 5);
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual, .claim_batch = 2}, clock_, store_,
                  Into(recovered));
  lease.Start();
  EXPECT_EQ(recovered.size(), 5u);
  EXPECT_THAT(store_.take_limits, ::testing::ElementsAre(2, 2, 2))
      << "batches of 2 until one comes back short";
  EXPECT_TRUE(store_.nodes["admin-a"].locked);
  EXPECT_EQ(store_.nodes["admin-a"].lease_until_ms, kT0 + 10'000);
  // A second process with the same node id has a store (a lock connection) of its own.
  MemoryLeaseStore other = store_;
  NodeLease elsewhere({.node_id = "admin-a", .heartbeat = kManual}, clock_, other, Into(recovered));
  other.ReleaseLock();
  other.nodes["admin-a"].locked = true;  // held by the first process
  EXPECT_THROW(elsewhere.Start(), NodeConflict);
}

TEST_F(NodeLeaseTest, ATickTakesHandedOverFiresAndADeadNodesThenForgetsItOnceItIsGoneForAMinute) {
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual}, clock_, store_, Into(recovered));
  lease.Start();
  clock_.Advance(milliseconds(10'000));  // A has been in contact for a lease: it judges its peers
  const auto t = kT0 + 10'000;
  store_.nodes["admin-b"] = {.heartbeat_ms = t, .lease_until_ms = t + 10'000, .locked = true};
  store_.pending["admin-b"] = Fires(10, 3);
  store_.pending[""] = Fires(20, 2);
  lease.Tick();
  EXPECT_EQ(recovered.size(), 2u) << "B holds its lock and its lease runs: only the handed-over fires";
  EXPECT_TRUE(lease.AnotherNodeAlive());
  store_.nodes["admin-b"].locked = false;  // B died: PostgreSQL dropped its lock
  clock_.Advance(milliseconds(2000));
  lease.Tick();
  EXPECT_EQ(recovered.size(), 2u) << "within the lock grace (2.5 s) a blip is not a death";
  clock_.Advance(milliseconds(1000));
  lease.Tick();
  EXPECT_EQ(recovered.size(), 5u);
  EXPECT_FALSE(lease.AnotherNodeAlive());
  EXPECT_TRUE(store_.nodes.contains("admin-b")) << "forgotten only once its lease ended a minute ago";
  clock_.Advance(milliseconds(70'000));
  lease.Tick();
  EXPECT_FALSE(store_.nodes.contains("admin-b"));
}

// PostgreSQL down for longer than the lease, then restarted: every lease ended and every lock is gone. A node
// back first must not declare its live peers dead (it would send again the fires they are sending); it
// judges them only once it has been in contact for a lease, by when a live peer has come back too.
TEST_F(NodeLeaseTest, AfterADatabaseOutageANodeJudgesItsPeersOnlyOnceItHasBeenBackForALease) {
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual}, clock_, store_, Into(recovered));
  lease.Start();
  clock_.Advance(milliseconds(10'000));
  lease.Tick();
  // B, alive, with fires it is about to send.
  const auto b_alive = [&] {
    store_.nodes["admin-b"] = {
        .heartbeat_ms = clock_.NowMs(), .lease_until_ms = clock_.NowMs() + 10'000, .locked = true};
  };
  b_alive();
  store_.pending["admin-b"] = Fires(10, 3);
  // The outage: 12 s of failed rounds; the restart drops B's lock.
  store_.broken = true;
  for (int s = 0; s < 12; ++s) {
    clock_.Advance(milliseconds(1000));
    lease.Tick();
  }
  store_.nodes["admin-b"].locked = false;
  store_.broken = false;
  store_.pending[""] = Fires(20, 2);  // handed over by a node that stopped meanwhile
  clock_.Advance(milliseconds(1000));
  lease.Tick();
  EXPECT_EQ(recovered.size(), 2u) << "back first, A takes handed-over fires at once, but none of B's, whose "
                                     "lease ended and whose lock is free";
  clock_.Advance(milliseconds(1000));
  b_alive();  // B's next round: its lock again, its lease renewed
  for (int s = 0; s < 9; ++s) {
    lease.Tick();
    EXPECT_EQ(recovered.size(), 2u);
    clock_.Advance(milliseconds(1000));
    b_alive();
  }
  lease.Tick();
  EXPECT_EQ(recovered.size(), 2u) << "A judges B now, and B is alive";
  EXPECT_TRUE(lease.AnotherNodeAlive());
  // B really dies: its lock goes; past the grace A takes its fires.
  store_.nodes["admin-b"].locked = false;
  clock_.Advance(milliseconds(3000));
  lease.Tick();
  EXPECT_EQ(recovered.size(), 5u);
}

// A node that has just started waits a lease too before it declares a peer dead; at once when its Settings
// say so.
TEST_F(NodeLeaseTest, ANodeJustStartedJudgesItsPeersAfterALeaseOrAtOnceIfConfigured) {
  store_.nodes["admin-b"] = {.heartbeat_ms = kT0 - 20'000, .lease_until_ms = kT0 - 10'000};
  store_.pending["admin-b"] = Fires(10, 3);
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual}, clock_, store_, Into(recovered));
  lease.Start();
  clock_.Advance(milliseconds(9'999));
  lease.Tick();
  EXPECT_TRUE(recovered.empty());
  clock_.Advance(milliseconds(1));
  lease.Tick();
  EXPECT_EQ(recovered.size(), 3u);

  MemoryLeaseStore other;
  other.nodes["admin-b"] = {.heartbeat_ms = kT0 - 20'000, .lease_until_ms = kT0 - 10'000};
  other.pending["admin-b"] = Fires(10, 3);
  std::vector<ClaimedFire> at_once;
  NodeLease eager({.node_id = "admin-c", .heartbeat = kManual, .judge_after = milliseconds(0)}, clock_, other,
                  Into(at_once));
  eager.Start();
  eager.Tick();
  EXPECT_EQ(at_once.size(), 3u);
}

TEST_F(NodeLeaseTest, AFailedRoundLetsTheLockGoAndTheNextRoundTakesItAgain) {
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual}, clock_, store_, Into(recovered));
  lease.Start();
  store_.broken = true;
  lease.Tick();  // logged, not thrown
  EXPECT_FALSE(store_.nodes["admin-a"].locked);
  store_.broken = false;
  clock_.Advance(milliseconds(1000));
  lease.Tick();
  EXPECT_TRUE(store_.nodes["admin-a"].locked);
  EXPECT_EQ(store_.nodes["admin-a"].heartbeat_ms, kT0 + 1000);
}

TEST_F(NodeLeaseTest, AHandOverGivesUpThePendingFiresAndTheRingsAndEndsTheNode) {
  std::vector<ClaimedFire> recovered;
  NodeLease lease({.node_id = "admin-a", .heartbeat = kManual}, clock_, store_, Into(recovered));
  lease.Start();
  store_.pending["admin-a"] = Fires(1, 3);
  const std::int64_t in_ring[] = {100, 101};
  EXPECT_EQ(lease.HandOver(in_ring), 5u);
  EXPECT_EQ(store_.pending[""].size(), 5u);
  EXPECT_FALSE(store_.nodes.contains("admin-a"));
}

}  // namespace
