#include "admin/schedule/scheduler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_scheduler_store.hpp"

namespace {

using namespace cronwheel::admin;
using namespace std::chrono_literals;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

// Records each dispatched fire with the clock time it was handed over.
class RecordingSink final : public FireSink {
 public:
  explicit RecordingSink(ringwheel::Clock& clock) : clock_(clock) {}
  void Dispatch(std::vector<Fire> fires) override {
    std::lock_guard lock(mu_);
    for (auto& f : fires)
      sent_.emplace_back(std::move(f), clock_.NowMs());
  }
  std::vector<std::pair<Fire, std::int64_t>> sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }

 private:
  ringwheel::Clock& clock_;
  std::mutex mu_;
  std::vector<std::pair<Fire, std::int64_t>> sent_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() : clock_(kT0), sink_(clock_) {}

  void StartScheduler(Scheduler::Settings s = {}) {
    s.node_id = "node-a";
    scheduler_ = std::make_unique<Scheduler>(s, clock_, store_, sink_);
    scheduler_->Start();
    ASSERT_TRUE(clock_.AwaitWaiters(2));
  }
  // Moves time forward in small steps, letting both threads finish their work after each step.
  void Run(std::chrono::milliseconds total, std::chrono::milliseconds step = 50ms) {
    for (auto t = 0ms; t < total; t += step) {
      clock_.Advance(step);
      ASSERT_TRUE(clock_.AwaitWaiters(2)) << "scheduler threads did not settle";
    }
  }

  cwtest::FakeClock clock_;
  cwtest::MemorySchedulerStore store_;
  RecordingSink sink_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, EachInstantIsSentOnceAtItsSecondNeverEarly) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  store_.AddJob(cwtest::EverySecondJob(2, kT0 + 2000));
  StartScheduler();
  Run(10s);
  std::map<std::pair<int, std::int64_t>, int> seen;
  for (const auto& [fire, at] : sink_.sent()) {
    EXPECT_GE(at, fire.scheduled_ms) << "fire " << fire.log_id << " sent early";
    EXPECT_EQ(at, fire.scheduled_ms) << "on a fake clock the ring sends exactly at the second";
    ++seen[{fire.job_id, fire.scheduled_ms}];
  }
  for (int job : {1, 2}) {
    for (std::int64_t t = kT0 + 2000; t <= kT0 + 10'000; t += 1000) {
      EXPECT_EQ((seen[{job, t}]), 1) << "job " << job << " instant " << t - kT0;
    }
  }
  EXPECT_EQ(seen.size(), 18u);  // nothing beyond now was sent
  EXPECT_GE(store_.scans(), 9);
}

// The scan runs half a second after each second (scan_offset), away from the burst of fires sent at the
// second; the pre-read window still has every instant in the ring in time.
TEST_F(SchedulerTest, ScansRunAtTheOffsetIntoEachSecondAndEveryInstantIsStillSentAtItsSecond) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 1000));
  StartScheduler({.scan_offset = 500ms});
  std::vector<std::int64_t> scan_times;
  for (int step = 0; step < 80; ++step) {  // 4 s in steps of 50 ms
    const int before = store_.scans();
    Run(50ms);
    if (store_.scans() > before) scan_times.push_back(clock_.NowMs() - kT0);
  }
  EXPECT_EQ(scan_times, (std::vector<std::int64_t>{500, 1500, 2500, 3500}));
  std::set<std::int64_t> sent;
  for (const auto& [fire, at] : sink_.sent()) {
    EXPECT_EQ(at, fire.scheduled_ms);
    sent.insert(fire.scheduled_ms - kT0);
  }
  EXPECT_EQ(sent, (std::set<std::int64_t>{1000, 2000, 3000, 4000}));
}

TEST_F(SchedulerTest, AFullBatchIsScannedAgainAtOnce) {
  for (int id = 1; id <= 25; ++id)
    store_.AddJob(cwtest::EverySecondJob(id, kT0 + 3000));
  StartScheduler({.pre_read_count = 10});
  Run(1000ms);
  // One wake-up at T0+1s: 10 + 10 + 5 jobs, three scans without waiting.
  EXPECT_EQ(store_.scans(), 3);
  Run(3000ms);
  std::set<int> jobs;
  for (const auto& [fire, at] : sink_.sent()) {
    if (fire.scheduled_ms == kT0 + 3000) jobs.insert(fire.job_id);
  }
  EXPECT_EQ(jobs.size(), 25u);
}

