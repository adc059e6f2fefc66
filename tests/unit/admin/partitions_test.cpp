// Schedule partitions as a pure function of the live admins (admin/include/admin/schedule/partitions.hpp):
// heartbeats at fake-clock instants decide who is live; the live admins decide who scans what.
#include "admin/schedule/partitions.hpp"

#include <gtest/gtest.h>

#include <set>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::admin;
using namespace std::chrono_literals;

constexpr std::int64_t kT0 = 1767225600000;
constexpr std::int64_t kGrace = 2500;

// Every partition exactly once across `nodes`, and shares differing by at most one.
void ExpectExactCover(int total, const std::vector<std::string>& nodes) {
  std::multiset<int> seen;
  std::size_t smallest = SIZE_MAX;
  std::size_t largest = 0;
  for (const auto& n : nodes) {
    const auto mine = AssignedPartitions(total, nodes, n);
    smallest = std::min(smallest, mine.size());
    largest = std::max(largest, mine.size());
    seen.insert(mine.begin(), mine.end());
  }
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(total));
  for (int p = 0; p < total; ++p)
    EXPECT_EQ(seen.count(p), 1U) << "partition " << p;
  EXPECT_LE(largest - smallest, 1U);
}

TEST(SchedulePartitions, OneAdminAloneScansThemAll) {
  EXPECT_EQ(AssignedPartitions(60, std::vector<std::string>{"a"}, "a").size(), 60U);
  // Before its first heartbeat an admin is not in the list yet: it still ranks as a member.
  EXPECT_EQ(AssignedPartitions(60, std::vector<std::string>{}, "a").size(), 60U);
}

TEST(SchedulePartitions, EveryPartitionHasExactlyOneAdminAndSharesAreEven) {
  for (const int total : {1, 7, 60, 64}) {
    for (const auto& nodes : std::vector<std::vector<std::string>>{
             {"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "b", "c", "d", "e", "f", "g"}}) {
      ExpectExactCover(total, nodes);
    }
  }
  EXPECT_EQ(AssignedPartitions(60, std::vector<std::string>{"a", "b", "c"}, "b").size(), 20U);
}

TEST(SchedulePartitions, AnAdminNotYetLiveRanksAsIfItWere) {
  // b has not heartbeaten yet: a and c see {a, c}; b sees {a, b, c}. b's share is what a and c give up once
  // they see it; meanwhile both views cover everything (SKIP LOCKED settles the overlap).
  const auto b = AssignedPartitions(60, std::vector<std::string>{"a", "c"}, "b");
  EXPECT_EQ(b, AssignedPartitions(60, std::vector<std::string>{"a", "b", "c"}, "b"));
}

TEST(SchedulePartitions, LivenessFollowsHeartbeatsAndLeasesOnTheClock) {
  cwtest::FakeClock clock(kT0);
  std::vector<NodeBeat> beats{{"a", clock.NowMs(), clock.NowMs() + 10'000},
                              {"b", clock.NowMs(), clock.NowMs() + 10'000}};
  EXPECT_EQ(LiveNodes(beats, clock.NowMs(), kGrace), (std::vector<std::string>{"a", "b"}));
  const auto a_share = AssignedPartitions(60, LiveNodes(beats, clock.NowMs(), kGrace), "a");
  EXPECT_EQ(a_share.size(), 30U);
  // b stops beating; a goes on. Within the grace b still counts, then a takes everything.
  for (int s = 1; s <= 3; ++s) {
    clock.Advance(1s);
    beats[0].heartbeat_ms = clock.NowMs();
    beats[0].lease_until_ms = clock.NowMs() + 10'000;
    const auto live = LiveNodes(beats, clock.NowMs(), kGrace);
    const auto share = AssignedPartitions(60, live, "a");
    if (s <= 2) {
      EXPECT_EQ(share, a_share) << "at " << s << " s b is within the grace";
    } else {
      EXPECT_EQ(live, std::vector<std::string>{"a"});
      EXPECT_EQ(share.size(), 60U) << "b's partitions move to a once b is no longer live";
    }
  }
  // An expired lease ends liveness however recent the heartbeat.
  beats[0].lease_until_ms = clock.NowMs() - 1;
  EXPECT_TRUE(LiveNodes(beats, clock.NowMs(), kGrace).empty());
}

TEST(SchedulePartitions, AJobBelongsToOnePartitionByItsId) {
  EXPECT_EQ(PartitionOf(61, 60), 1);
  EXPECT_EQ(PartitionOf(60, 60), 0);
  EXPECT_EQ(PartitionOf(5, 1), 0);
}

}  // namespace
