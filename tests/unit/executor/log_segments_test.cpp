// LogSegments: records of many fires in a few files per day, rotation, the closed segments' indexes, a
// restart, a segment left without an index (or with a half-written record) by a crash, and group commit.
#include "log_segments.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

namespace {

using cronwheel::executor::LogSegments;
using cronwheel::executor::SegmentName;
using cronwheel::executor::SegmentNumbers;

constexpr const char* kToday = "2026-01-01";

std::string Line(int log, int n) {
  return "log " + std::to_string(log) + " line " + std::to_string(n) + " " + std::string(40, '.') + "\n";
}

class LogSegmentsTest : public ::testing::Test {
 protected:
  [[nodiscard]] std::filesystem::path Day() const { return dir_.path() / kToday; }
  // Appends line n of logs 1..logs, one record each, in one write.
  static void AppendRound(LogSegments& s, int logs, int n, std::vector<std::string>& texts) {
    std::vector<LogSegments::Record> records;
    texts.resize(static_cast<std::size_t>(logs) + 1);
    std::vector<std::string> lines;
    lines.reserve(static_cast<std::size_t>(logs));
    for (int log = 1; log <= logs; ++log)
      lines.push_back(Line(log, n));
    for (int log = 1; log <= logs; ++log) {
      records.push_back({log, lines[static_cast<std::size_t>(log) - 1]});
      texts[static_cast<std::size_t>(log)] += lines[static_cast<std::size_t>(log) - 1];
    }
    s.Append(kToday, records);
  }
  cwtest::TempDir dir_;
};

TEST_F(LogSegmentsTest, ALogSpreadOverRotatedSegmentsReadsWholeAndInOrder) {
  std::vector<std::string> texts;
  {
    LogSegments s({dir_.path(), 4096});
    for (int n = 1; n <= 60; ++n)
      AppendRound(s, 5, n, texts);  // 5 records of ~60 bytes a round: ~18 KB, several segments
    const auto segments = SegmentNumbers(Day());
    ASSERT_GE(segments.size(), 4U);
    // Every segment but the open one has its index.
    for (std::size_t i = 0; i + 1 < segments.size(); ++i)
      EXPECT_TRUE(std::filesystem::exists(Day() / SegmentName(segments[i], ".idx"))) << segments[i];
    EXPECT_FALSE(std::filesystem::exists(Day() / SegmentName(segments.back(), ".idx")));
    for (int log = 1; log <= 5; ++log)
      EXPECT_EQ(s.Read(kToday, log), texts[static_cast<std::size_t>(log)]) << log;
    EXPECT_EQ(s.Read(kToday, 6), std::nullopt);
    EXPECT_EQ(s.Read("2026-01-02", 1), std::nullopt);
    EXPECT_EQ(s.RecordsAppended(), 300U);
  }
  // Stopping indexed the open segment too.
  for (const int seq : SegmentNumbers(Day()))
    EXPECT_TRUE(std::filesystem::exists(Day() / SegmentName(seq, ".idx"))) << seq;
}

TEST_F(LogSegmentsTest, AfterARestartOldRecordsAreFoundAndNewOnesGoToANewSegment) {
  std::vector<std::string> texts;
  {
    LogSegments s({dir_.path()});
    AppendRound(s, 3, 1, texts);
  }
  LogSegments s({dir_.path()});
  AppendRound(s, 3, 2, texts);
  EXPECT_EQ(SegmentNumbers(Day()), (std::vector<int>{1, 2}));
  for (int log = 1; log <= 3; ++log)
    EXPECT_EQ(s.Read(kToday, log), texts[static_cast<std::size_t>(log)]) << log;
}

TEST_F(LogSegmentsTest, ASegmentACrashLeftWithoutAnIndexIsIndexedOnFirstReadAndACutRecordIsIgnored) {
  std::vector<std::string> texts;
  {
    LogSegments s({dir_.path()});
    AppendRound(s, 3, 1, texts);
    AppendRound(s, 3, 2, texts);
  }
  // As a crash leaves it: no index, and a record whose text was not all written.
  std::filesystem::remove(Day() / SegmentName(1, ".idx"));
  {
    std::ofstream out(Day() / SegmentName(1, ".seg"), std::ios::app | std::ios::binary);
    out << "#cwlog 2 500\nonly part of it";
  }
  LogSegments s({dir_.path()});
  EXPECT_EQ(s.Read(kToday, 2), texts[2]);
  EXPECT_TRUE(std::filesystem::exists(Day() / SegmentName(1, ".idx")));
  EXPECT_EQ(s.Read(kToday, 1), texts[1]);
  EXPECT_EQ(s.Read(kToday, 3), texts[3]);
}

TEST_F(LogSegmentsTest, AnIndexThatIsNotOneOrCoversLessThanTheSegmentIsRebuilt) {
  std::vector<std::string> texts;
  {
    LogSegments s({dir_.path()});
    AppendRound(s, 2, 1, texts);
  }
  {
    std::ofstream out(Day() / SegmentName(1, ".idx"), std::ios::trunc | std::ios::binary);
    out << "garbage";
  }
  {
    LogSegments s({dir_.path()});
    EXPECT_EQ(s.Read(kToday, 1), texts[1]);  // logged, and rebuilt from the record headers
  }
  // A record appended after the index was written (the index covers a shorter segment).
  {
    std::ofstream out(Day() / SegmentName(1, ".seg"), std::ios::app | std::ios::binary);
    out << "#cwlog 3 6\nlate!\n";
  }
  LogSegments s({dir_.path()});
  EXPECT_EQ(s.Read(kToday, 3), "late!\n");
  EXPECT_EQ(s.Read(kToday, 2), texts[2]);
}

TEST_F(LogSegmentsTest, ForgetClosesTheDaySoItsFolderCanGo) {
  std::vector<std::string> texts;
  LogSegments s({dir_.path()});
  AppendRound(s, 2, 1, texts);
  s.Forget(kToday);
  std::filesystem::remove_all(Day());
  EXPECT_EQ(s.Read(kToday, 1), std::nullopt);
  AppendRound(s, 2, 2, texts);
  EXPECT_EQ(s.Read(kToday, 1), Line(1, 2));
}

// Writers on several threads and a reader at once, with rotations: every record lands once, in order per
// log (tsan runs this too).
TEST_F(LogSegmentsTest, ConcurrentWritersAndReadersAcrossRotations) {
  LogSegments s({dir_.path(), 4096});
  constexpr int kThreads = 4;
  constexpr int kLines = 200;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      const auto text = s.Read(kToday, 1);
      if (text) {
        EXPECT_TRUE(text->starts_with(Line(1, 1))) << *text;
      }
    }
  });
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&s, t] {
      for (int n = 1; n <= kLines; ++n) {
        const auto line = Line(t + 1, n);
        s.Append(kToday, {{t + 1, line}});
      }
    });
  }
  for (auto& w : writers)
    w.join();
  done = true;
  reader.join();
  EXPECT_GT(SegmentNumbers(Day()).size(), 4U);
  for (int t = 1; t <= kThreads; ++t) {
    std::string want;
    for (int n = 1; n <= kLines; ++n)
      want += Line(t, n);
    EXPECT_EQ(s.Read(kToday, t), want) << t;
  }
}

