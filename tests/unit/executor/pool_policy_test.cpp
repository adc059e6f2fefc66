// The worker pool's decisions (executor/src/pool_policy.hpp) without threads: the rules one by one, then a
// model of the pool (workers that start, wait on a condition variable, are notified or wake spuriously,
// take jobs and end) driven through random interleavings of arrivals and wakes, checking that no ready job
// is left waiting while the pool could run it.
#include "pool_policy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace cronwheel::executor {
namespace {

using Action = PoolPolicy::Action;

TEST(PoolPolicy, AReadyJobWakesAnIdleWorkerOnceStartsOneBelowTheKeptCountElseArmsTheCheckOnce) {
  PoolPolicy p({.workers = 2, .max_workers = 4});
  EXPECT_EQ(p.OnReady(), Action::kStartWorker);
  EXPECT_EQ(p.OnReady(), Action::kStartWorker);
  EXPECT_EQ(p.live(), 2U);
  EXPECT_EQ(p.OnReady(), Action::kArmCheck) << "both busy: the starvation check";
  EXPECT_EQ(p.OnReady(), Action::kNone) << "armed once";
  EXPECT_TRUE(p.check_armed());
  // One of them waits: a job wakes it, and the next finds the wake in flight.
  p.OnWait();
  EXPECT_EQ(p.OnReady(), Action::kWakeIdle);
  EXPECT_EQ(p.waking(), 1U);
  EXPECT_EQ(p.OnReady(), Action::kNone);
  p.OnWake();
  EXPECT_EQ(p.waking(), 0U);
  EXPECT_EQ(p.idle(), 0U);
}

// The CI failure behind this class: two fires queued while the only idle worker's wake was in flight. The
// woken worker takes one and must see to the other with no idle worker left: it starts one.
TEST(PoolPolicy, TheWokenWorkerStartsAWorkerForWhatIsStillReadyWhenNoneIsIdle) {
  PoolPolicy p({.workers = 4, .max_workers = 8});
  ASSERT_EQ(p.OnReady(), Action::kStartWorker);
  p.OnWait();  // it ran its job and waits
  EXPECT_EQ(p.OnReady(), Action::kWakeIdle);
  EXPECT_EQ(p.OnReady(), Action::kNone) << "the wake in flight passes on";
  p.OnWake();
  EXPECT_EQ(p.OnTaken(1), Action::kStartWorker);
  EXPECT_EQ(p.live(), 2U);
  EXPECT_EQ(p.OnTaken(0), Action::kNone) << "nothing left ready";
}

TEST(PoolPolicy, TheCheckAddsAWorkerPerBlockedOneUpToTheJobsWaitingAndTheMaximum) {
  PoolPolicy p({.workers = 2, .max_workers = 5});
  ASSERT_EQ(p.OnReady(), Action::kStartWorker);
  ASSERT_EQ(p.OnReady(), Action::kStartWorker);
  ASSERT_EQ(p.OnReady(), Action::kArmCheck);
  auto c = p.OnCheck(/*ready=*/1, /*blocked=*/0, false);
  EXPECT_EQ(c.start, 0U) << "nobody blocked yet";
  EXPECT_TRUE(c.rearm);
  c = p.OnCheck(1, 2, false);
  EXPECT_EQ(c.start, 1U) << "two blocked, one job waiting";
  EXPECT_EQ(p.live(), 3U);
  c = p.OnCheck(10, 3, false);
  EXPECT_EQ(c.start, 2U) << "up to max_workers (5)";
  c = p.OnCheck(10, 5, false);
  EXPECT_EQ(c.start, 0U);
  c = p.OnCheck(0, 5, false);
  EXPECT_FALSE(c.rearm) << "nothing waits: the check ends";
  EXPECT_FALSE(p.check_armed());
  c = p.OnCheck(3, 5, true);
  EXPECT_FALSE(c.rearm);
  EXPECT_EQ(c.start, 0U) << "stopping";
}

TEST(PoolPolicy, AnAddedWorkerEndsOnlyWhileTheUnblockedOthersMakeTheKeptCount) {
  PoolPolicy p({.workers = 2, .max_workers = 8});
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(p.OnReady(), Action::kStartWorker);
  EXPECT_FALSE(p.MayEnd(0)) << "no more than the kept count";
  ASSERT_EQ(p.OnReady(), Action::kArmCheck);
  ASSERT_EQ(p.OnCheck(1, 2, false).start, 1U);  // three now
  EXPECT_FALSE(p.MayEnd(2)) << "the two others are blocked";
  EXPECT_FALSE(p.MayEnd(1));
  EXPECT_TRUE(p.MayEnd(0));
  p.OnEnd();
  EXPECT_EQ(p.live(), 2U);
}

// A model of JobDispatcher's pool around the policy, as job_dispatcher.cpp carries it out: a /run (or a
// batch of held fires under one lock) makes jobs ready and notifies one worker after the lock when the
// policy says kWakeIdle; a notification wakes one waiting worker, or is lost when none waits; a worker may
// also wake spuriously; a woken or new worker takes a job if one is ready (and passes on: OnTaken), else
// ends or waits. Handlers are long (they never end in the first phase) or short.
class PoolModel {
 public:
  PoolModel(PoolPolicy::Limits limits, std::uint32_t seed) : policy_(limits), rng_(seed) {}