TEST_F(SchedulerTest, ScansWhileTheDatabaseIsDownFollowTheMisfireStrategy) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000, MisfireStrategy::kDoNothing));
  store_.AddJob(cwtest::EverySecondJob(2, kT0 + 2000, MisfireStrategy::kFireOnceNow));
  store_.Break();  // down from the start
  StartScheduler();
  Run(20s);
  EXPECT_TRUE(sink_.sent().empty());
  store_.Heal();
  Run(3s);
  // Job 1 (DO_NOTHING): one SKIPPED row, then regular fires again. Job 2: one MISFIRE fire sent at once.
  int skipped = 0;
  for (const auto& row : store_.Logs()) {
    if (row.skipped) {
      ++skipped;
      EXPECT_EQ(row.job_id, 1);
      EXPECT_EQ(row.type, TriggerType::kMisfire);
    }
  }
  EXPECT_EQ(skipped, 1);
  int misfires_sent = 0;
  for (const auto& [fire, at] : sink_.sent()) {
    EXPECT_GE(at, fire.scheduled_ms);
    if (fire.type == TriggerType::kMisfire) {
      ++misfires_sent;
      EXPECT_EQ(fire.job_id, 2);
    }
  }
  EXPECT_EQ(misfires_sent, 1);
}

TEST_F(SchedulerTest, FiresInTheRingClaimedLateAreResolvedByMisfireStrategy) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});  // scans at whole seconds, as XXL-JOB
  Run(1000ms);                           // the scan at T0+1 s wrote T0+2 s .. T0+6 s into the ring
  store_.Break();
  Run(8500ms);  // now T0+9.5 s: claims failed throughout
  EXPECT_TRUE(sink_.sent().empty());
  store_.Heal();
  Run(500ms);  // the ring claims at T0+9.8 s and sends at T0+10 s
  std::set<std::int64_t> sent;
  for (const auto& [fire, at] : sink_.sent()) {
    if (fire.scheduled_ms <= kT0 + 6000) sent.insert(fire.scheduled_ms);
  }
  // Late by more than 5 s at T0+10 s: T0+2..4 s are skipped (DO_NOTHING); T0+5 and 6 s are sent.
  EXPECT_EQ(sent, (std::set<std::int64_t>{kT0 + 5000, kT0 + 6000}));
  int skipped = 0;
  for (const auto& row : store_.Logs())
    skipped += row.skipped ? 1 : 0;
  EXPECT_EQ(skipped, 3);
}

TEST_F(SchedulerTest, AFireReOwnedByAnotherAdminIsNotSent) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler();
  Run(1000ms);
  for (const auto& row : store_.Logs()) {
    if (row.scheduled_ms == kT0 + 2000) store_.SetOwner(row.id, "node-b");
  }
  Run(2000ms);
  for (const auto& [fire, at] : sink_.sent())
    EXPECT_NE(fire.scheduled_ms, kT0 + 2000);
  EXPECT_EQ(scheduler_->stats().fires_lost_claim, 1u);
}

TEST_F(SchedulerTest, StopScanningKeepsSendingTheRingAndTakeRingHandsTheRestOver) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});
  Run(1000ms);
  scheduler_->StopScanning();
  const int scans = store_.scans();
  clock_.Advance(1000ms);
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // the ring thread alone
  EXPECT_EQ(store_.scans(), scans);
  ASSERT_EQ(sink_.sent().size(), 1u);  // T0+2 s
  const auto left = scheduler_->TakeRing();
  EXPECT_EQ(left.size(), 4u);  // T0+3 s .. T0+6 s
  scheduler_->Stop();
}

// How many times each (job, instant) was handed to the sink.
std::map<std::pair<int, std::int64_t>, int> SentCounts(RecordingSink& sink) {
  std::map<std::pair<int, std::int64_t>, int> seen;
  for (const auto& [fire, at] : sink.sent())
    ++seen[{fire.job_id, fire.scheduled_ms}];
  return seen;
}

