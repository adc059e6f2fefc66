// The admin's connection policy (admin/dispatch/connection_policy.hpp) on a fake clock: how fast it opens
// connections to an executor, what slows it down and how it recovers, and the keep-alive it learns. The
// simulations drive it with model executors (accept and answer times, a listen backlog, SYNs dropped and
// sent again after Linux's 1 s) in simulated time: nothing here sleeps.
#include "admin/dispatch/connection_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <vector>

#include "cwtest/fake_clock.hpp"

namespace {

using cronwheel::admin::ConnectionPolicy;
using ConnectFailure = ConnectionPolicy::ConnectFailure;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

class ConnectionPolicyTest : public ::testing::Test {
 protected:
  ConnectionPolicy::Time Now() const { return clock_.SteadyNow(); }
  void Advance(std::chrono::nanoseconds d) { clock_.Advance(d); }
  // A lone request: a connection that connects at once and proves itself (it stays open).
  static void OpenAndProve(ConnectionPolicy& p, ConnectionPolicy::Time now) {
    const auto place = p.OnAttempt(now);
    p.OnConnected(now, 50us, place);
    p.OnAnswered(now, true, 150us, /*kept=*/true);
  }
  // Demand that never ends, to an executor closing each connection after one answer: `proofs` times, as
  // many connections are opened as the policy allows and one is answered (after `since_attempt`) and
  // closed. The attempts still unproven at the end then fail for reasons that say nothing of the executor.
  void Saturate(ConnectionPolicy& p, int proofs, std::chrono::nanoseconds since_attempt = 150us) {
    for (int i = 0; i < proofs; ++i) {
      while (p.MayOpen(Now(), Now() - 1s))
        p.OnAttempt(Now());
      p.OnAnswered(Now(), true, since_attempt, /*kept=*/false);
      p.OnClosed();
    }
    while (p.unproven() > 0)
      p.OnConnectFailed(Now(), ConnectFailure::kOther, 1);
  }

  cwtest::FakeClock clock_;
};

TEST_F(ConnectionPolicyTest, TheFirstConnectionsOpenAtOnceAndNoMoreThanTheWindowIsUnproven) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  const auto queued = Now();
  EXPECT_TRUE(p.MayOpen(Now(), queued));  // none open: no wait
  p.OnAttempt(Now());
  // With one open, a request opens another only once it has waited kGrowAfter for a free one.
  EXPECT_FALSE(p.MayOpen(Now(), queued));
  Advance(ConnectionPolicy::kGrowAfter);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(p.MayOpen(Now(), queued)) << i;
    p.OnAttempt(Now());
  }
  EXPECT_EQ(p.unproven(), 4u);
  EXPECT_FALSE(p.MayOpen(Now(), queued));  // the window: 4, below a listen backlog of 5
  p.OnAnswered(Now(), true, 150us, true);  // one is proven: the window grows by one, and one more is free
  EXPECT_EQ(p.window(), 5u);
  EXPECT_TRUE(p.MayOpen(Now(), queued));
  EXPECT_EQ(p.open(), 4u);
}

TEST_F(ConnectionPolicyTest, AConnectionTheExecutorClosedAfterItsAnswerIsReplacedWithoutWaiting) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  OpenAndProve(p, Now());  // kept
  p.OnAttempt(Now());
  p.OnAnswered(Now(), true, 150us, /*kept=*/false);  // the executor closes this one
  p.OnClosed();
  const auto queued = Now();
  ASSERT_EQ(p.open(), 1u);
  EXPECT_TRUE(p.MayOpen(Now(), queued));  // its replacement: no kGrowAfter
  p.OnAttempt(Now());
  EXPECT_FALSE(p.MayOpen(Now(), queued));  // one more would be growth
  Advance(ConnectionPolicy::kGrowAfter);
  EXPECT_TRUE(p.MayOpen(Now(), queued));
}

TEST_F(ConnectionPolicyTest, TheWindowGrowsWithConnectionsProvenPromptlyWhileItIsFullUpToTheCap) {
  ConnectionPolicy p({.max_open = 6, .initial_window = 2});
  Saturate(p, 3);
  EXPECT_EQ(p.window(), 5u);
  Saturate(p, 10);
  EXPECT_EQ(p.window(), 6u);
  EXPECT_EQ(p.open(), 0u);
}

