#include "job_log.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "cwtest/fake_clock.hpp"
#include "test_util.hpp"

namespace {

using namespace cwtest::executor_test;

void AppendRaw(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::app | std::ios::binary);
  out << text;
}

std::string Lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i)
    s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST(JobLog, UtcDayAndTimestamp) {
  EXPECT_EQ(cronwheel::executor::UtcDay(kDay), "2026-01-01");
  EXPECT_EQ(cronwheel::executor::UtcDay(kDay - 1), "2025-12-31");
  EXPECT_EQ(cronwheel::executor::UtcTimestamp(kDay + 3723004), "2026-01-01 01:02:03.004");
  EXPECT_EQ(cronwheel::executor::UtcDay(0), "1970-01-01");
}

// A JobLogFiles with the default caps over a fresh directory, on a fake clock.
class JobLogFilesTest : public ::testing::Test {
 protected:
  cwtest::TempDir dir;
  cwtest::FakeClock clock;
  JobLogFiles logs{{dir.path()}, clock};
};

TEST_F(JobLogFilesTest, PathIsDayFolderAndLogIdOnly) {
  EXPECT_EQ(logs.PathFor(kDay + 5, 42), dir.path() / "2026-01-01" / "42.log");
  EXPECT_EQ(logs.PathFor(kDay, -7), dir.path() / "2026-01-01" / "-7.log");
}

TEST_F(JobLogFilesTest, MissingFileIsTheEnd) {
  const auto r = logs.Read(LogParam{kDay, 9, 1});
  EXPECT_TRUE(r.is_end);
  EXPECT_EQ(r.to_line_num, 0);
  EXPECT_EQ(r.log_content, "readLog fail, logFile not exists");
}

TEST(JobLog, ALogWithoutItsOwnFileIsASegmentRecord) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock(kDay + 1000);
  JobLogFiles logs({dir.path()}, clock);
  logs.Append(kDay, 1, "hello");
  logs.Append(kDay, 2, "other");
  logs.Append(kDay, 1, "again\n");
  EXPECT_FALSE(std::filesystem::exists(logs.PathFor(kDay, 1)));  // no file per fire
  EXPECT_EQ(logs.Text(kDay, 1), "2026-01-01 00:00:01.000 hello\n2026-01-01 00:00:01.000 again\n");
  const auto r = logs.Read(LogParam{kDay, 1, 2});
  EXPECT_EQ(r.log_content, "2026-01-01 00:00:01.000 again\n");
  EXPECT_EQ(r.to_line_num, 2);
  EXPECT_FALSE(r.is_end);
  // The segment format (docs/operations.md, "Executor job logs"): a header line per record, then its lines.
  EXPECT_EQ(cwtest::ReadAll(dir.path() / "2026-01-01" / "fires-000001.seg"),
            "#cwlog 1 30\n2026-01-01 00:00:01.000 hello\n#cwlog 2 30\n2026-01-01 00:00:01.000 other\n"
            "#cwlog 1 30\n2026-01-01 00:00:01.000 again\n");
}

TEST(JobLog, AppendToAnOwnFileEndsAChildsUnterminatedLine) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock(kDay + 1000);
  JobLogFiles logs({dir.path()}, clock);
  AppendRaw(logs.PathFor(kDay, 1), "raw output without newline");
  logs.Append(kDay, 1, "after\n");
  EXPECT_EQ(cwtest::ReadAll(logs.PathFor(kDay, 1)),
            "raw output without newline\n2026-01-01 00:00:01.000 after\n");
  EXPECT_EQ(logs.segments().RecordsAppended(), 0U);
}