// A failover during the scan's COMMIT (docs/architecture.md, "When the primary dies"): the scan's fires were
// committed, but the admin never learned it, so none of them is in its ring. The next scan does not write
// them again (the jobs advanced), and the scheduler reads its own unclaimed fires back: each instant is sent
// once.
TEST_F(SchedulerTest, AScanWhoseCommitWasNotAcknowledgedButHappenedHasItsFiresReadBackAndSentOnce) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  store_.AddJob(cwtest::EverySecondJob(2, kT0 + 2000));
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kScan, cwtest::MemorySchedulerStore::Commit::kYes);
  StartScheduler();
  Run(10s);
  const auto seen = SentCounts(sink_);
  for (int job : {1, 2}) {
    for (std::int64_t t = kT0 + 2000; t <= kT0 + 10'000; t += 1000)
      EXPECT_EQ((seen.count({job, t}) ? seen.at({job, t}) : 0), 1) << "job " << job << " instant " << t - kT0;
  }
  for (const auto& [fire, at] : sink_.sent())
    EXPECT_EQ(at, fire.scheduled_ms) << "read back before its second: sent at it, never early";
  // Read back at the next scans (T0+1.5 s, and again 2 and 5 s later); the scan at T0+0.5 s wrote T0+2..5 s
  // (within its 5 s pre-read) for both jobs, and lost its acknowledgement.
  EXPECT_EQ(scheduler_->stats().doubts_resolved, 3u);
  EXPECT_GE(scheduler_->stats().fires_adopted, 8u);
}

// The same COMMIT lost without effect: nothing was written, the jobs did not advance, and the next scan
// writes the instants itself. Reading back finds nothing of its own, and nothing is sent twice.
TEST_F(SchedulerTest, AScanWhoseCommitWasNotAcknowledgedAndDidNotHappenIsWrittenByTheNextScan) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kScan, cwtest::MemorySchedulerStore::Commit::kNo);
  StartScheduler();
  Run(8s);
  const auto seen = SentCounts(sink_);
  for (std::int64_t t = kT0 + 2000; t <= kT0 + 8000; t += 1000)
    EXPECT_EQ((seen.count({1, t}) ? seen.at({1, t}) : 0), 1) << "instant " << t - kT0;
  EXPECT_GE(scheduler_->stats().doubts_resolved, 1u);
}

// A commit can land after its connection was lost (the server was alive, or waited for its synchronous
// standby): the first read back finds nothing, and a later one, within the window, finds the fires.
TEST_F(SchedulerTest, AScanWhoseCommitLandsAfterTheFirstReadBackIsFoundByALaterOne) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 4000));
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kScan, cwtest::MemorySchedulerStore::Commit::kLater);
  StartScheduler();
  Run(1500ms);  // the scan at T0+0.5 s (T0+4..5 s) lost its ack; the read at T0+1.5 s found nothing
  EXPECT_EQ(scheduler_->stats().fires_adopted, 0u);
  store_.LandLateCommit();
  Run(8500ms);  // the read 2 s after the doubt (T0+3.5 s) finds T0+4 and 5 s, in time for their seconds
  const auto seen = SentCounts(sink_);
  for (std::int64_t t = kT0 + 4000; t <= kT0 + 10'000; t += 1000)
    EXPECT_EQ((seen.count({1, t}) ? seen.at({1, t}) : 0), 1) << "instant " << t - kT0;
  for (const auto& [fire, at] : sink_.sent())
    EXPECT_EQ(at, fire.scheduled_ms);
}

