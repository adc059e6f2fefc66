// The login throttle (admin/auth/login_throttle.hpp) on instants the test chooses: the back-off, familiar
// addresses, atomic admission, forgetting, and the memory bounds. Table-driven: each case is a sequence of
// steps (an attempt with its outcome, or time passing) and what each attempt must be answered.
#include "admin/auth/login_throttle.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using cronwheel::admin::LoginThrottle;
using std::chrono::milliseconds;

constexpr std::int64_t kT0 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

enum class Outcome { kWrong, kRight, kNone };  // what the password check found (kNone: it threw)

// One step: `advance_ms` passes, then (when `user` is set) an attempt from `address`, which must be
// admitted or refused with `wait_ms`; when admitted, its outcome is reported.
struct Step {
  std::int64_t advance_ms = 0;
  std::optional<std::string> user;
  std::string address;
  Outcome outcome = Outcome::kWrong;
  std::optional<std::int64_t> wait_ms;  // nullopt: admitted
};

Step Wrong(std::string user, std::string address) {
  return {.user = std::move(user), .address = std::move(address), .outcome = Outcome::kWrong};
}
Step Right(std::string user, std::string address) {
  return {.user = std::move(user), .address = std::move(address), .outcome = Outcome::kRight};
}
Step Refused(std::string user, std::string address, std::int64_t wait_ms) {
  return {.user = std::move(user), .address = std::move(address), .wait_ms = wait_ms};
}
Step Pass(std::int64_t ms) {
  return {.advance_ms = ms};
}

struct Case {
  const char* name;
  std::vector<Step> steps;
};

