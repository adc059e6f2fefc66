#include "admin/schedule/scan_planner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "admin/schedule/late_fires.hpp"
#include "cwtest/memory_scheduler_store.hpp"

namespace {

using namespace cronwheel::admin;
using cwtest::DueJobOf;
using cwtest::EverySecondJob;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

std::vector<std::int64_t> Instants(const ScanPlan& plan, int job_id) {
  std::vector<std::int64_t> out;
  for (const auto& f : plan.fires) {
    if (f.job_id == job_id) out.push_back(f.scheduled_ms);
  }
  return out;
}

TEST(ScanPlanner, DueWithinTheWindowGoesToTheRingAndAdvancesPastIt) {
  ScanPlanner planner;
  const DueJob job = EverySecondJob(1, kT0 + 2000);
  const auto plan = planner.Plan({&job, 1}, kT0 + 500);
  EXPECT_EQ(Instants(plan, 1), (std::vector<std::int64_t>{kT0 + 2000, kT0 + 3000, kT0 + 4000, kT0 + 5000}));
  ASSERT_EQ(plan.advances.size(), 1u);
  EXPECT_EQ(plan.advances[0].expected_next_ms, kT0 + 2000);
  EXPECT_EQ(plan.advances[0].next_fire_ms, kT0 + 6000);  // first instant beyond now + 5 s
  EXPECT_EQ(plan.advances[0].last_fire_ms, kT0 + 5000);
  EXPECT_FALSE(plan.advances[0].stop);
  for (const auto& f : plan.fires)
    EXPECT_EQ(f.type, TriggerType::kCron);
}

TEST(ScanPlanner, ALateScanWritesEveryInstantWithinTheThreshold) {
  // XXL-JOB fires once and skips the rest when up to 5 s late; each instant is kept here.
  ScanPlanner planner;
  const DueJob job = EverySecondJob(1, kT0);
  const auto plan = planner.Plan({&job, 1}, kT0 + 4000);
  const auto instants = Instants(plan, 1);
  ASSERT_EQ(instants.size(), 10u);  // T0 .. T0+9000
  EXPECT_EQ(instants.front(), kT0);
  EXPECT_EQ(instants.back(), kT0 + 9000);
  for (const auto& f : plan.fires)
    EXPECT_FALSE(f.skipped);
}

TEST(ScanPlanner, MisfireDoNothingRecordsOneSkippedRowThenResumes) {
  ScanPlanner planner;
  const DueJob job = EverySecondJob(1, kT0);
  const auto now = kT0 + 20'000;
  const auto plan = planner.Plan({&job, 1}, now);
  ASSERT_FALSE(plan.fires.empty());
  const auto& misfire = plan.fires.front();
  EXPECT_EQ(misfire.type, TriggerType::kMisfire);
  EXPECT_TRUE(misfire.skipped);
  EXPECT_EQ(misfire.scheduled_ms, kT0);
  // Instants T0 .. T0+14s are more than 5 s late: 15 of them.
  EXPECT_THAT(misfire.note, HasSubstr("15 fire(s)"));
  EXPECT_THAT(misfire.note, HasSubstr("DO_NOTHING"));
  // Then every instant from now - 5 s on is written as usual.
  std::vector<std::int64_t> rest;
  for (std::size_t i = 1; i < plan.fires.size(); ++i) {
    EXPECT_EQ(plan.fires[i].type, TriggerType::kCron);
    rest.push_back(plan.fires[i].scheduled_ms);
  }
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front(), now - 5000);
  EXPECT_EQ(rest.back(), now + 5000);
}