// A failover during a claim's COMMIT: the rows were marked as being sent by this admin, which never learned
// it. Claimed again plainly, they would be "taken already" and never sent; the retry releases what the
// doubtful claim marked (by its stamp) and claims it again, so each instant is sent once.
TEST_F(SchedulerTest, AClaimWhoseCommitWasNotAcknowledgedButHappenedIsReleasedByItsStampAndSentOnce) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});
  Run(1000ms);  // the scan at T0+1 s wrote T0+2 s .. T0+6 s
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kClaim, cwtest::MemorySchedulerStore::Commit::kYes);
  Run(6s);
  const auto seen = SentCounts(sink_);
  for (std::int64_t t = kT0 + 2000; t <= kT0 + 7000; t += 1000)
    EXPECT_EQ((seen.count({1, t}) ? seen.at({1, t}) : 0), 1) << "instant " << t - kT0;
  EXPECT_EQ(scheduler_->stats().claims_in_doubt, 1u);
  EXPECT_EQ(store_.released_claims(), 1) << "the T0+2 s row, marked by the claim in doubt";
  EXPECT_EQ(scheduler_->stats().fires_lost_claim, 0u);
  // Retried at the next second, a second late: within the misfire threshold, so sent, late, at T0+3 s.
  for (const auto& [fire, at] : sink_.sent()) {
    if (fire.scheduled_ms == kT0 + 2000) {
      EXPECT_EQ(at, kT0 + 3000);
    }
  }
}

TEST_F(SchedulerTest, AClaimWhoseCommitWasNotAcknowledgedAndDidNotHappenIsClaimedAgainAndSentOnce) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});
  Run(1000ms);
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kClaim, cwtest::MemorySchedulerStore::Commit::kNo);
  Run(6s);
  const auto seen = SentCounts(sink_);
  for (std::int64_t t = kT0 + 2000; t <= kT0 + 7000; t += 1000)
    EXPECT_EQ((seen.count({1, t}) ? seen.at({1, t}) : 0), 1) << "instant " << t - kT0;
  EXPECT_EQ(store_.released_claims(), 0);
}

// A claim's stamp names that claim only: a fire held twice in memory (read back after a doubt while it was
// also waiting in the ring) and claimed once successfully is not released by the other copy's retry.
TEST_F(SchedulerTest, AClaimThatSucceededIsNeverReleasedByTheRetryOfAnotherClaimOfTheSameFire) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});
  Run(1000ms);
  // The claim at T0+1.8 s loses its acknowledgement without effect; its fire goes back to the retried claims
  // with the stamp. The scan's resolution then reads the same fire back (still unclaimed) and submits it.
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kClaim, cwtest::MemorySchedulerStore::Commit::kNo);
  Run(4s);
  const auto seen = SentCounts(sink_);
  for (std::int64_t t = kT0 + 2000; t <= kT0 + 5000; t += 1000)
    EXPECT_EQ((seen.count({1, t}) ? seen.at({1, t}) : 0), 1) << "instant " << t - kT0;
  EXPECT_EQ(store_.released_claims(), 0);
}

// A late fire the claim decided to skip, whose skip could not be recorded (its COMMIT lost without effect),
// stays claimed by this admin; it is decided again, not left claimed and never sent or skipped.
TEST_F(SchedulerTest, ASkipThatCouldNotBeRecordedIsDecidedAgainNotLeftClaimed) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler({.scan_offset = 0ms});
  Run(1000ms);
  store_.Break();
  Run(8500ms);  // T0+9.5 s: T0+2..4 s are more than the threshold late
  store_.Heal();
  store_.LoseNextAck(cwtest::MemorySchedulerStore::Op::kMarkSkipped,
                     cwtest::MemorySchedulerStore::Commit::kNo);
  Run(2s);
  int skipped = 0;
  for (const auto& row : store_.Logs()) {
    if (row.scheduled_ms >= kT0 + 2000 && row.scheduled_ms <= kT0 + 4000) {
      EXPECT_TRUE(row.skipped) << "instant " << row.scheduled_ms - kT0;
      skipped += row.skipped ? 1 : 0;
    }
  }
  EXPECT_EQ(skipped, 3);
  for (const auto& [fire, at] : sink_.sent())
    EXPECT_GT(fire.scheduled_ms, kT0 + 4000) << "a skipped instant is not sent";
}