// Group commit: while one thread is in its write, other Appends queue and return at once, and the writing
// thread writes them all in its next round, in the order they were appended.
TEST_F(LogSegmentsTest, AppendsMadeWhileAnotherThreadWritesQueueAndShareItsNextWrite) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false;
  bool release = false;
  int writes_seen = 0;
  LogSegments::Settings settings{dir_.path()};
  settings.before_write = [&] {
    std::unique_lock lock(m);
    if (++writes_seen != 1) return;  // only the first write is held
    held = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  auto release_writer = [&] {
    const std::lock_guard lock(m);
    release = true;
    cv.notify_all();
  };
  LogSegments s(settings);
  const std::string a1 = Line(1, 1);
  const std::string a2 = Line(1, 2);
  const std::string b1 = Line(2, 1);
  const std::string c1 = Line(3, 1);
  std::thread writer([&] { s.Append(kToday, {{1, a1}}); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return held; }));
  }
  // The writer is inside its write, holding the writing mutex: these return without waiting for it.
  std::promise<void> appended;
  std::thread others([&] {
    s.Append(kToday, {{1, a2}});
    s.Append(kToday, {{2, b1}, {3, c1}});
    appended.set_value();
  });
  const bool returned = appended.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  release_writer();
  others.join();
  writer.join();
  EXPECT_TRUE(returned) << "an Append waited for the thread that was writing";
  EXPECT_EQ(s.Writes(), 2U);  // its own record, then the three queued meanwhile in one write
  EXPECT_EQ(s.RecordsAppended(), 4U);
  EXPECT_EQ(s.Read(kToday, 1), a1 + a2);
  EXPECT_EQ(s.Read(kToday, 2), b1);
  EXPECT_EQ(s.Read(kToday, 3), c1);
}

}  // namespace
