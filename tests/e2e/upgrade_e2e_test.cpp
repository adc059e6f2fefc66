// A rolling upgrade, end to end (issue 45; docs/operations.md, "Upgrades"): the previous release's admin
// (CRONWHEEL_PREVIOUS_ADMIN_BIN, built by `scripts/test --upgrade` from the commit in .ci/previous-release)
// schedules 50 every-second jobs on an XXL-JOB-protocol executor that does not de-duplicate log ids; this
// release's admin starts beside it on the same database and applies its migrations while the old one runs;
// then the old one stops (SIGTERM: it hands its fires over) and the new one carries on alone. No instant
// may be missed or run twice. An old admin started again on the upgraded database refuses to start and says
// how to go back.
//
// Label `previous`, not run by CI: building the previous release's admin costs a second build of the admin
// (several minutes on two cores), beyond CI's budget. `scripts/test --upgrade` builds it and runs this test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <thread>

#include "cluster.hpp"
#include "xxl_stub_process.hpp"

namespace {

using namespace std::chrono_literals;
using cwtest::Cluster;
using cwtest::XxlStub;

constexpr int kJobs = 50;

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

std::string PreviousAdmin() {
  const char* bin = std::getenv("CRONWHEEL_PREVIOUS_ADMIN_BIN");  // NOLINT(concurrency-mt-unsafe)
  if (bin == nullptr || *bin == '\0') {
    throw std::runtime_error(
        "CRONWHEEL_PREVIOUS_ADMIN_BIN is not set: run `scripts/test --upgrade`, which builds the previous "
        "release's admin");
  }
  return bin;
}

TEST(UpgradeE2E, APreviousReleasesAdminAndThisOneShareADatabaseDuringARollingUpgrade) {
  const auto previous = PreviousAdmin();
  // Admin 1 runs the previous release from the start; admin 2, this release, starts later.
  Cluster c({.admins = 2, .executors = 0, .admin_program = {{0, previous}}, .admins_at_start = 1});
  const auto before = c.Scalar("SELECT max(version) FROM schema_migrations");
  // Registers with both (the second answers once it runs); a thread for each connection two admins may keep.
  XxlStub stub(c, "stub", {.threads = 2 * 32});
  const int group = c.AddGroup();
  const auto start = (Cluster::NowMs() / 1000 + 3) * 1000;
  std::vector<int> jobs;
  jobs.reserve(kJobs);
  for (int i = 0; i < kJobs; ++i)
    jobs.push_back(c.AddJob(group, "* * * * * ?", "FIRST", "DO_NOTHING", "stubHandler", start - 1));

  SleepUntil(start + 8500);
  c.StartLateAdmin(1);  // this release: migrates beside the running previous one
  const auto after = c.Scalar("SELECT max(version) FROM schema_migrations");
  std::printf("[upgrade] schema %lld -> %lld while the previous release's admin ran\n",
              static_cast<long long>(before), static_cast<long long>(after));
  SleepUntil(Cluster::NowMs() + 10'000);
  EXPECT_TRUE(c.admin(0).running()) << "the previous release's admin kept running on the new schema";
  const auto handover_ms = Cluster::NowMs();
  c.admin(0).Stop(10s);  // SIGTERM: it hands its unsent fires over
  const auto end = ((handover_ms + 10'000) / 1000) * 1000;
  SleepUntil(end + 1500);

  // The old admin started again on the upgraded database refuses, saying how to go back.
  c.admin(0).Restart();
  const auto rc = c.admin(0).Wait(30s);
  ASSERT_TRUE(rc.has_value()) << "the previous release's admin started on the upgraded database";
  EXPECT_NE(*rc, 0);
  EXPECT_NE(c.admin(0).Output().find("newer than this admin"), std::string::npos) << c.admin(0).LogTail();

  std::map<std::int64_t, int> received;
  for (const auto& r : stub.Runs()) {
    if (r.outcome == "accepted") ++received[r.log_id];
  }
  std::map<std::pair<int, std::int64_t>, int> runs;
  for (const auto& row :
       c.Exec(fmt::format("SELECT id, job_id, scheduled_ms FROM job_log WHERE trigger_type = "
                          "'CRON' AND NOT skipped AND scheduled_ms BETWEEN {} AND {}",
                          start, end))) {
    runs[{row[1].as<int>(), row[2].as<std::int64_t>()}] += received[row[0].as<std::int64_t>()];
  }
  int once = 0;
  for (const int job : jobs) {
    for (auto t = start; t <= end; t += 1000) {
      const int n = runs.count({job, t}) ? runs.at({job, t}) : 0;
      EXPECT_EQ(n, 1) << "job " << job << " instant " << t - start << " ms after the start";
      once += n == 1 ? 1 : 0;
    }
  }
  std::printf("[upgrade] %d of %d instants received once across the upgrade\n", once,
              kJobs * static_cast<int>((end - start) / 1000 + 1));
}

}  // namespace
