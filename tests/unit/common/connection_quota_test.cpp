// Which connections the HTTP server keeps (cronwheel/net/connection_quota.hpp), on made-up instants: a peer
// without credentials cannot use the connection limits against authenticated clients (security review 2,
// finding N1).
#include "cronwheel/net/connection_quota.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using cronwheel::net::ConnectionQuota;
using namespace std::chrono_literals;

const ConnectionQuota::Time kStart{std::chrono::hours(1000)};

// The ids admitted, in order; every one of them admitted (asserted).
std::vector<ConnectionQuota::Id> OpenMany(ConnectionQuota& quota, const std::string& address, int n,
                                          ConnectionQuota::Time& now) {
  std::vector<ConnectionQuota::Id> ids;
  for (int i = 0; i < n; ++i) {
    now += 1ms;
    const auto a = quota.Open(address, now);
    EXPECT_TRUE(a.admitted);
    ids.push_back(a.id);
  }
  return ids;
}

TEST(ConnectionQuota, N1_AnAddressOverItsUnauthenticatedShareLosesItsIdleLongestConnectionNotTheNewcomer) {
  ConnectionQuota quota({.max_connections = 100,
                         .max_authenticated_per_address = 10,
                         .max_unauthenticated = 50,
                         .max_unauthenticated_per_address = 4});
  auto now = kStart;
  const auto flood = OpenMany(quota, "127.0.0.1", 4, now);
  EXPECT_EQ(quota.CountsOf("127.0.0.1").unauthenticated, 4u);
  now += 1s;
  const auto fifth = quota.Open("127.0.0.1", now);
  ASSERT_TRUE(fifth.admitted)
      << "a newcomer is never refused for a cap an idle connection can make room under";
  ASSERT_TRUE(fifth.evicted);
  EXPECT_EQ(*fifth.evicted, flood[0]) << "the idle-longest one goes";
  EXPECT_EQ(quota.CountsOf("127.0.0.1").unauthenticated, 4u);
  quota.Close(flood[0]);  // the evicted socket's close comes later: it no longer counts
  EXPECT_EQ(quota.CountsOf("127.0.0.1").unauthenticated, 4u);
  // Another address is not touched by 127.0.0.1's flood.
  const auto other = quota.Open("127.0.0.2", now);
  EXPECT_TRUE(other.admitted);
  EXPECT_FALSE(other.evicted);
}

TEST(ConnectionQuota, N1_IdleConnectionsGoBeforeBusyOnesAndTheLongestInTheirStateFirst) {
  ConnectionQuota quota({.max_connections = 100,
                         .max_authenticated_per_address = 10,
                         .max_unauthenticated = 50,
                         .max_unauthenticated_per_address = 3});
  auto now = kStart;
  const auto ids = OpenMany(quota, "10.0.0.1", 3, now);
  now += 1s;
  quota.Busy(ids[0], now);  // the oldest is answering a request: it is kept while idle ones remain
  now += 1s;
  quota.Idle(ids[1], now);  // answered and kept: idle again, from now
  now += 1s;
  const auto first = quota.Open("10.0.0.1", now);
  ASSERT_TRUE(first.evicted);
  EXPECT_EQ(*first.evicted, ids[2]) << "idle since its open, longer than ids[1] since its answer";
  const auto second = quota.Open("10.0.0.1", now + 1ms);
  ASSERT_TRUE(second.evicted);
  EXPECT_EQ(*second.evicted, ids[1]);
  const auto third = quota.Open("10.0.0.1", now + 2ms);
  ASSERT_TRUE(third.evicted);
  EXPECT_EQ(*third.evicted, first.id) << "still an idle one (a newcomer) before the busy one";
  quota.Busy(third.id, now + 3ms);
  const auto fourth = quota.Open("10.0.0.1", now + 4ms);
  ASSERT_TRUE(fourth.evicted);
  EXPECT_EQ(*fourth.evicted, second.id) << "the last idle one";
  quota.Busy(fourth.id, now + 5ms);
  const auto last = quota.Open("10.0.0.1", now + 6ms);
  ASSERT_TRUE(last.evicted);
  EXPECT_EQ(*last.evicted, ids[0]) << "with none idle, the one busy the longest";
}

TEST(ConnectionQuota, N1_AuthenticatedConnectionsAreCountedApartAndNeverClosedToMakeRoom) {
  ConnectionQuota quota({.max_connections = 100,
                         .max_authenticated_per_address = 5,
                         .max_unauthenticated = 50,
                         .max_unauthenticated_per_address = 8});
  auto now = kStart;
  // The executor's first connection comes while 127.0.0.1 floods: it gets in, then shows its token.
  OpenMany(quota, "127.0.0.1", 8, now);
  const auto executor = quota.Open("127.0.0.1", now + 1ms);
  ASSERT_TRUE(executor.admitted);
  EXPECT_TRUE(executor.evicted);
  EXPECT_TRUE(quota.Authenticate(executor.id));
  EXPECT_EQ(quota.CountsOf("127.0.0.1").authenticated, 1u);
  EXPECT_EQ(quota.CountsOf("127.0.0.1").unauthenticated, 7u);
  quota.Idle(executor.id, now);  // idle, and the oldest of all: still never chosen
  EXPECT_FALSE(quota.Open("127.0.0.1", now + 1ms).evicted) << "the executor's place is free again";
  for (int i = 0; i < 100; ++i) {
    const auto a = quota.Open("127.0.0.1", now + std::chrono::milliseconds(2 + i));
    ASSERT_TRUE(a.admitted);
    ASSERT_TRUE(a.evicted);
    ASSERT_NE(*a.evicted, executor.id);
  }
  EXPECT_EQ(quota.CountsOf("127.0.0.1").authenticated, 1u);
  EXPECT_EQ(quota.CountsOf("127.0.0.1").unauthenticated, 8u);
}