TEST_F(ConnectionPolicyTest, AWindowThatHoldsNothingBackOrSlowAnswersDoNotGrowIt) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  // Requests one at a time: the window never held an opening back.
  for (int i = 0; i < 20; ++i) {
    OpenAndProve(p, Now());
    p.OnClosed();
  }
  EXPECT_EQ(p.window(), 4u);
  // Full, but the first answers take 10 ms where the quickest took 150 µs: the executor queues the
  // connections already (its threads are busy), and more would wait in its backlog.
  Saturate(p, 1);
  EXPECT_EQ(p.window(), 5u);
  Saturate(p, 20, 10ms);
  EXPECT_EQ(p.window(), 5u);
  // Within twice the quickest plus kAnswerSlack is prompt.
  Saturate(p, 2, 300us + ConnectionPolicy::kAnswerSlack);
  EXPECT_EQ(p.window(), 7u);
}

TEST_F(ConnectionPolicyTest, NoMoreThanTheCapAreOpenWhateverTheWindow) {
  ConnectionPolicy p({.max_open = 3, .initial_window = 3});
  for (int i = 0; i < 3; ++i)
    OpenAndProve(p, Now());
  Advance(1s);
  EXPECT_FALSE(p.MayOpen(Now(), Now() - 1s));
  p.OnClosed();
  EXPECT_TRUE(p.MayOpen(Now(), Now() - 1s));
}

TEST_F(ConnectionPolicyTest, ASynRetransmissionHalvesTheWindowSetsACeilingAndHoldsOff) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  Saturate(p, 12);
  ASSERT_EQ(p.window(), 16u);
  std::vector<std::size_t> places;
  places.reserve(10);
  for (int i = 0; i < 10; ++i)
    places.push_back(p.OnAttempt(Now()));
  EXPECT_EQ(places.back(), 10u);
  // The 8th attempt's SYN was dropped (7 unproven fit the backlog): it connects after Linux's 1 s.
  Advance(1s);
  p.OnConnected(Now(), 1s, places[7]);
  EXPECT_EQ(p.evidence(), 1u);
  EXPECT_EQ(p.window(), 7u);  // min(16 / 2, 8 - 1)
  EXPECT_EQ(p.ceiling(), 7u);
  EXPECT_EQ(p.hold_until(), Now() + ConnectionPolicy::kFirstBackoff);
  // The 9th and 10th: the same episode, within the hold-off. Counted, nothing lowered further.
  p.OnConnected(Now(), 1s, places[8]);
  p.OnConnected(Now(), 1s, places[9]);
  EXPECT_EQ(p.evidence(), 3u);
  EXPECT_EQ(p.window(), 7u);
  // Held off, then free again (the 10 are still unproven: the window is what holds now).
  for (int i = 0; i < 10; ++i)
    p.OnAnswered(Now(), true, 150us, true);
  EXPECT_FALSE(p.MayOpen(Now(), Now() - 1s));
  Advance(ConnectionPolicy::kFirstBackoff);
  EXPECT_TRUE(p.MayOpen(Now(), Now() - 1s));
  // The window does not grow past the ceiling while it is remembered...
  Saturate(p, 20);
  EXPECT_EQ(p.window(), 7u);
  // ... and grows again once no evidence has come for kCeilingMemory.
  Advance(ConnectionPolicy::kCeilingMemory + 1ms);
  Saturate(p, 5);
  EXPECT_EQ(p.ceiling(), std::nullopt);
  EXPECT_EQ(p.window(), 12u);
}

TEST_F(ConnectionPolicyTest, EvidenceThatKeepsComingDoublesTheHoldOffUpToASecondAndAProvenOneEndsIt) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 8});
  milliseconds expected = ConnectionPolicy::kFirstBackoff;
  for (int i = 0; i < 10; ++i) {
    const auto place = p.OnAttempt(Now());
    Advance(3s);
    p.OnConnectFailed(Now(), ConnectFailure::kTimedOut, place);
    EXPECT_EQ(p.hold_until(), Now() + expected) << i;
    Advance(expected);
    expected = std::min(expected * 2, ConnectionPolicy::kMaxBackoff);
  }
  EXPECT_EQ(p.window(), 1u);
  OpenAndProve(p, Now());  // after the hold-off: the episode is over
  const auto place = p.OnAttempt(Now());
  p.OnConnectFailed(Now(), ConnectFailure::kTimedOut, place);
  EXPECT_EQ(p.hold_until(), Now() + ConnectionPolicy::kFirstBackoff);
}