TEST_F(JobLogFilesTest, PollsReturnNewLinesAndScanOnlyNewBytes) {
  const auto path = logs.PathFor(kDay, 5);
  AppendRaw(path, Lines(1, 3));
  auto r = logs.Read(LogParam{kDay, 5, 1});
  EXPECT_EQ(r.log_content, Lines(1, 3));
  EXPECT_EQ(r.from_line_num, 1);
  EXPECT_EQ(r.to_line_num, 3);
  EXPECT_FALSE(r.is_end);
  const auto scanned = logs.BytesScanned();
  EXPECT_EQ(scanned, Lines(1, 3).size());

  // Nothing new: toLineNum 0 (dialect B), nothing re-read.
  r = logs.Read(LogParam{kDay, 5, 4});
  EXPECT_EQ(r.to_line_num, 0);
  EXPECT_EQ(r.log_content, "");
  EXPECT_EQ(logs.BytesScanned(), scanned);

  // Append (with a line still being written), poll from the next line: only the new bytes are scanned.
  AppendRaw(path, Lines(4, 5) + "partial");
  r = logs.Read(LogParam{kDay, 5, 4});
  EXPECT_EQ(r.log_content, Lines(4, 5));
  EXPECT_EQ(r.to_line_num, 5);
  EXPECT_EQ(logs.BytesScanned(), scanned + (Lines(4, 5) + "partial").size());

  AppendRaw(path, " done\n");
  r = logs.Read(LogParam{kDay, 5, 6});
  EXPECT_EQ(r.log_content, "partial done\n");
  EXPECT_EQ(r.to_line_num, 6);

  // An old line is still served from the index.
  r = logs.Read(LogParam{kDay, 5, 2});
  EXPECT_EQ(r.log_content, Lines(2, 5) + "partial done\n");
  EXPECT_EQ(r.to_line_num, 6);
}

TEST_F(JobLogFilesTest, SeeksThroughCheckpointsOfALongLog) {
  AppendRaw(logs.PathFor(kDay, 6), Lines(1, 1000));
  for (int from : {1, 63, 64, 65, 128, 129, 500, 999, 1000}) {
    const auto r = logs.Read(LogParam{kDay, 6, from});
    EXPECT_EQ(r.log_content, Lines(from, 1000)) << from;
    EXPECT_EQ(r.to_line_num, 1000);
  }
  EXPECT_EQ(logs.Read(LogParam{kDay, 6, 1001}).to_line_num, 0);
}

TEST(JobLog, ByteCapStreamsAHugeLogInPiecesAtLineBoundaries) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock;
  JobLogFiles logs({dir.path(), 100}, clock);      // 100 bytes per answer
  AppendRaw(logs.PathFor(kDay, 7), Lines(1, 50));  // "line N\n" = 7..8 bytes
  std::string all;
  int from = 1;
  int calls = 0;
  while (true) {
    const auto r = logs.Read(LogParam{kDay, 7, from});
    if (r.to_line_num == 0) break;
    EXPECT_LE(r.log_content.size(), 100U);
    EXPECT_EQ(r.log_content.back(), '\n');
    all += r.log_content;
    from = r.to_line_num + 1;
    ++calls;
  }
  EXPECT_EQ(all, Lines(1, 50));
  EXPECT_GT(calls, 3);
}

TEST(JobLog, ALineLongerThanTheCapIsCutAndCounted) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock;
  JobLogFiles logs({dir.path(), 100}, clock);
  AppendRaw(logs.PathFor(kDay, 8), std::string(300, 'x') + "\nnext\n");
  auto r = logs.Read(LogParam{kDay, 8, 1});
  EXPECT_EQ(r.to_line_num, 1);
  EXPECT_THAT(r.log_content, HasSubstr(std::string(100, 'x') + " [... line cut at 100 bytes]"));
  r = logs.Read(LogParam{kDay, 8, 2});
  EXPECT_EQ(r.log_content, "next\n");
  EXPECT_EQ(r.to_line_num, 2);
}

TEST_F(JobLogFilesTest, AReplacedOrTruncatedFileIsReindexed) {
  const auto path = logs.PathFor(kDay, 9);
  AppendRaw(path, Lines(1, 10));
  EXPECT_EQ(logs.Read(LogParam{kDay, 9, 1}).to_line_num, 10);
  std::filesystem::remove(path);
  AppendRaw(path, "other\n");
  const auto r = logs.Read(LogParam{kDay, 9, 1});
  EXPECT_EQ(r.log_content, "other\n");
  EXPECT_EQ(r.to_line_num, 1);
}

TEST(JobLog, IndexCacheIsBounded) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock;
  JobLogFiles logs({dir.path(), 1024, 4}, clock);
  for (int id = 1; id <= 10; ++id) {
    AppendRaw(logs.PathFor(kDay, id), "x\n");
    EXPECT_EQ(logs.Read(LogParam{kDay, id, 1}).to_line_num, 1);
  }
  EXPECT_EQ(logs.CachedIndexes(), 4U);
}