// Issue 48: the scheduler claims a second's fires dispatch_lead (200 ms) before the second. A stop that
// commits in between withdraws the claimed fire (deleted, and named for this admin), and the scheduler,
// asking at the second, does not send it; the other job's fire of that second goes; nothing of the stopped
// job after it.
TEST_F(SchedulerTest, AStopCommittedBetweenTheClaimAndTheInstantSendsNothingForThatInstant) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  store_.AddJob(cwtest::EverySecondJob(2, kT0 + 2000));
  StartScheduler();
  Run(2900ms);  // the fires of T0+3s were claimed at T0+2.8s
  const auto claimed = [&] {
    for (const auto& row : store_.Logs()) {
      if (row.job_id == 1 && row.scheduled_ms == kT0 + 3000) return row.dispatch_ms != 0;
    }
    return false;
  };
  ASSERT_TRUE(claimed()) << "the fire of T0+3s is claimed before the stop";
  store_.StopJob(1, clock_.NowMs());
  Run(2100ms);
  std::map<int, std::set<std::int64_t>> sent;
  for (const auto& [fire, at] : sink_.sent())
    sent[fire.job_id].insert(fire.scheduled_ms - kT0);
  EXPECT_EQ(sent[1], (std::set<std::int64_t>{2000})) << "nothing of job 1 after its stop";
  EXPECT_EQ(sent[2], (std::set<std::int64_t>{2000, 3000, 4000, 5000}));
  EXPECT_EQ(scheduler_->stats().fires_withdrawn, 1u);
}

// The other order: a stop that commits after the second does not take back the fire sent at it.
TEST_F(SchedulerTest, AStopCommittedAfterTheInstantLeavesThatInstantsFireSent) {
  store_.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  StartScheduler();
  Run(3050ms);
  store_.StopJob(1, clock_.NowMs());
  Run(2000ms);
  std::set<std::int64_t> sent;
  for (const auto& [fire, at] : sink_.sent())
    sent.insert(fire.scheduled_ms - kT0);
  EXPECT_EQ(sent, (std::set<std::int64_t>{2000, 3000}));
  EXPECT_EQ(scheduler_->stats().fires_withdrawn, 0u);
}

TEST_F(SchedulerTest, SubmittedDueFiresAreSentAtOnceAndFutureOnesAtTheirSecond) {
  StartScheduler();
  const auto manual = store_.InsertFire(5, TriggerType::kManual, kT0 - 30'000, "node-a");  // late, but manual
  const auto future = store_.InsertFire(5, TriggerType::kCron, kT0 + 3000, "node-a");
  const auto foreign = store_.InsertFire(5, TriggerType::kManual, kT0, "node-b");
  scheduler_->Submit(
      {Fire{.log_id = manual, .job_id = 5, .scheduled_ms = kT0 - 30'000, .type = TriggerType::kManual},
       Fire{.log_id = future, .job_id = 5, .scheduled_ms = kT0 + 3000, .type = TriggerType::kCron},
       Fire{.log_id = foreign, .job_id = 5, .scheduled_ms = kT0, .type = TriggerType::kManual}});
  auto sent = sink_.sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first.log_id, manual);
  EXPECT_EQ(sent[0].second, kT0);
  Run(3000ms);
  sent = sink_.sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].first.log_id, future);
  EXPECT_EQ(sent[1].second, kT0 + 3000);
}

}  // namespace

// Ahead-of-time dispatch: with run_ahead the ring hands each second's fires on that long before it; the
// trigger gives back those whose executor cannot hold them (Defer), and the ring hands those on at their
// second, never early; one given back after its second has passed goes at once.
// Records as RecordingSink does, but gives the early fires of `deferred_jobs` back (their executors cannot
// hold fires).
class DeferringSink final : public FireSink {
 public:
  explicit DeferringSink(ringwheel::Clock& clock) : clock_(clock), recorded_(clock) {}
  Scheduler* scheduler = nullptr;
  std::set<int> deferred_jobs;
  void Dispatch(std::vector<Fire> fires) override {
    std::vector<Fire> sent;
    for (auto& f : fires) {
      if (deferred_jobs.contains(f.job_id) && f.scheduled_ms > clock_.NowMs()) {
        scheduler->Defer(std::move(f));
      } else {
        sent.push_back(std::move(f));
      }
    }
    recorded_.Dispatch(std::move(sent));
  }
  std::vector<std::pair<Fire, std::int64_t>> sent() { return recorded_.sent(); }

 private:
  ringwheel::Clock& clock_;
  RecordingSink recorded_;
};