  // Runs `batches` (jobs made ready under one lock each; `short_share` of them with short handlers) in a
  // random interleaving with the workers' steps, to quiescence. Returns "" or what went wrong.
  std::string Run(const std::vector<int>& batches, double short_share) {
    if (auto bad = Settle(batches, short_share); !bad.empty()) return bad;
    const auto long_busy = Count(kBusyLong);
    if (!ready_.empty() && long_busy < policy_.limits().workers) {
      return Describe("quiescent with " + std::to_string(ready_.size()) + " job(s) ready and only " +
                      std::to_string(long_busy) + " long handler(s) running");
    }
    if (!ready_.empty() && !policy_.check_armed()) return Describe("jobs wait and the check is not armed");
    // Time passes: the check (on the timer) adds workers for the blocked (long) handlers until nothing waits.
    for (int round = 0; !ready_.empty() && round < 100; ++round) {
      const auto c = policy_.OnCheck(ready_.size(), Count(kBusyLong), false);
      for (std::size_t i = 0; i < c.start; ++i)
        workers_.push_back(kStarting);
      if (c.wake_idle) {
        for (const auto i : Indexes(kWaiting))
          workers_[i] = kRunnable;
      }
      if (auto bad = Settle({}, short_share); !bad.empty()) return bad;
      if (!c.rearm) break;
    }
    if (!ready_.empty() && policy_.live() < policy_.limits().max_workers)
      return Describe("the starvation check left jobs waiting below max_workers");
    return "";
  }

  // Arrivals, notifications, workers' steps, spurious wakes and short handlers' ends in a random order, to
  // quiescence (long handlers never end). Returns "" or the invariant that broke.
  std::string Settle(const std::vector<int>& batches, double short_share) {
    std::size_t next_batch = 0;
    while (true) {
      if (auto bad = Invariants(); !bad.empty()) return bad;
      std::vector<int> choices;  // 0 arrival, 1 notify, 2 worker step, 3 spurious wake, 4 short end
      if (next_batch < batches.size()) choices.push_back(0);
      if (notifies_ > 0) choices.push_back(1);
      if (Count(kStarting) + Count(kRunnable) > 0) choices.push_back(2);
      if (Count(kWaiting) > 0 && spurious_left_ > 0) choices.push_back(3);
      if (Count(kBusyShort) > 0) choices.push_back(4);
      if (choices.empty()) return "";
      switch (choices[Pick(choices.size())]) {
        case 0: {
          bool wake = false;
          for (int i = 0; i < batches[next_batch]; ++i) {
            ready_.push_back(std::bernoulli_distribution(short_share)(rng_));
            const auto a = policy_.OnReady();
            wake = a == Action::kWakeIdle || wake;
            CarryOut(a, /*notify=*/false);
          }
          if (wake) ++notifies_;
          ++next_batch;
          break;
        }
        case 1: {
          --notifies_;
          const auto waiting = Indexes(kWaiting);
          if (!waiting.empty()) workers_[waiting[Pick(waiting.size())]] = kRunnable;
          break;
        }
        case 2: {
          auto ready = Indexes(kStarting);
          for (const auto i : Indexes(kRunnable))
            ready.push_back(i);
          const auto w = ready[Pick(ready.size())];
          if (workers_[w] == kRunnable) policy_.OnWake();
          Loop(w);
          break;
        }
        case 3: {
          --spurious_left_;
          const auto waiting = Indexes(kWaiting);
          workers_[waiting[Pick(waiting.size())]] = kRunnable;
          break;
        }
        case 4: {
          const auto busy = Indexes(kBusyShort);
          Loop(busy[Pick(busy.size())]);
          break;
        }
        default:
          return "unknown choice";
      }
    }
  }