TEST_F(ConnectionPolicyTest, ARefusalWithNothingElseOpenIsAnExecutorThatIsDownNotASlowOne) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  // Nothing listens: every attempt is refused at once, and the next request tries at once too (its
  // failure says "connection refused" without waiting out a back-off).
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(p.MayOpen(Now(), Now())) << i;
    const auto place = p.OnAttempt(Now());
    p.OnConnectFailed(Now(), ConnectFailure::kRefused, place);
  }
  EXPECT_EQ(p.evidence(), 0u);
  EXPECT_EQ(p.window(), 4u);
  // A refusal while other connections to it are open is a backlog that resets: evidence.
  OpenAndProve(p, Now());
  const auto place = p.OnAttempt(Now());
  p.OnConnectFailed(Now(), ConnectFailure::kRefused, place);
  EXPECT_EQ(p.evidence(), 1u);
  // Resolving, TLS and the registration guard say nothing about the executor's load.
  Advance(1s);
  const auto other = p.OnAttempt(Now());
  p.OnConnectFailed(Now(), ConnectFailure::kOther, other);
  EXPECT_EQ(p.evidence(), 1u);
}

TEST_F(ConnectionPolicyTest, ANewConnectionLostBeforeItsFirstAnswerIsEvidenceAReusedOneIsNot) {
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  OpenAndProve(p, Now());
  p.OnLost(Now(), false, 1);  // a pooled connection the executor closed as the request went out
  EXPECT_EQ(p.evidence(), 0u);
  EXPECT_EQ(p.open(), 0u);
  const auto place = p.OnAttempt(Now());
  p.OnConnected(Now(), 100us, place);
  p.OnLost(Now(), true, place);  // reset before its first answer: accepted by the kernel, never served
  EXPECT_EQ(p.evidence(), 1u);
  EXPECT_EQ(p.open(), 0u);
  EXPECT_EQ(p.unproven(), 0u);
}

TEST_F(ConnectionPolicyTest, AStalledFirstRequestIsMadeUpForOnceAndOnlyIfNothingWaitsToBeRead) {
  ConnectionPolicy p({});
  OpenAndProve(p, Now());  // an executor that keeps connections: one of them may hold its thread
  p.FirstWritten(1, Now());
  Advance(5ms);
  p.FirstWritten(2, Now());
  const auto silent = [](std::uintptr_t) { return true; };
  EXPECT_FALSE(p.TakeStall(Now(), silent));  // nothing older than kFirstRequestStall
  Advance(ConnectionPolicy::kFirstRequestStall - 4ms);
  // 1 has stalled, but its answer waits in the socket already: the client was late, not the executor.
  EXPECT_FALSE(p.TakeStall(Now(), [](std::uintptr_t id) { return id != 1; }));
  EXPECT_TRUE(p.TakeStall(Now(), silent));   // 1, made up for now
  EXPECT_FALSE(p.TakeStall(Now(), silent));  // once only; 2 is not stalled yet
  Advance(5ms);
  EXPECT_TRUE(p.TakeStall(Now(), silent));  // 2
  p.FirstOver(1);
  p.FirstOver(2);
  p.FirstWritten(3, Now());
  Advance(1s);
  p.FirstOver(3);  // answered after all
  EXPECT_FALSE(p.TakeStall(Now(), silent));
}

TEST_F(ConnectionPolicyTest, AStallCapsTheOpenConnectionsAtWhatTheExecutorServedAtOnceForAWhile) {
  // A thread-per-connection executor with 5 threads: 5 kept connections hold them, the 6th waits.
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  for (int i = 0; i < 5; ++i)
    OpenAndProve(p, Now());
  p.OnAttempt(Now());
  p.FirstWritten(6, Now());
  Advance(ConnectionPolicy::kFirstRequestStall + 1ms);
  ASSERT_TRUE(p.TakeStall(Now(), [](std::uintptr_t) { return true; }));
  EXPECT_EQ(p.open_cap(), 5u);  // 6 open, 1 of them stalled
  p.OnClosed();                 // the client yields an idle one; the 6th gets its thread and is answered
  p.FirstOver(6);
  p.OnAnswered(Now(), true, 21ms, true);
  EXPECT_EQ(p.open(), 5u);
  EXPECT_FALSE(p.MayOpen(Now(), Now() - 1s));  // a 6th would wait for a thread again
  p.OnClosed();
  EXPECT_TRUE(p.MayOpen(Now(), Now() - 1s));
  // Forgotten a while after the last stall: the executor may have been given more threads.
  p.OnAttempt(Now());
  Advance(ConnectionPolicy::kCeilingMemory + 1ms);
  EXPECT_TRUE(p.MayOpen(Now(), Now() - 1s));
  EXPECT_EQ(p.open_cap(), std::nullopt);
}

