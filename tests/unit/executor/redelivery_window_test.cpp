// The log ids an executor remembers (executor/src/redelivery_window.hpp): active ones are repeats, finished
// ones are redeliveries until their window passes or the capacity pushes them out. Steady instants are
// plain values here: no clock, no threads.
#include "redelivery_window.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace cronwheel::executor {
namespace {

using namespace std::chrono_literals;
using Seen = RedeliveryWindow::Seen;

const ringwheel::SteadyTime kT0{std::chrono::hours(1)};

TEST(RedeliveryWindow, AnIdIsActiveUntilFinishedThenARedeliveryForTheWindowThenForgotten) {
  RedeliveryWindow w(600s, 100);
  EXPECT_EQ(w.Find(7, kT0), Seen::kNever);
  w.Activate(7);
  EXPECT_EQ(w.Find(7, kT0 + 1h), Seen::kActive) << "an active id never expires";
  w.Finish(7, kT0 + 1h);
  EXPECT_EQ(w.Find(7, kT0 + 1h + 599s), Seen::kFinished);
  EXPECT_TRUE(w.Knows(7));
  EXPECT_EQ(w.Find(7, kT0 + 1h + 600s), Seen::kNever) << "forgotten at the end of its window";
  EXPECT_FALSE(w.Knows(7));
  EXPECT_EQ(w.size(), 0U);
}

TEST(RedeliveryWindow, BeyondTheCapacityTheOldestFinishedIdsAreForgottenFirstAndActiveOnesKept) {
  RedeliveryWindow w(600s, 3);
  w.Activate(100);
  for (std::int64_t id = 1; id <= 5; ++id) {
    w.Activate(id);
    w.Finish(id, kT0 + std::chrono::seconds(id));
  }
  EXPECT_EQ(w.Find(1, kT0 + 10s), Seen::kNever);
  EXPECT_EQ(w.Find(2, kT0 + 10s), Seen::kNever);
  EXPECT_EQ(w.Find(3, kT0 + 10s), Seen::kFinished);
  EXPECT_EQ(w.Find(5, kT0 + 10s), Seen::kFinished);
  EXPECT_EQ(w.Find(100, kT0 + 10s), Seen::kActive) << "the capacity bounds finished ids only";
  EXPECT_EQ(w.size(), 4U);
}

// An id finished, accepted again (an admin's resend after the window's first part) and finished later: the
// first record's expiry must not forget the second.
TEST(RedeliveryWindow, AnIdFinishedTwiceIsKeptForItsLastWindow) {
  RedeliveryWindow w(600s, 100);
  w.Activate(9);
  w.Finish(9, kT0);
  w.Activate(9);
  EXPECT_EQ(w.Find(9, kT0 + 601s), Seen::kActive) << "the first window's end leaves the active id alone";
  w.Finish(9, kT0 + 601s);
  EXPECT_EQ(w.Find(9, kT0 + 1000s), Seen::kFinished);
  EXPECT_EQ(w.Find(9, kT0 + 1201s), Seen::kNever);
}

}  // namespace
}  // namespace cronwheel::executor