 private:
  enum State { kStarting, kWaiting, kRunnable, kBusyLong, kBusyShort, kEnded };

  void Loop(std::size_t w) {
    if (!ready_.empty()) {
      const bool is_short = ready_.front();
      ready_.erase(ready_.begin());
      workers_[w] = is_short ? kBusyShort : kBusyLong;
      CarryOut(policy_.OnTaken(ready_.size()), /*notify=*/true);
    } else if (policy_.MayEnd(Count(kBusyLong))) {
      workers_[w] = kEnded;
      policy_.OnEnd();
    } else {
      policy_.OnWait();
      workers_[w] = kWaiting;
    }
  }
  void CarryOut(Action a, bool notify) {
    if (a == Action::kStartWorker) workers_.push_back(kStarting);
    if (a == Action::kWakeIdle && notify) ++notifies_;
  }
  std::string Invariants() {
    const auto alive = workers_.size() - Count(kEnded);
    if (policy_.live() != alive)
      return Describe("live " + std::to_string(policy_.live()) + " != " + std::to_string(alive));
    // A woken worker counts as idle until it runs.
    if (policy_.idle() != Count(kWaiting) + Count(kRunnable)) return Describe("idle count drifted");
    if (policy_.waking() > 1) return Describe("more than one wake in flight");
    return "";
  }
  std::string Describe(const std::string& what) {
    return what + " (live " + std::to_string(policy_.live()) + ", idle " + std::to_string(policy_.idle()) +
           ", waking " + std::to_string(policy_.waking()) + ")";
  }
  std::size_t Pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  std::size_t Count(State s) const {
    std::size_t n = 0;
    for (const auto w : workers_)
      n += w == s ? 1 : 0;
    return n;
  }
  std::vector<std::size_t> Indexes(State s) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < workers_.size(); ++i)
      if (workers_[i] == s) out.push_back(i);
    return out;
  }

  PoolPolicy policy_;
  std::mt19937 rng_;
  std::vector<State> workers_;
  std::vector<bool> ready_;  // jobs ready, in order: true = a short handler
  std::size_t notifies_ = 0;
  int spurious_left_ = 3;
};

TEST(PoolPolicy, InEveryInterleavingTriedNoReadyJobWaitsWhileThePoolCouldRunIt) {
  int runs = 0;
  for (std::uint32_t seed = 1; seed <= 3000; ++seed) {
    std::mt19937 setup(seed);
    const std::size_t workers = std::uniform_int_distribution<std::size_t>(1, 4)(setup);
    std::vector<int> batches(std::uniform_int_distribution<std::size_t>(1, 6)(setup));
    for (auto& b : batches)
      b = std::uniform_int_distribution<int>(1, 4)(setup);
    const double short_share = std::uniform_real_distribution<double>(0, 1)(setup);
    PoolModel model({.workers = workers, .max_workers = 64}, seed);
    const auto bad = model.Run(batches, short_share);
    ASSERT_EQ(bad, "") << "seed " << seed << ", workers " << workers;
    ++runs;
  }
  EXPECT_EQ(runs, 3000);
}

}  // namespace
}  // namespace cronwheel::executor