TEST(ConnectionQuota, N1_AConnectionPastItsAddressesAuthenticatedQuotaStaysUnauthenticated) {
  ConnectionQuota quota({.max_connections = 100,
                         .max_authenticated_per_address = 2,
                         .max_unauthenticated = 50,
                         .max_unauthenticated_per_address = 10});
  auto now = kStart;
  const auto ids = OpenMany(quota, "192.0.2.7", 3, now);
  EXPECT_TRUE(quota.Authenticate(ids[0]));
  EXPECT_TRUE(quota.Authenticate(ids[0])) << "again: no change";
  EXPECT_TRUE(quota.Authenticate(ids[1]));
  EXPECT_FALSE(quota.Authenticate(ids[2]));
  EXPECT_EQ(quota.CountsOf("192.0.2.7").authenticated, 2u);
  EXPECT_EQ(quota.CountsOf("192.0.2.7").unauthenticated, 1u);
  quota.Close(ids[0]);
  EXPECT_TRUE(quota.Authenticate(ids[2])) << "room again";
  EXPECT_FALSE(quota.Authenticate(12345)) << "an unknown id";
}

TEST(ConnectionQuota, N1_AtTheTotalCapsTheAddressHoldingTheMostUnauthenticatedConnectionsPays) {
  // The finding's arithmetic: 17 addresses of 256 filled the admin's 4,096. Scaled down: 5 addresses of 4
  // fill an unauthenticated total of 20, and a client from a sixth address still gets in.
  ConnectionQuota quota({.max_connections = 1000,
                         .max_authenticated_per_address = 10,
                         .max_unauthenticated = 20,
                         .max_unauthenticated_per_address = 4});
  auto now = kStart;
  for (int a = 1; a <= 5; ++a)
    OpenMany(quota, "10.0.0." + std::to_string(a), 4, now);
  const auto heavy = OpenMany(quota, "10.0.0.5", 1, now);  // still 4 there (it evicted its own oldest)
  EXPECT_EQ(quota.Total().unauthenticated, 20u);
  const auto client = quota.Open("198.51.100.1", now + 1ms);
  ASSERT_TRUE(client.admitted);
  ASSERT_TRUE(client.evicted);
  EXPECT_EQ(quota.Total().unauthenticated, 20u);
  // Every flooding address held 4: the one that sorts last paid, with its oldest.
  EXPECT_EQ(quota.CountsOf("10.0.0.5").unauthenticated, 3u);
  EXPECT_NE(*client.evicted, heavy[0]);
  // Now 10.0.0.1..4 hold 4 each and are the heaviest: the next newcomer takes from one of them.
  const auto next = quota.Open("198.51.100.2", now + 2ms);
  ASSERT_TRUE(next.evicted);
  EXPECT_EQ(quota.CountsOf("10.0.0.4").unauthenticated, 3u);
  EXPECT_EQ(quota.CountsOf("198.51.100.1").unauthenticated, 1u);
}

TEST(ConnectionQuota, N1_WhenEveryOpenConnectionIsAuthenticatedANewOneIsRefused) {
  ConnectionQuota quota({.max_connections = 3,
                         .max_authenticated_per_address = 10,
                         .max_unauthenticated = 3,
                         .max_unauthenticated_per_address = 3});
  auto now = kStart;
  const auto ids = OpenMany(quota, "127.0.0.1", 3, now);
  EXPECT_TRUE(quota.Authenticate(ids[0]));
  EXPECT_TRUE(quota.Authenticate(ids[1]));
  // One unauthenticated left: at the total cap, it makes room.
  const auto a = quota.Open("127.0.0.9", now + 1ms);
  ASSERT_TRUE(a.admitted);
  EXPECT_EQ(a.evicted, ids[2]);
  EXPECT_TRUE(quota.Authenticate(a.id));
  const auto refused = quota.Open("127.0.0.9", now + 2ms);
  EXPECT_FALSE(refused.admitted);
  EXPECT_FALSE(refused.evicted);
  EXPECT_EQ(quota.open(), 3u);
  quota.Close(ids[0]);
  EXPECT_TRUE(quota.Open("127.0.0.9", now + 3ms).admitted);
}

TEST(ConnectionQuota, AClosedConnectionIsForgottenAndItsAddressWithIt) {
  ConnectionQuota quota({});
  auto now = kStart;
  const auto ids = OpenMany(quota, "::1", 2, now);
  EXPECT_TRUE(quota.Authenticate(ids[1]));
  quota.Close(ids[0]);
  quota.Close(ids[1]);
  quota.Close(ids[1]);  // twice: ignored
  EXPECT_EQ(quota.open(), 0u);
  EXPECT_EQ(quota.Total().authenticated, 0u);
  EXPECT_EQ(quota.Total().unauthenticated, 0u);
  EXPECT_EQ(quota.CountsOf("::1").authenticated, 0u);
  EXPECT_EQ(quota.CountsOf("::1").unauthenticated, 0u);
  quota.Idle(ids[0], now);  // a closed id: ignored
  quota.Busy(ids[0], now);
  EXPECT_EQ(quota.open(), 0u);
}

}  // namespace
