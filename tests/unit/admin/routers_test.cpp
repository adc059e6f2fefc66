#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "admin/dispatch/route_strategies.hpp"
#include "admin/schedule/next_fire.hpp"

namespace {

using namespace cronwheel::admin;
namespace xxljob = cronwheel::xxljob;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;
const std::vector<std::string> kThree{"http://127.0.0.1:9997/", "http://127.0.0.1:9998/",
                                      "http://127.0.0.1:9999/"};
const std::string kNoToken;

RouteResult Route(Router& r, int job, const std::vector<std::string>& addresses, std::int64_t now = kT0) {
  return r.Route({job, addresses, kNoToken, now});
}

// Answers /beat and /idleBeat per address as configured; records the calls.
class FakeExecutors final : public ExecutorClient {
 public:
  std::set<std::string> beat_ok;
  std::set<std::string> idle_ok;
  std::vector<std::string> calls;
  RunReply Run(const std::string&, const std::string&, const xxljob::TriggerParam&) override {
    return {xxljob::Envelope::Success()};
  }
  xxljob::Envelope Beat(const std::string& a, const std::string&) override {
    calls.push_back("beat " + a);
    return beat_ok.contains(a) ? xxljob::Envelope::Success() : xxljob::Envelope::Fail("connection refused");
  }
  xxljob::Envelope IdleBeat(const std::string& a, const std::string&, int) override {
    calls.push_back("idleBeat " + a);
    return idle_ok.contains(a) ? xxljob::Envelope::Success()
                               : xxljob::Envelope::Fail("job thread is running or has trigger queue.");
  }
  xxljob::Envelope Kill(const std::string&, const std::string&, int) override {
    return xxljob::Envelope::Success();
  }
  xxljob::Envelope Log(const std::string&, const std::string&, const xxljob::LogParam&) override {
    return xxljob::Envelope::Success();
  }
  xxljob::Envelope Drain(const std::string&, const std::string&) override {
    return xxljob::Envelope::Success();
  }
  xxljob::Envelope Cancel(const std::string&, const std::string&, const xxljob::CancelParam&) override {
    return xxljob::Envelope::Success();
  }
};

TEST(Routers, XxlHashIsMd5BytesZeroToThreeLittleEndian) {
  // MD5("1") = c4ca4238a0b923820dcc509a6f75849b: bytes c4 ca 42 38 read little-endian = 0x3842cac4.
  EXPECT_EQ(XxlHash("1"), 0x3842cac4U);
  EXPECT_EQ(XxlHash("1"), 943901380U);
  // MD5("42") = a1d0c6e83f027327d8461063f4ac58a6: bytes a1 d0 c6 e8 -> 0xe8c6d0a1.
  EXPECT_EQ(XxlHash("42"), 0xe8c6d0a1U);
  EXPECT_EQ(XxlHash("SHARD-http://127.0.0.1:9999/-NODE-0"), 2087608106U);
}

TEST(Routers, ConsistentHashLandsWhereXxlJobWouldAndMovesLittleWhenAnExecutorLeaves) {
  // Expected addresses computed independently (Python hashlib over the same ring of 100 virtual nodes).
  const std::map<int, std::string> expected{{1, kThree[2]},    {2, kThree[2]},     {3, kThree[2]},
                                            {7, kThree[1]},    {42, kThree[0]},    {100, kThree[0]},
                                            {1000, kThree[1]}, {123456, kThree[1]}};
  ConsistentHashRouter r;
  for (const auto& [job, address] : expected)
    EXPECT_EQ(Route(r, job, kThree).address, address) << "job " << job;
  // Without :9999 only the jobs that were on it move.
  const std::vector<std::string> two{kThree[0], kThree[1]};
  const std::map<int, std::string> after{{1, kThree[0]},    {2, kThree[0]},     {3, kThree[0]},
                                         {7, kThree[1]},    {42, kThree[0]},    {100, kThree[0]},
                                         {1000, kThree[1]}, {123456, kThree[1]}};
  for (const auto& [job, address] : after)
    EXPECT_EQ(Route(r, job, two).address, address) << "job " << job;
}

TEST(Routers, FirstLastRandom) {
  FirstRouter first;
  LastRouter last;
  RandomRouter random;
  EXPECT_EQ(Route(first, 1, kThree).address, kThree[0]);
  EXPECT_EQ(Route(last, 1, kThree).address, kThree[2]);
  std::map<std::string, int> hits;
  for (int i = 0; i < 3000; ++i)
    ++hits[*Route(random, 1, kThree).address];
  for (const auto& a : kThree)
    EXPECT_GT(hits[a], 800) << a;  // about 1000 each
}

TEST(Routers, RoundCyclesPerJobFromARandomStart) {
  RoundRouter r;
  std::vector<std::string> seen;
  seen.reserve(6);
  for (int i = 0; i < 6; ++i)
    seen.push_back(*Route(r, 7, kThree).address);
  // Consecutive calls walk the list: i and i+3 are the same address, i and i+1 differ.
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i], seen[i + 3]);
    EXPECT_NE(seen[i], seen[i + 1]);
  }
  std::map<std::string, int> hits;
  for (int i = 0; i < 300; ++i)
    ++hits[*Route(r, 8, kThree).address];
  for (const auto& a : kThree)
    EXPECT_EQ(hits[a], 100) << a;
}

