// The executor registry's rules (results/registry_service.hpp) on a fake clock and an in-memory
// RegistryStore: heartbeats stored normalised and renewed, the registration guard's refusals storing
// nothing, the 90 s expiry, and the group-token cache the executor API asks before it reads a body. The SQL
// of PgRegistryStore is checked by the pg tests (MonitorsPg.RegistrationsOlderThanNinetySecondsExpire, the
// ApiTest registry cases).
#include "admin/results/registry_service.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "cwtest/fake_clock.hpp"

namespace {

using namespace cronwheel::admin;

constexpr std::int64_t kT0 = 1767225600000;

class MemoryRegistryStore final : public RegistryStore {
 public:
  std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> rows;  // entry -> updated_ms
  std::map<std::string, std::string> group_tokens;                                 // app name -> token
  int token_reads = 0;
  std::optional<RegistryEntry> last;  // the last heartbeat's entry

  void Upsert(const RegistryEntry& e, std::int64_t now_ms) override {
    rows[{e.group, e.key, e.value}] = now_ms;
    last = e;
  }
  void Remove(const RegistryEntry& e) override { rows.erase({e.group, e.key, e.value}); }
  std::size_t RemoveNotRenewedSince(std::int64_t before_ms) override {
    return std::erase_if(rows, [&](const auto& r) { return r.second < before_ms; });
  }
  std::optional<std::string> GroupToken(const std::string& app_name) override {
    const auto it = group_tokens.find(app_name);
    if (it == group_tokens.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> GroupTokens() override {
    ++token_reads;
    std::vector<std::string> out;
    for (const auto& [app, token] : group_tokens)
      out.push_back(token);
    return out;
  }
};

class RegistryServiceTest : public ::testing::Test {
 protected:
  cwtest::FakeClock clock_{kT0};
  MemoryRegistryStore store_;
  RegistryService registry_{clock_, store_};
};

TEST_F(RegistryServiceTest, AHeartbeatIsStoredUnderItsNormalisedAddressAndRenewedByTheNext) {
  ASSERT_TRUE(registry_.Register({"EXECUTOR", "app", "http://127.0.0.1:9999"}));
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(registry_.Register({"EXECUTOR", "app", "http://127.0.0.1:9999/"}));  // the same executor
  ASSERT_EQ(store_.rows.size(), 1u);
  EXPECT_EQ(store_.rows.begin()->first, std::make_tuple("EXECUTOR", "app", "http://127.0.0.1:9999/"));
  EXPECT_EQ(store_.rows.begin()->second, kT0 + 30'000);
  registry_.Remove({"EXECUTOR", "app", "http://127.0.0.1:9999"});  // removal normalises too
  EXPECT_TRUE(store_.rows.empty());
}

TEST_F(RegistryServiceTest, AnAddressTheGuardRefusesIsNotStoredAndTheErrorNamesItAndTheSetting) {
  const auto r = registry_.Register({"EXECUTOR", "app", "http://169.254.169.254/"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kForbidden);
  EXPECT_NE(r.error().message.find("169.254.169.254"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("registry_deny"), std::string::npos) << r.error().message;
  EXPECT_TRUE(store_.rows.empty());
}

TEST_F(RegistryServiceTest, RegistrationsNotRenewedWithinNinetySecondsExpire) {
  ASSERT_TRUE(registry_.Register({"EXECUTOR", "app", "http://127.0.0.1:1/"}));
  clock_.Advance(std::chrono::seconds(60));
  ASSERT_TRUE(registry_.Register({"EXECUTOR", "app", "http://127.0.0.1:2/"}));
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(registry_.ExpireDead(), 0u);  // the first is exactly 90 s old: not yet dead
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(registry_.ExpireDead(), 1u);
  ASSERT_EQ(store_.rows.size(), 1u);
  EXPECT_EQ(std::get<2>(store_.rows.begin()->first), "http://127.0.0.1:2/");
}

TEST_F(RegistryServiceTest, KnownTokenCachesGroupTokensForASecondAndRereadsAtMostEveryHundredMsOnAMiss) {
  store_.group_tokens = {{"app-a", "token-a"}};
  EXPECT_TRUE(registry_.KnownToken("global", "global"));  // the global token needs no read
  EXPECT_EQ(store_.token_reads, 0);
  EXPECT_TRUE(registry_.KnownToken("token-a", "global"));
  EXPECT_EQ(store_.token_reads, 1);
  clock_.Advance(std::chrono::milliseconds(900));
  EXPECT_TRUE(registry_.KnownToken("token-a", "global"));  // cached
  EXPECT_FALSE(registry_.KnownToken("wrong", "global"));   // a miss 900 ms after the read: read again
  EXPECT_EQ(store_.token_reads, 2);
  for (int i = 0; i < 50; ++i) {  // a flood of wrong tokens within 100 ms: no further read
    clock_.Advance(std::chrono::milliseconds(1));
    EXPECT_FALSE(registry_.KnownToken("wrong", "global"));
  }
  EXPECT_EQ(store_.token_reads, 2);
  store_.group_tokens["app-b"] = "token-b";                 // a group gets a token of its own
  EXPECT_FALSE(registry_.KnownToken("token-b", "global"));  // 50 ms after the last read: not seen yet
  clock_.Advance(std::chrono::milliseconds(50));
  EXPECT_TRUE(registry_.KnownToken("token-b", "global"));  // 100 ms after it: read again, and found
  EXPECT_EQ(store_.token_reads, 3);
  clock_.Advance(std::chrono::milliseconds(1000));
  EXPECT_TRUE(registry_.KnownToken("token-a", "global"));  // a second later the cache is stale: read
  EXPECT_EQ(store_.token_reads, 4);
}

TEST_F(RegistryServiceTest, GroupTokenIsTheGroupsOwnOrNone) {
  store_.group_tokens = {{"app-a", "token-a"}};
  EXPECT_EQ(registry_.GroupToken("app-a"), "token-a");
  EXPECT_EQ(registry_.GroupToken("app-b"), std::nullopt);
}

}  // namespace

// Ahead-of-time dispatch: a cronwheel-executor's heartbeat announces runAt and, once measured, its clock
// offset and the error of that measurement; the admin records them with every heartbeat. An XXL-JOB
// executor's heartbeat carries neither.
TEST_F(RegistryServiceTest, AHeartbeatRecordsTheExecutorsRunAtAndItsMeasuredClock) {
  cronwheel::xxljob::RegistryParam p{"EXECUTOR", "app", "http://127.0.0.1:9999/"};
  p.run_at = true;
  ASSERT_TRUE(registry_.Register(p));
  ASSERT_TRUE(store_.last);
  EXPECT_TRUE(store_.last->run_at);
  EXPECT_FALSE(store_.last->clock_offset_ms) << "not measured yet";
  p.clock_offset_ms = -12;
  p.clock_error_ms = 2;
  ASSERT_TRUE(registry_.Register(p));
  EXPECT_EQ(store_.last->clock_offset_ms, -12);
  EXPECT_EQ(store_.last->clock_error_ms, 2);
  EXPECT_EQ(registry_.ClockMs(), kT0) << "what the answer tells the executor";
  ASSERT_TRUE(registry_.Register({"EXECUTOR", "app", "http://127.0.0.1:9998/"}));
  EXPECT_FALSE(store_.last->run_at);
  EXPECT_FALSE(store_.last->clock_offset_ms) << "an XXL-JOB executor sends no clock";
}