TEST_F(ConnectionPolicyTest, NothingStallsAtAnExecutorThatClosesEachConnectionAfterItsAnswer) {
  // Every connection is closed after its answer (HTTP/1.0): none of them can hold the executor's threads,
  // so a slow first answer is a busy machine, not a thread some idle connection holds.
  ConnectionPolicy p({.max_open = 32, .initial_window = 4});
  Saturate(p, 10);
  for (std::uintptr_t id = 1; id <= 4; ++id) {
    p.OnAttempt(Now());
    p.FirstWritten(id, Now());
  }
  p.OnAnswered(Now(), true, 150us, /*kept=*/false);  // 4, closed after its answer
  p.FirstOver(4);
  p.OnClosed();
  Advance(ConnectionPolicy::kFirstRequestStall + 1ms);
  const auto silent = [](std::uintptr_t) { return true; };
  EXPECT_FALSE(p.TakeStall(Now(), silent));  // 1, 2 and 3 have waited past kFirstRequestStall
  EXPECT_EQ(p.open_cap(), std::nullopt);
  // Once it keeps one, its threads may be held again, and a stall counts.
  p.OnAnswered(Now(), true, 150us, /*kept=*/true);  // 3, kept open
  p.FirstOver(3);
  EXPECT_TRUE(p.TakeStall(Now(), silent));
  EXPECT_EQ(p.open_cap(), 1u);  // 3 open, 2 of them stalled: the executor served one at once
  // A minute without a kept connection: forgotten.
  Advance(ConnectionPolicy::kCeilingMemory + 1ms);
  EXPECT_FALSE(p.TakeStall(Now(), silent));
}

TEST_F(ConnectionPolicyTest, TheKeepAliveIsLearnedFromTheHeaderOrTheIdleTimesAndForgotten) {
  ConnectionPolicy p({.max_idle = 60s, .min_keep_alive_observation = 1s, .keep_alive_memory = 10min});
  EXPECT_EQ(p.ReuseLimit(Now()), 60s);
  p.FoundClosedAfterIdle(500ms, Now());  // too young to say: a restarted executor
  EXPECT_EQ(p.keep_alive(), std::nullopt);
  p.FoundClosedAfterIdle(4s, Now());
  EXPECT_EQ(p.ReuseLimit(Now()), 3s);  // 3/4 of it
  p.LearnKeepAlive(2s, Now());         // the shorter wins
  EXPECT_EQ(p.ReuseLimit(Now()), 1500ms);
  p.LearnKeepAlive(5s, Now());
  EXPECT_EQ(p.keep_alive(), 2s);
  Advance(10min + 1s);
  EXPECT_EQ(p.ReuseLimit(Now()), 60s);
  EXPECT_EQ(p.keep_alive(), std::nullopt);
}

// A model executor for the simulations: it takes a connection into its accept queue when the SYN arrives
// (`backlog` + 1 at most, as Linux; a SYN beyond is dropped and sent again after 1 s, then 2 s, up to the
// connect timeout of 3 s), serves queued connections on `threads` threads in `serve` each, and closes each
// connection after `requests_per_connection` answers.
struct ModelExecutor {
  std::size_t backlog = 4096;
  std::size_t threads = 8;
  microseconds serve{100};
  microseconds connect{50};
  int requests_per_connection = 1;
};

struct SimulationResult {
  int answered = 0;
  int dropped_syns = 0;
  int timed_out = 0;  // connects that timed out (their requests waited for another connection)
  milliseconds took{};
};

