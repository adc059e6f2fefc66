// The executor's heartbeat (registry_heartbeat.hpp) against a fake admin client on a fake clock: it announces
// runAt, measures its clock offset from a cronwheel admin's answer (its clock, against the midpoint of the
// round trip) and sends it at once with a second heartbeat, then with every later one; an XXL-JOB admin,
// which answers no clock, gets runAt only and nothing is measured.
#include "registry_heartbeat.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "cwtest/fake_clock.hpp"
#include "xxljob/protocol.hpp"

namespace {

using cronwheel::executor::AdminClient;
using cronwheel::executor::AdminReply;
using cronwheel::executor::RegistryHeartbeat;
constexpr std::int64_t kT0 = 1767225600000;

// Answers every call as accepted; a cronwheel admin adds its clock, `admin_behind_ms` behind the fake one.
// Each call takes `round_trip` on the fake clock.
class FakeAdmin final : public AdminClient {
 public:
  FakeAdmin(cwtest::FakeClock& clock, bool cronwheel, std::int64_t admin_behind_ms,
            std::chrono::milliseconds round_trip)
      : clock_(clock), cronwheel_(cronwheel), behind_(admin_behind_ms), round_trip_(round_trip) {}
  AdminReply Call(std::string_view api, const nlohmann::json& body) override {
    AdminReply r;
    r.ok = true;
    clock_.Advance(round_trip_ / 2);
    if (cronwheel_) r.content = {{cronwheel::xxljob::kRegistryClockField, clock_.NowMs() - behind_}};
    clock_.Advance(round_trip_ - round_trip_ / 2);
    std::lock_guard lock(mu_);
    if (api == "registry") bodies_.push_back(body);
    cv_.notify_all();
    return r;
  }
  [[nodiscard]] bool HasAdmins() const override { return true; }
  std::vector<nlohmann::json> AwaitBodies(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return bodies_.size() >= n; });
    return bodies_;
  }

 private:
  cwtest::FakeClock& clock_;
  bool cronwheel_;
  std::int64_t behind_;
  std::chrono::milliseconds round_trip_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> bodies_;
};

TEST(RegistryHeartbeat, ItMeasuresItsClockAgainstACronwheelAdminAndSendsTheOffsetAtOnce) {
  cwtest::FakeClock clock(kT0);
  FakeAdmin admin(clock, /*cronwheel=*/true, /*admin_behind_ms=*/25, std::chrono::milliseconds(6));
  RegistryHeartbeat beat({.app_name = "app", .address = "http://127.0.0.1:9999/"}, admin, clock);
  beat.Start();
  const auto bodies = admin.AwaitBodies(2);
  ASSERT_GE(bodies.size(), 2u);
  EXPECT_EQ(bodies[0].value("runAt", false), true);
  EXPECT_FALSE(bodies[0].contains("clockOffsetMs")) << "nothing measured before the first answer";
  // The admin read its clock at the midpoint of a 6 ms round trip, 25 ms behind ours.
  EXPECT_EQ(bodies[1].at("clockOffsetMs"), 25);
  EXPECT_EQ(bodies[1].at("clockErrorMs"), 4) << "half the round trip, rounded up, plus 1 ms";
  beat.Stop();
}

// NTP's clock filter, reduced (executor/src/clock_filter.hpp): the least error of the recent samples wins,
// aged by 15 ppm; a sample that contradicts older ones (a clock step) drops them; 8 are kept.
TEST(ClockFilter, ReportsTheTightestRecentSampleAndForgetsSamplesAClockStepMadeWrong) {
  using cronwheel::executor::ClockFilter;
  ClockFilter f;
  EXPECT_FALSE(f.Best(kT0).has_value());
  f.Add({.offset_ms = 20, .error_ms = 2, .at_ms = kT0});
  f.Add({.offset_ms = 25, .error_ms = 40, .at_ms = kT0 + 30'000});  // a slow exchange: loose, consistent
  auto best = f.Best(kT0 + 30'000);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->offset_ms, 20) << "the tight sample, not the latest";
  EXPECT_EQ(best->error_ms, 3) << "2 ms grown by 15 ppm of 30 s (0.45 ms), rounded up";
  // The clock stepped 100 ms: the new sample contradicts both older ones (neither 20 +- 3 nor 25 +- 41
  // reaches 120 +- 3), which go.
  f.Add({.offset_ms = 120, .error_ms = 3, .at_ms = kT0 + 60'000});
  best = f.Best(kT0 + 60'000);
  EXPECT_EQ(best->offset_ms, 120);
  EXPECT_EQ(best->error_ms, 3);
  for (int i = 1; i <= 8; ++i)
    f.Add({.offset_ms = 121, .error_ms = 10, .at_ms = kT0 + 60'000 + std::int64_t{i} * 30'000});
  EXPECT_EQ(f.Best(kT0 + 300'000)->error_ms, 10) << "the tight one was the oldest of 9: it went";
}

TEST(RegistryHeartbeat, AnXxlJobAdminGetsRunAtOnlyAndOneHeartbeat) {
  cwtest::FakeClock clock(kT0);
  FakeAdmin admin(clock, /*cronwheel=*/false, 0, std::chrono::milliseconds(2));
  RegistryHeartbeat beat({.app_name = "app", .address = "http://127.0.0.1:9999/"}, admin, clock);
  beat.Start();
  auto bodies = admin.AwaitBodies(1);
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_FALSE(bodies[0].contains("clockOffsetMs"));
  // The next heartbeat, 30 s (give or take 3 s) on: still nothing measured.
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(std::chrono::seconds(33));
  bodies = admin.AwaitBodies(2);
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_FALSE(bodies[1].contains("clockOffsetMs"));
  beat.Stop();
}

}  // namespace