TEST(ScanPlanner, MisfireFireOnceNowFiresOnce) {
  ScanPlanner planner;
  const DueJob job = EverySecondJob(1, kT0, MisfireStrategy::kFireOnceNow);
  const auto plan = planner.Plan({&job, 1}, kT0 + 60'000);
  const auto& misfire = plan.fires.front();
  EXPECT_EQ(misfire.type, TriggerType::kMisfire);
  EXPECT_FALSE(misfire.skipped);
  EXPECT_THAT(misfire.note, HasSubstr("FIRE_ONCE_NOW"));
  EXPECT_EQ(std::count_if(plan.fires.begin(), plan.fires.end(),
                          [](const PlannedFire& f) { return f.type == TriggerType::kMisfire; }),
            1);
}

TEST(ScanPlanner, CountingMissedInstantsIsBounded) {
  ScanPlanner planner({.max_missed_count = 100});
  const DueJob job = EverySecondJob(1, kT0);
  const auto plan = planner.Plan({&job, 1}, kT0 + 86'400'000);  // a day late
  EXPECT_THAT(plan.fires.front().note, HasSubstr("more than 100"));
  EXPECT_EQ(plan.advances[0].next_fire_ms, kT0 + 86'400'000 + 6000);
}

TEST(ScanPlanner, JobThatNeverFiresAgainIsStoppedWithAReason) {
  ScanPlanner planner;
  DueJob job = DueJobOf(7, "CRON", "0 0 0 1 1 ? 2026", kT0);
  const auto plan = planner.Plan({&job, 1}, kT0 + 100);
  EXPECT_EQ(Instants(plan, 7), std::vector<std::int64_t>{kT0});
  ASSERT_EQ(plan.advances.size(), 1u);
  EXPECT_TRUE(plan.advances[0].stop);
  EXPECT_THAT(plan.advances[0].stop_reason, HasSubstr("no fire after 2026-01-01T00:00:00Z"));
}

TEST(ScanPlanner, InvalidScheduleStopsTheJobNamingTheField) {
  ScanPlanner planner;
  DueJob job = EverySecondJob(3, kT0);
  job.time_zone = "Mars/Olympus_Mons";
  const auto plan = planner.Plan({&job, 1}, kT0);
  EXPECT_TRUE(plan.fires.empty());
  ASSERT_EQ(plan.advances.size(), 1u);
  EXPECT_TRUE(plan.advances[0].stop);
  EXPECT_THAT(plan.advances[0].stop_reason, HasSubstr("time_zone"));
}

TEST(ScanPlanner, FixRateWritesEachInstantAndFixDelayWaitsForCompletion) {
  ScanPlanner planner;
  const std::vector<DueJob> jobs{DueJobOf(1, "FIX_RATE", "2", kT0 + 1000),
                                 DueJobOf(2, "FIX_DELAY", "2", kT0 + 1000)};
  const auto plan = planner.Plan(jobs, kT0);
  EXPECT_EQ(Instants(plan, 1), (std::vector<std::int64_t>{kT0 + 1000, kT0 + 3000, kT0 + 5000}));
  EXPECT_EQ(Instants(plan, 2), std::vector<std::int64_t>{kT0 + 1000});
  EXPECT_EQ(plan.advances[0].next_fire_ms, kT0 + 7000);
  EXPECT_EQ(plan.advances[1].next_fire_ms, kAwaitingCompletion);
}

TEST(ScanPlanner, CronInAJobsTimeZone) {
  ScanPlanner planner;
  // 09:00 in Shanghai (UTC+8) is 01:00 UTC.
  DueJob job = DueJobOf(1, "CRON", "0 0 9 * * ?", kT0 + 3'600'000, "Asia/Shanghai");
  const auto plan = planner.Plan({&job, 1}, kT0 + 3'600'000 - 1000);
  EXPECT_EQ(Instants(plan, 1), std::vector<std::int64_t>{kT0 + 3'600'000});
  EXPECT_EQ(plan.advances[0].next_fire_ms, kT0 + 3'600'000 + 86'400'000);
}

TEST(ResolveLateFires, OnTimeSentLateFollowTheMisfireStrategy) {
  const std::int64_t now = kT0 + 10'000;
  const std::vector<ClaimedFire> claimed{
      {.log_id = 1,
       .job_id = 1,
       .scheduled_ms = kT0 + 6000,
       .type = TriggerType::kCron},  // 4 s late: on time
      {.log_id = 2, .job_id = 1, .scheduled_ms = kT0 + 1000, .type = TriggerType::kCron},  // 9 s: skip
      {.log_id = 3,
       .job_id = 2,
       .scheduled_ms = kT0 + 1000,
       .type = TriggerType::kCron,
       .misfire_strategy = MisfireStrategy::kFireOnceNow},
      {.log_id = 4,
       .job_id = 2,
       .scheduled_ms = kT0 + 2000,
       .type = TriggerType::kCron,
       .misfire_strategy = MisfireStrategy::kFireOnceNow},
      {.log_id = 5, .job_id = 3, .scheduled_ms = kT0, .type = TriggerType::kManual},  // manual: always sent
  };
  const auto r = ResolveLateFires(claimed, now, std::chrono::milliseconds(5000));
  std::vector<std::int64_t> sent;
  for (const auto& f : r.send)
    sent.push_back(f.log_id);
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(sent, (std::vector<std::int64_t>{1, 4, 5}));  // job 2: only its latest late fire
  auto skipped = r.skip;
  std::sort(skipped.begin(), skipped.end());
  EXPECT_EQ(skipped, (std::vector<std::int64_t>{2, 3}));
}

}  // namespace