// A JobLogFiles with the default caps over a fresh directory, its clock at the start of kDay.
class JobLogAtDayStartTest : public ::testing::Test {
 protected:
  cwtest::TempDir dir;
  cwtest::FakeClock clock{kDay};
  JobLogFiles logs{{dir.path()}, clock};
};

TEST_F(JobLogAtDayStartTest, JobLogFileIsTheFiresSinkAndPathGivesItItsOwnFile) {
  JobLogFile f(logs, kDay, 11);
  f.Write("a");
  f.WriteLines({"b\n", "c"});
  const std::string lines =
      "2026-01-01 00:00:00.000 a\n2026-01-01 00:00:00.000 b\n2026-01-01 00:00:00.000 c\n";
  EXPECT_FALSE(std::filesystem::exists(logs.PathFor(kDay, 11)));
  EXPECT_EQ(logs.Read(LogParam{kDay, 11, 1}).log_content, lines);
  EXPECT_EQ(logs.segments().RecordsAppended(), 2U);  // one record per Write

  EXPECT_EQ(f.Path(), logs.PathFor(kDay, 11));  // the lines so far are copied into the new file
  EXPECT_EQ(cwtest::ReadAll(logs.PathFor(kDay, 11)), lines);
  f.Write("d");
  EXPECT_EQ(logs.Read(LogParam{kDay, 11, 4}).log_content, "2026-01-01 00:00:00.000 d\n");
  EXPECT_EQ(logs.segments().RecordsAppended(), 2U);
}

// The fire output archive: what a fire's log holds at its end, for its callback, without reading the log
// back (kept as written) or, once it has its own file (a script's), from that file's head and tail; a fire
// that ends elsewhere is read back (JobLogFiles::Kept). Without callback_log_bytes nothing is kept.
TEST(JobLogKept, AFiresLogIsKeptForItsCallbackAsWrittenOrReadFromItsOwnFile) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock{kDay};
  JobLogFiles logs{{.dir = dir.path(), .callback_log_bytes = 2048}, clock};
  {
    JobLogFile f(logs, kDay, 1);
    f.Write("a");
    f.WriteLines({"b", "c"});
    const auto kept = f.Kept();
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->text, logs.Text(kDay, 1).value_or("?"));
    EXPECT_EQ(kept->left_out, 0U);
  }
  {
    JobLogFile f(logs, kDay, 2);
    f.Write("start");
    AppendRaw(f.Path(), Lines(1, 1000));  // a script's output, written to the fire's own file
    f.Write("end");
    const auto kept = f.Kept();
    ASSERT_TRUE(kept);
    const auto whole = logs.Text(kDay, 2).value_or("");
    EXPECT_EQ(kept->size, whole.size());
    EXPECT_GT(kept->left_out, 0U);
    EXPECT_THAT(kept->text, HasSubstr("00:00:00.000 start\nline 1\n"));
    EXPECT_THAT(kept->text, HasSubstr("line 1000\n2026-01-01 00:00:00.000 end\n"));
    EXPECT_EQ(kept->text, cronwheel::KeepHeadAndTail(whole, 2048).text) << "only its head and tail were read";
  }
  {
    JobLogFile f(logs, kDay, 3);
    f.Write("running");
  }
  logs.Append(kDay, 3, "timed out");  // the end line of a fire reported away from its worker
  const auto back = logs.Kept(kDay, 3);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->text, logs.Text(kDay, 3).value_or("?"));
  EXPECT_EQ(logs.Kept(kDay, 99)->text, "") << "no log: an empty one";

  JobLogFiles off{{.dir = dir.path() / "off"}, clock};
  JobLogFile f(off, kDay, 4);
  f.Write("a");
  EXPECT_FALSE(f.Kept());
  EXPECT_FALSE(off.Kept(kDay, 4));
}

TEST_F(JobLogAtDayStartTest, AFiresLogGivenToAScriptEndsTheScriptsUnterminatedLineBeforeItsNextEntry) {
  JobLogFile f(logs, kDay, 12);
  f.Write("start");
  AppendRaw(f.Path(), "script output without newline");  // whoever asked for the path may write to it
  f.Write("end");
  EXPECT_EQ(cwtest::ReadAll(logs.PathFor(kDay, 12)),
            "2026-01-01 00:00:00.000 start\nscript output without newline\n2026-01-01 00:00:00.000 end\n");
}