TEST(SchedulerAhead, FiresGoOnTheLeadBeforeTheirSecondAndTheDeferredOnesAtItNeverEarly) {
  cwtest::FakeClock clock(kT0);
  cwtest::MemorySchedulerStore store;
  DeferringSink sink(clock);
  sink.deferred_jobs = {2};
  store.AddJob(cwtest::EverySecondJob(1, kT0 + 2000));
  store.AddJob(cwtest::EverySecondJob(2, kT0 + 2000));
  Scheduler scheduler({.node_id = "node-a", .run_ahead = 1000ms}, clock, store, sink);
  sink.scheduler = &scheduler;
  scheduler.Start();
  ASSERT_TRUE(clock.AwaitWaiters(2));
  for (int step = 0; step < 160; ++step) {  // 8 s
    clock.Advance(50ms);
    ASSERT_TRUE(clock.AwaitWaiters(2));
  }
  std::map<std::pair<int, std::int64_t>, int> seen;
  for (const auto& [fire, at] : sink.sent()) {
    if (fire.job_id == 1) {
      EXPECT_EQ(at, fire.scheduled_ms - 1000) << "job 1 goes the lead before its instant";
    } else {
      EXPECT_EQ(at, fire.scheduled_ms) << "job 2 waits for its instant";
    }
    ++seen[{fire.job_id, fire.scheduled_ms}];
  }
  for (std::int64_t t = kT0 + 2000; t <= kT0 + 8000; t += 1000) {
    EXPECT_EQ((seen[{2, t}]), 1) << "job 2, instant " << t - kT0;
    EXPECT_EQ((seen[{1, t}]), 1) << "job 1, instant " << t - kT0;
  }
  EXPECT_EQ((seen[{1, kT0 + 9000}]), 1) << "handed on at T0 + 8 s, a second ahead";
  EXPECT_EQ((seen[{2, kT0 + 9000}]), 0) << "held for its instant";

  // A fire given back after its instant's deferred fires went: at once.
  Fire late;
  late.log_id = 999;
  late.job_id = 3;
  late.scheduled_ms = kT0 + 8000;
  scheduler.Defer(late);
  const auto sent = sink.sent();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.back().first.log_id, 999);
  EXPECT_EQ(sent.back().second, clock.NowMs());
  // Stopping hands the held ones over.
  scheduler.Stop();
  const auto left = scheduler.TakeRing();
  EXPECT_TRUE(std::any_of(left.begin(), left.end(),
                          [](const Fire& f) { return f.job_id == 2 && f.scheduled_ms == kT0 + 9000; }));
}

// Issue 48: with run_ahead, the fires an executor cannot hold are claimed a lead (here 1 s) before their
// second and held here until it. A stop committed in between: the held fire is asked about at its second
// and not sent.
TEST(SchedulerAhead, ADeferredFireWithdrawnBeforeItsSecondIsNotSent) {
  cwtest::FakeClock clock(kT0);
  cwtest::MemorySchedulerStore store;
  DeferringSink sink(clock);
  sink.deferred_jobs = {2};
  store.AddJob(cwtest::EverySecondJob(2, kT0 + 2000));
  Scheduler scheduler({.node_id = "node-a", .run_ahead = 1000ms}, clock, store, sink);
  sink.scheduler = &scheduler;
  scheduler.Start();
  ASSERT_TRUE(clock.AwaitWaiters(2));
  const auto run = [&](std::chrono::milliseconds total) {
    for (auto t = 0ms; t < total; t += 50ms) {
      clock.Advance(50ms);
      ASSERT_TRUE(clock.AwaitWaiters(2));
    }
  };
  run(2500ms);  // T0+2.5 s: the fire of T0+3 s was claimed at T0+2 s and is held for its second
  store.StopJob(2, clock.NowMs());
  run(2000ms);
  std::set<std::int64_t> sent;
  for (const auto& [fire, at] : sink.sent())
    sent.insert(fire.scheduled_ms - kT0);
  EXPECT_EQ(sent, (std::set<std::int64_t>{2000}));
  EXPECT_EQ(scheduler.stats().fires_withdrawn, 1u);
  scheduler.Stop();
}