// Default settings: 5 free failures, then 1 s doubling up to 15 min; forgotten 5 min after the last wait.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  {
    Case c{"five failures are free, then 1 s, 2 s, 4 s: each for the address and the user name"};
    for (int i = 0; i < 5; ++i)
      c.steps.push_back(Wrong("alice", "10.0.0.1"));
    c.steps.push_back(Refused("alice", "10.0.0.1", 1000));
    c.steps.push_back(Refused("bob", "10.0.0.1", 1000));    // the address waits, for any name
    c.steps.push_back(Refused("alice", "10.0.0.2", 1000));  // the name waits, from any unknown address
    c.steps.push_back(Right("bob", "10.0.0.2"));            // others are not touched
    c.steps.push_back(Pass(999));
    c.steps.push_back(Refused("alice", "10.0.0.1", 1));
    c.steps.push_back(Pass(1));
    c.steps.push_back(Wrong("alice", "10.0.0.1"));
    c.steps.push_back(Refused("alice", "10.0.0.1", 2000));
    c.steps.push_back(Pass(2000));
    c.steps.push_back(Wrong("alice", "10.0.0.1"));
    c.steps.push_back(Refused("alice", "10.0.0.1", 4000));
    cases.push_back(c);
  }
  {
    Case c{"the wait stops doubling at 15 min"};
    for (int i = 0; i < 5; ++i)
      c.steps.push_back(Wrong("alice", "10.0.0.1"));
    for (std::int64_t wait = 1000; wait < 900'000; wait *= 2) {
      c.steps.push_back(Pass(wait));
      c.steps.push_back(Wrong("alice", "10.0.0.1"));
    }
    c.steps.push_back(Refused("alice", "10.0.0.1", 900'000));
    c.steps.push_back(Pass(900'000));
    c.steps.push_back(Wrong("alice", "10.0.0.1"));
    c.steps.push_back(Refused("alice", "10.0.0.1", 900'000));
    cases.push_back(c);
  }
  {
    Case c{"a familiar address is held only to its own failures"};
    c.steps.push_back(Right("alice", "10.0.0.9"));  // alice signs in from .9: familiar
    for (int i = 0; i < 5; ++i) {
      c.steps.push_back(Wrong("alice", fmt::format("10.0.1.{}", i)));  // guesses from 5 addresses
    }
    c.steps.push_back(Refused("alice", "10.0.2.1", 1000));  // the name waits, from a 6th
    c.steps.push_back(Right("alice", "10.0.0.9"));          // her own address does not
    c.steps.push_back(Wrong("alice", "10.0.0.9"));          // her own typos count on her address only
    c.steps.push_back(Right("alice", "10.0.0.9"));
    c.steps.push_back(Refused("alice", "10.0.2.1", 1000));  // ... not on the name
    cases.push_back(c);
  }
  {
    Case c{"a familiar address is limited by its own failures"};
    c.steps.push_back(Right("alice", "10.0.0.9"));
    for (int i = 0; i < 5; ++i)
      c.steps.push_back(Wrong("alice", "10.0.0.9"));
    c.steps.push_back(Refused("alice", "10.0.0.9", 1000));
    c.steps.push_back(Right("alice", "10.0.0.8"));  // the name is not charged: another address may sign in
    cases.push_back(c);
  }
  {
    Case c{"success forgets nothing: an account of one's own does not reset an address"};
    for (int i = 0; i < 4; ++i)
      c.steps.push_back(Wrong(fmt::format("victim{}", i), "10.0.0.1"));
    c.steps.push_back(Right("mallory", "10.0.0.1"));
    c.steps.push_back(Wrong("victim4", "10.0.0.1"));
    c.steps.push_back(Refused("victim5", "10.0.0.1", 1000));
    cases.push_back(c);
  }
  {
    Case c{"failures are forgotten 5 min after the last one and its wait"};
    for (int i = 0; i < 6; ++i) {
      c.steps.push_back(Wrong("alice", "10.0.0.1"));
      if (i == 4) c.steps.push_back(Pass(1000));
    }
    c.steps.push_back(Pass(2000 + 300'000 - 1));    // 2 s wait, then 5 min less 1 ms
    c.steps.push_back(Wrong("alice", "10.0.0.1"));  // the 7th failure: the count goes on
    c.steps.push_back(Refused("alice", "10.0.0.1", 4000));
    c.steps.push_back(Pass(4000 + 300'000));
    for (int i = 0; i < 5; ++i)  // forgotten: five free again
      c.steps.push_back(Wrong("alice", "10.0.0.1"));
    c.steps.push_back(Refused("alice", "10.0.0.1", 1000));
    cases.push_back(c);
  }
  {
    Case c{"names are compared in any case; a check that threw counts nothing"};
    for (int i = 0; i < 4; ++i)
      c.steps.push_back(Wrong(i % 2 ? "ALICE" : "alice", fmt::format("10.0.0.{}", i)));
    for (int i = 0; i < 3; ++i) {
      c.steps.push_back({.user = "Alice", .address = fmt::format("10.0.1.{}", i), .outcome = Outcome::kNone});
    }
    c.steps.push_back(Wrong("aLiCe", "10.0.0.9"));
    c.steps.push_back(Refused("alice", "10.0.0.10", 1000));
    cases.push_back(c);
  }
  return cases;
}

// Runs the steps of `c` on `throttle`.
void RunSteps(const Case& c, LoginThrottle& throttle) {
  {
    SCOPED_TRACE(c.name);
    std::int64_t now = kT0;
    int n = 0;
    for (const auto& step : c.steps) {
      now += step.advance_ms;
      if (!step.user) continue;
      ++n;
      SCOPED_TRACE(fmt::format("attempt {}: {} from {} at +{} ms", n, *step.user, step.address, now - kT0));
      auto a = throttle.BeginLogin(*step.user, step.address, now);
      if (step.wait_ms) {
        EXPECT_FALSE(a.ticket.has_value()) << "admitted, expected a wait of " << *step.wait_ms << " ms";
        EXPECT_EQ(a.retry_after.count(), *step.wait_ms);
        continue;
      }
      ASSERT_TRUE(a.ticket.has_value()) << "refused for " << a.retry_after.count() << " ms";
      if (step.outcome == Outcome::kWrong) a.ticket->Failed(now);
      if (step.outcome == Outcome::kRight) a.ticket->Succeeded(now);
    }
  }
}

TEST(LoginThrottle, AnswersEachAttemptAsTheTableSays) {
  for (const auto& c : Cases()) {
    LoginThrottle throttle(LoginThrottle::Settings{});
    RunSteps(c, throttle);
  }
}

// Security review 2, F5 (a): the address key applied to every login, so five wrong guesses from a user's own
// address (a NAT, a proxy shared with others) locked the user out there too. A familiar address is now held
// to a key of the user's own there, which neither the address's other traffic nor the user's failures
// elsewhere touch, and the user's own typos there are not charged to the address.
TEST(LoginThrottle, F5a_GuessesFromASharedAddressDoNotLockOutTheUsersFamiliarWithIt) {
  const std::vector<Case> cases = {
      {"others' failures at alice's address make it wait for them, not for alice",
       {Right("alice", "10.0.0.9"), Wrong("mallory", "10.0.0.9"), Wrong("bob", "10.0.0.9"),
        Wrong("carol", "10.0.0.9"), Wrong("dave", "10.0.0.9"), Wrong("erin", "10.0.0.9"),
        Refused("frank", "10.0.0.9", 1000), Refused("bob", "10.0.0.9", 1000), Right("alice", "10.0.0.9"),
        Wrong("alice", "10.0.0.9"), Right("ALICE", "10.0.0.9")}},
      {"alice's typos at her address are hers: the address still admits others",
       {Right("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"),
        Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"),
        Refused("alice", "10.0.0.9", 1000), Wrong("bob", "10.0.0.9"), Wrong("bob", "10.0.0.9"),
        Wrong("bob", "10.0.0.9"), Wrong("bob", "10.0.0.9"), Right("carol", "10.0.0.9"),
        Right("alice", "10.0.0.8")}},
      {"someone at alice's address guessing alice has the back-off of her key there, no more",
       {Right("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"),
        Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"), Wrong("alice", "10.0.0.9"),
        Refused("alice", "10.0.0.9", 1000), Pass(1000), Wrong("alice", "10.0.0.9"),
        Refused("alice", "10.0.0.9", 2000)}},
      {"an address familiar for alice is not familiar for bob: bob's guesses there share his name's key",
       {Right("alice", "10.0.0.9"), Wrong("bob", "10.0.0.9"), Wrong("bob", "10.0.0.9"),
        Wrong("bob", "10.0.0.9"), Wrong("bob", "10.0.0.9"), Wrong("bob", "10.0.0.9"),
        Refused("bob", "10.0.0.7", 1000), Refused("bob", "10.0.0.9", 1000), Right("alice", "10.0.0.9")}},
  };
  for (const auto& c : cases) {
    LoginThrottle throttle(LoginThrottle::Settings{});
    RunSteps(c, throttle);
  }
}

// Security review 2, F5 (b): familiar addresses lived in the throttle's memory only. They are now kept by a
// FamiliarAddresses store (PostgreSQL in production: tests/pg/console_test.cpp restarts the service on one
// database); a new throttle on the same store knows them.
TEST(LoginThrottle, F5b_ANewThrottleOnTheSameStoreKnowsTheFamiliarAddresses) {
  cronwheel::admin::MemoryFamiliarAddresses store({});
  {
    LoginThrottle before(LoginThrottle::Settings{}, &store);
    before.BeginLogin("Alice", "10.0.0.9", kT0).ticket->Succeeded(kT0);
  }
  LoginThrottle after(LoginThrottle::Settings{}, &store);
  EXPECT_TRUE(after.Familiar("alice", "10.0.0.9", kT0 + 1));
  RunSteps({"guesses from elsewhere after the restart do not lock alice out of her address",
            {Wrong("alice", "10.0.1.1"), Wrong("alice", "10.0.1.2"), Wrong("alice", "10.0.1.3"),
             Wrong("alice", "10.0.1.4"), Wrong("alice", "10.0.1.5"), Refused("alice", "10.0.1.6", 1000),
             Right("alice", "10.0.0.9")}},
           after);
}

// An attempt takes its place before its password is checked: while 5 are being checked, a 6th is refused
// at once (busy_wait), from the same address or for the same name from others.
TEST(LoginThrottle, AttemptsInFlightCountAgainstTheLimit) {
  LoginThrottle throttle(LoginThrottle::Settings{});
  std::vector<LoginThrottle::Ticket> checking;
  for (int i = 0; i < 5; ++i) {
    auto a = throttle.BeginLogin("alice", "10.0.0.1", kT0);
    ASSERT_TRUE(a.ticket) << i;
    checking.push_back(std::move(*a.ticket));
  }
  auto sixth = throttle.BeginLogin("alice", "10.0.0.1", kT0);
  EXPECT_FALSE(sixth.ticket);
  EXPECT_EQ(sixth.retry_after, milliseconds(1000));
  EXPECT_FALSE(throttle.BeginLogin("alice", "10.0.0.2", kT0).ticket) << "the name is at its limit too";
  EXPECT_TRUE(throttle.BeginLogin("bob", "10.0.0.2", kT0).ticket);
  // Two checks end uncounted (dropped: the check threw; a success would make 10.0.0.1 familiar for alice,
  // with a key of its own), three fail: 3 failures, room for 2 more.
  checking.erase(checking.begin());
  checking.erase(checking.begin());
  for (auto& t : checking)
    t.Failed(kT0);
  checking.clear();
  std::vector<LoginThrottle::Ticket> more;
  for (int i = 0; i < 2; ++i) {
    auto a = throttle.BeginLogin("alice", "10.0.0.1", kT0);
    ASSERT_TRUE(a.ticket) << i;
    more.push_back(std::move(*a.ticket));
  }
  EXPECT_FALSE(throttle.BeginLogin("alice", "10.0.0.1", kT0).ticket);
  for (auto& t : more)
    t.Failed(kT0);
  // At the limit, once the wait is over: one attempt at a time.
  auto one = throttle.BeginLogin("alice", "10.0.0.1", kT0 + 1000);
  ASSERT_TRUE(one.ticket);
  EXPECT_FALSE(throttle.BeginLogin("alice", "10.0.0.1", kT0 + 1000).ticket);
  one.ticket->Failed(kT0 + 1000);
  EXPECT_EQ(throttle.BeginLogin("alice", "10.0.0.1", kT0 + 1000).retry_after, milliseconds(2000));
}

TEST(LoginThrottle, OtherPasswordChecksUseAKeyOfTheirOwn) {
  LoginThrottle throttle(LoginThrottle::Settings{.max_failures = 2});
  for (int i = 0; i < 2; ++i)
    throttle.Begin("password:7", kT0).ticket->Failed(kT0);
  EXPECT_EQ(throttle.Begin("password:7", kT0).retry_after, milliseconds(1000));
  EXPECT_TRUE(throttle.Begin("password:8", kT0).ticket);
  EXPECT_TRUE(throttle.BeginLogin("7", "10.0.0.1", kT0).ticket);
}

TEST(LoginThrottle, MemoryStaysWithinItsBounds) {
  LoginThrottle throttle(LoginThrottle::Settings{.max_keys = 100, .familiar_per_user = 2, .max_users = 3});
  // 1,000 addresses guessing 1,000 names: at most 100 keys, the newest kept.
  for (int i = 0; i < 1000; ++i) {
    throttle.BeginLogin(fmt::format("user{}", i), fmt::format("10.{}.{}.1", i / 256, i % 256), kT0 + i)
        .ticket->Failed(kT0 + i);
  }
  EXPECT_LE(throttle.KeyCount(), 100u);
  // Successes leave no key behind.
  LoginThrottle clean(LoginThrottle::Settings{});
  for (int i = 0; i < 50; ++i)
    clean.BeginLogin("alice", fmt::format("10.0.0.{}", i), kT0).ticket->Succeeded(kT0);
  EXPECT_EQ(clean.KeyCount(), 0u);
  // Familiar addresses: the newest 2 per user, the 3 users who signed in last.
  for (int i = 0; i < 3; ++i)
    throttle.BeginLogin("alice", fmt::format("10.9.0.{}", i), kT0).ticket->Succeeded(kT0 + i);
  EXPECT_FALSE(throttle.Familiar("alice", "10.9.0.0", kT0 + 3));
  EXPECT_TRUE(throttle.Familiar("ALICE", "10.9.0.1", kT0 + 3));
  EXPECT_TRUE(throttle.Familiar("alice", "10.9.0.2", kT0 + 3));
  for (int u = 0; u < 3; ++u)
    throttle.BeginLogin(fmt::format("other{}", u), "10.9.1.1", kT0 + 10 + u).ticket->Succeeded(kT0 + 10 + u);
  EXPECT_FALSE(throttle.Familiar("alice", "10.9.0.2", kT0 + 20)) << "alice signed in longest ago: forgotten";
  EXPECT_TRUE(throttle.Familiar("other2", "10.9.1.1", kT0 + 20));
  // And familiarity lasts 30 days.
  EXPECT_FALSE(throttle.Familiar("other2", "10.9.1.1", kT0 + 12 + 30LL * 86'400'000));
}

}  // namespace