// The callback's line goes where the fire's log is: its own file if it has one (made by this process, or
// found in the day folder, as an earlier process or version left it), else a segment record; the segment
// records of one day go in one write.
TEST_F(JobLogAtDayStartTest, TheCallbackLineGoesWhereTheLogIs) {
  AppendRaw(logs.PathFor(kDay, 5), "an earlier process's line\n");
  {
    JobLogFile plain(logs, kDay, 1);
    plain.Write("end");
    JobLogFile script(logs, kDay, 2);
    script.Write("start");
    AppendRaw(script.Path(), "script output without newline");
  }
  const auto records = logs.segments().RecordsAppended();
  logs.AppendEach({{kDay, 1}, {kDay, 2}, {kDay, 3}, {kDay + 86'400'000, 1}}, "callback");
  EXPECT_EQ(logs.segments().RecordsAppended(), records + 3);  // 1, 3 and the next day's 1
  EXPECT_EQ(logs.Text(kDay, 1), "2026-01-01 00:00:00.000 end\n2026-01-01 00:00:00.000 callback\n");
  EXPECT_EQ(
      cwtest::ReadAll(logs.PathFor(kDay, 2)),
      "2026-01-01 00:00:00.000 start\nscript output without newline\n2026-01-01 00:00:00.000 callback\n");
  logs.Append(kDay, 5, "callback");
  EXPECT_EQ(cwtest::ReadAll(logs.PathFor(kDay, 5)),
            "an earlier process's line\n2026-01-01 00:00:00.000 callback\n");
  EXPECT_EQ(logs.segments().RecordsAppended(), records + 3);
  EXPECT_EQ(logs.Text(kDay, 3), "2026-01-01 00:00:00.000 callback\n");
  EXPECT_EQ(logs.Text(kDay + 86'400'000, 1), "2026-01-01 00:00:00.000 callback\n");
  EXPECT_EQ(logs.Text(kDay, 4), std::nullopt);
}

// Lines appended through JobLogFiles (a timeout's end line, the callback's) while a fire's log is given its
// own file land after the lines copied into it, in order, each once: none is left in a segment record that
// /log no longer reads, and none comes before the copy.
TEST_F(JobLogAtDayStartTest, LinesAppendedWhileAFileIsMadeAreNeitherLostNorOutOfOrder) {
  constexpr int kRounds = 40;
  constexpr int kLines = 20;
  for (int round = 0; round < kRounds; ++round) {
    const std::int64_t id = 100 + round;
    JobLogFile f(logs, kDay, id);
    f.Write("start");
    std::jthread appender([&] {
      for (int i = 0; i < kLines; ++i)
        logs.Append(kDay, id, "line " + std::to_string(i));
    });
    ASSERT_EQ(f.Path(), logs.PathFor(kDay, id));
    appender.join();
    std::string want = "2026-01-01 00:00:00.000 start\n";
    for (int i = 0; i < kLines; ++i)
      want += "2026-01-01 00:00:00.000 line " + std::to_string(i) + "\n";
    ASSERT_EQ(cwtest::ReadAll(logs.PathFor(kDay, id)), want) << "round " << round;
    EXPECT_EQ(logs.Read(LogParam{kDay, id, 1}).to_line_num, kLines + 1);
  }
}

TEST_F(JobLogAtDayStartTest, ADayFolderRemovedWhileTheExecutorRunsIsCreatedAgain) {
  logs.Append(kDay, 1, "first");
  std::filesystem::remove_all(dir.path() / "2026-01-01");
  JobLogFile f(logs, kDay, 2);
  f.Write("second");
  logs.Append(kDay, 3, "third");
  EXPECT_THAT(logs.Text(kDay, 2).value_or(""), HasSubstr("second"));
  EXPECT_THAT(logs.Text(kDay, 3).value_or(""), HasSubstr("third"));
  EXPECT_EQ(logs.Text(kDay, 1), std::nullopt);
  std::filesystem::remove_all(dir.path());  // the whole log dir, too
  logs.Append(kDay, 4, "fourth");
  EXPECT_THAT(logs.Text(kDay, 4).value_or(""), HasSubstr("fourth"));
}