// `requests` requests all queued at the start; the admin holds at most `max_open` connections. Steps of
// 10 µs; the policy is asked as the client's thread would (each step, and after each event).
SimulationResult Simulate(cwtest::FakeClock& clock, const ModelExecutor& ex, int requests,
                          std::size_t max_open) {
  using Time = ConnectionPolicy::Time;
  ConnectionPolicy p({.max_open = max_open, .initial_window = 2});
  const Time start = clock.SteadyNow();
  struct Conn {
    std::size_t place = 0;
    Time attempted;
    int served = 0;
    bool fresh = true;
  };
  std::map<int, Conn> conns;
  int next_id = 0;
  std::multimap<Time, int> syn_arrivals;  // connection id -> when its (re)sent SYN arrives
  std::deque<int> accept_queue;           // connected, not yet taken by a thread
  std::multimap<Time, int> serving;       // answer times
  std::vector<int> idle;                  // pooled connections (kept alive)
  std::map<int, int> syn_tries;
  int waiting = requests;
  SimulationResult r;
  while (r.answered < requests) {
    const Time now = clock.SteadyNow();
    // Answers.
    while (!serving.empty() && serving.begin()->first <= now) {
      const int id = serving.begin()->second;
      serving.erase(serving.begin());
      Conn& c = conns[id];
      ++r.answered;
      const bool kept = c.served + 1 < ex.requests_per_connection;
      p.OnAnswered(now, c.fresh, now - c.attempted, kept);
      c.fresh = false;
      if (++c.served >= ex.requests_per_connection) {
        p.OnClosed();
        conns.erase(id);
      } else {
        idle.push_back(id);
      }
    }
    // SYNs arriving: into the accept queue, or dropped.
    while (!syn_arrivals.empty() && syn_arrivals.begin()->first <= now) {
      const int id = syn_arrivals.begin()->second;
      syn_arrivals.erase(syn_arrivals.begin());
      Conn& c = conns[id];
      if (accept_queue.size() > ex.backlog) {
        ++r.dropped_syns;
        const int tries = ++syn_tries[id];
        if (tries > 2) {  // 1 s + 2 s: the connect timeout of 3 s passed
          p.OnConnectFailed(now, ConnectFailure::kTimedOut, c.place);
          conns.erase(id);
          ++r.timed_out;
          ++waiting;  // the request waits for another connection
          continue;
        }
        syn_arrivals.emplace(now + std::chrono::seconds(1 << (tries - 1)), id);
        continue;
      }
      p.OnConnected(now, now - c.attempted, c.place);
      accept_queue.push_back(id);
    }
    // The executor's threads take queued connections.
    while (!accept_queue.empty() && serving.size() < ex.threads) {
      serving.emplace(now + ex.serve, accept_queue.front());
      accept_queue.pop_front();
    }
    // The admin: pooled connections first, then new ones as the policy allows.
    while (waiting > 0 && !idle.empty()) {
      const int id = idle.back();
      idle.pop_back();
      serving.emplace(now + ex.serve, id);  // a kept connection keeps its thread: served at once
      --waiting;
    }
    while (waiting > 0 && p.MayOpen(now, start)) {
      const int id = next_id++;
      Conn& c = conns[id];
      c.place = p.OnAttempt(now);
      c.attempted = now;
      syn_arrivals.emplace(now + ex.connect, id);
      --waiting;
    }
    if (now - start > std::chrono::seconds(60)) break;  // a bound for a broken policy; asserted below
    clock.Advance(10us);
  }
  r.took = std::chrono::duration_cast<milliseconds>(clock.SteadyNow() - start);
  return r;
}

TEST_F(ConnectionPolicyTest, AnExecutorClosingEachConnectionAfterOneAnswerIsServedAtTheRateItAnswers) {
  // 5,000 requests, each on a connection of its own, to an executor that accepts at once and answers in
  // 100 µs on 8 threads. A fixed pace of 2 connection attempts per 5 ms (the client before this policy)
  // would take 12.5 s; opened as fast as it answers, they take what its threads need.
  const auto r = Simulate(clock_, {.threads = 8, .serve = 100us, .requests_per_connection = 1}, 5000, 16);
  std::printf("[closing after 1] 5000 requests: %lld ms simulated, %d dropped SYNs\n",
              static_cast<long long>(r.took.count()), r.dropped_syns);
  EXPECT_EQ(r.answered, 5000);
  EXPECT_EQ(r.dropped_syns, 0);
  EXPECT_LT(r.took, 500ms);  // simulated time; 8 threads x 100 µs serve 5,000 in 63 ms at best
}

TEST_F(ConnectionPolicyTest, AnExecutorClosingAfterFiveAnswersNeedsAFifthOfTheConnections) {
  const auto r = Simulate(clock_, {.threads = 8, .serve = 100us, .requests_per_connection = 5}, 5000, 16);
  EXPECT_EQ(r.answered, 5000);
  EXPECT_EQ(r.dropped_syns, 0);
  EXPECT_LT(r.took, 500ms);
}

TEST_F(ConnectionPolicyTest, ASingleThreadedExecutorWithABacklogOfFiveSettlesUnderWhatItsBacklogHolds) {
  // Python's http.server as HTTP/1.0: one thread, 1 ms per request, a connection per request, backlog 5.
  // The window may overflow the backlog while it learns (a dropped SYN costs that request 1 s), then
  // stays under it: every request answered, and few SYNs ever dropped.
  const auto r =
      Simulate(clock_, {.backlog = 5, .threads = 1, .serve = 1ms, .requests_per_connection = 1}, 3000, 16);
  std::printf("[backlog 5, one thread] 3000 requests: %lld ms simulated, %d dropped SYNs\n",
              static_cast<long long>(r.took.count()), r.dropped_syns);
  EXPECT_EQ(r.answered, 3000);
  EXPECT_EQ(r.timed_out, 0);
  EXPECT_LE(r.dropped_syns, 3);
  EXPECT_LT(r.took, 5s);  // 3 s of serving, at most a few 1 s retransmissions overlapping it
}

}  // namespace