TEST(Routers, LeastFrequentlyUsedPicksTheLeastUsedAndForgetsGoneAddresses) {
  LeastFrequentlyUsedRouter r;
  std::map<std::string, int> hits;
  for (int i = 0; i < 30; ++i)
    ++hits[*Route(r, 1, kThree).address];
  // Counts start at random(0..2): after 30 picks every address has been used, within 2 of each other.
  for (const auto& a : kThree)
    EXPECT_GE(hits[a], 8) << a;
  // A new address starts low and is preferred until it has caught up.
  const std::vector<std::string> four{kThree[0], kThree[1], kThree[2], "http://127.0.0.1:9996/"};
  EXPECT_EQ(Route(r, 1, four).address, "http://127.0.0.1:9996/");
}

TEST(Routers, LeastRecentlyUsedRotatesThroughTheEldest) {
  LeastRecentlyUsedRouter r;
  EXPECT_EQ(Route(r, 1, kThree).address, kThree[0]);
  EXPECT_EQ(Route(r, 1, kThree).address, kThree[1]);
  EXPECT_EQ(Route(r, 1, kThree).address, kThree[2]);
  EXPECT_EQ(Route(r, 1, kThree).address, kThree[0]);
  // A gone address leaves; a new one joins at the end.
  const std::vector<std::string> changed{kThree[1], "http://127.0.0.1:9996/"};
  EXPECT_EQ(Route(r, 1, changed).address, kThree[1]);
  EXPECT_EQ(Route(r, 1, changed).address, "http://127.0.0.1:9996/");
}

TEST(Routers, StatefulRoutersForgetEveryDay) {
  LeastRecentlyUsedRouter r;
  EXPECT_EQ(Route(r, 1, kThree, kT0).address, kThree[0]);
  EXPECT_EQ(Route(r, 1, kThree, kT0 + 1000).address, kThree[1]);
  EXPECT_EQ(Route(r, 1, kThree, kT0 + 86'400'000).address, kThree[0]);  // cleared after 24 h
}

TEST(Routers, FailoverTakesTheFirstAddressWhoseBeatAnswers) {
  FakeExecutors executors;
  executors.beat_ok = {kThree[1], kThree[2]};
  ProbingRouter r(executors, ProbingRouter::Probe::kBeat);
  const auto result = Route(r, 1, kThree);
  EXPECT_EQ(result.address, kThree[1]);
  EXPECT_EQ(executors.calls, (std::vector<std::string>{"beat " + kThree[0], "beat " + kThree[1]}));
  EXPECT_THAT(result.message, HasSubstr("connection refused"));  // says what was tried and why
  executors.beat_ok.clear();
  const auto none = Route(r, 1, kThree);
  EXPECT_FALSE(none.address);
  EXPECT_THAT(none.message, HasSubstr("failed on every address"));
}

TEST(Routers, BusyoverTakesTheFirstIdleExecutor) {
  FakeExecutors executors;
  executors.idle_ok = {kThree[2]};
  ProbingRouter r(executors, ProbingRouter::Probe::kIdleBeat);
  const auto result = Route(r, 1, kThree);
  EXPECT_EQ(result.address, kThree[2]);
  EXPECT_THAT(result.message, HasSubstr("job thread is running"));
}

TEST(Routers, TheSetHasARouterForEveryStrategy) {
  FakeExecutors executors;
  RouterSet set(executors);
  for (auto s : {RouteStrategy::kFirst, RouteStrategy::kLast, RouteStrategy::kRound, RouteStrategy::kRandom,
                 RouteStrategy::kConsistentHash, RouteStrategy::kLeastFrequentlyUsed,
                 RouteStrategy::kLeastRecentlyUsed, RouteStrategy::kShardingBroadcast}) {
    EXPECT_TRUE(set.For(s).Route({1, kThree, kNoToken, kT0}).address) << ToString(s);
  }
}

TEST(RetryBackoff, DoublesPerAttemptUpToTheCap) {
  using std::chrono::milliseconds;
  EXPECT_EQ(RetryBackoff(10, 1, std::chrono::seconds(3600)), milliseconds(10'000));
  EXPECT_EQ(RetryBackoff(10, 2, std::chrono::seconds(3600)), milliseconds(20'000));
  EXPECT_EQ(RetryBackoff(10, 4, std::chrono::seconds(3600)), milliseconds(80'000));
  EXPECT_EQ(RetryBackoff(10, 30, std::chrono::seconds(3600)), milliseconds(3'600'000));
  EXPECT_EQ(RetryBackoff(0, 3, std::chrono::seconds(3600)), milliseconds(0));  // XXL-JOB: at once
}

}  // namespace