TEST(JobLog, ASegmentLogIsReadInPiecesAtLineBoundariesAndALongLineIsCut) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock(kDay);
  JobLogFiles logs({dir.path(), 100}, clock);  // 100 bytes per answer
  JobLogFile f(logs, kDay, 7);
  for (int i = 1; i <= 20; ++i)
    f.Write("line " + std::to_string(i));
  f.Write(std::string(300, 'x'));
  std::string all;
  int from = 1;
  int calls = 0;
  for (auto r = logs.Read(LogParam{kDay, 7, from}); r.to_line_num != 0;
       r = logs.Read(LogParam{kDay, 7, from})) {
    EXPECT_LE(r.log_content.size(), 100U + 40U);  // a cut line carries its mark
    EXPECT_EQ(r.log_content.back(), '\n');
    all += r.log_content;
    from = r.to_line_num + 1;
    ++calls;
  }
  EXPECT_EQ(from, 22);
  EXPECT_GT(calls, 5);
  EXPECT_THAT(all, HasSubstr("00.000 line 20\n2026-01-01 00:00:00.000 xxx"));
  EXPECT_THAT(all, HasSubstr(" [... line cut at 100 bytes]\n"));
}

// Issue 21: job logs were world-readable (0644). Every file the job log writes (segments, their indexes,
// a fire's own file) is the owner's only, and so is every folder it makes, whatever the umask.
TEST(JobLog, FilesAndFoldersAreTheOwnersOnlyWhateverTheUmask) {
  const cwtest::ZeroUmask umask0;
  cwtest::TempDir dir;
  cwtest::FakeClock clock(kDay + 1000);
  const auto logs_dir = dir.path() / "logs" / "executor";  // neither exists yet
  {
    JobLogFiles logs({.dir = logs_dir, .segment_bytes = 200}, clock);
    for (int i = 1; i <= 10; ++i)  // rotates past 200 bytes: closed segments get their index files
      logs.Append(kDay, i, "a line of a fire in a segment");
    JobLogFile own(logs, kDay, 42);
    own.Write("before the script");
    ASSERT_FALSE(own.Path().empty());  // the fire's own file, as a script job gets
    own.Write("after it");
  }
  ASSERT_TRUE(std::filesystem::exists(logs_dir / "2026-01-01" / "42.log"));
  ASSERT_TRUE(std::filesystem::exists(logs_dir / "2026-01-01" / "fires-000001.idx"));
  EXPECT_THAT(cwtest::NotOwnerOnly(dir.path() / "logs"), ::testing::IsEmpty());
}

TEST(JobLog, RetentionDeletesOnlyOldDayFolders) {
  cwtest::TempDir dir;
  cwtest::FakeClock clock(kDay + 12LL * 3600 * 1000);  // 2026-01-01 noon
  JobLogFiles logs({dir.path()}, clock);
  for (const char* d : {"2025-12-01", "2025-12-02", "2025-12-03", "2025-12-30", "2026-01-01"}) {
    std::filesystem::create_directories(dir.path() / d);
  }
  std::filesystem::create_directories(dir.path() / "gluesource");
  std::filesystem::create_directories(dir.path() / "2025-13-01");  // not a date: kept
  EXPECT_EQ(logs.DeleteExpired(2), 0);                             // < 3 = off
  EXPECT_EQ(logs.DeleteExpired(30), 2);                            // 12-01 (31 days), 12-02 (30 days)
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "2025-12-01"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "2025-12-02"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "2025-12-03"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "gluesource"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "2025-13-01"));
}

TEST_F(JobLogAtDayStartTest, RetentionRunsDailyOnTheClock) {
  LogRetention retention({3, std::chrono::hours(24)}, logs, clock);
  retention.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));                              // the first pass ran; waiting a day
  std::filesystem::create_directories(dir.path() / "2025-12-29");  // 3 days old tomorrow... 4 then
  clock.Advance(std::chrono::hours(24));
  ASSERT_TRUE(clock.AwaitWaiters(1));  // the second pass ran
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "2025-12-29"));
  retention.Stop();
}

}  // namespace
