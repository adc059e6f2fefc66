// A job log kept within a cap as its head and tail (cronwheel/head_tail.hpp), for the fire output archive.
#include "cronwheel/head_tail.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using cronwheel::HeadAndTail;
using cronwheel::KeepHeadAndTail;

// "line 0001\n" ... numbered lines of 10 bytes each.
std::string Lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "line %04d\n", i);
    out += buf;
  }
  return out;
}

TEST(HeadAndTail, ATextWithinTheCapIsKeptWholeAndUnchanged) {
  const auto text = Lines(1, 100);  // 1000 bytes
  const auto kept = KeepHeadAndTail(text, 1024);
  EXPECT_EQ(kept.text, text);
  EXPECT_EQ(kept.size, 1000u);
  EXPECT_EQ(kept.left_out, 0u);
  const auto exact = KeepHeadAndTail(Lines(1, 102) + "abcd", 1024);  // 1024 bytes: the cap exactly
  EXPECT_EQ(exact.left_out, 0u);
  EXPECT_EQ(exact.text.size(), 1024u);
}

TEST(HeadAndTail, ALongerTextKeepsItsFirstAndLastWholeLinesAndSaysHowManyBytesWereLeftOut) {
  const auto text = Lines(1, 1000);  // 10,000 bytes
  const auto kept = KeepHeadAndTail(text, 1024);
  EXPECT_EQ(kept.size, 10'000u);
  // 512 bytes of head: 51 whole lines (510 bytes); 512 of tail: the last 51 whole lines.
  EXPECT_EQ(kept.left_out, 10'000u - 510u - 510u);
  const auto marker = cronwheel::LeftOutMarker(kept.left_out, 10'000, 1024);
  EXPECT_EQ(kept.text, Lines(1, 51) + marker + Lines(950, 1000));
  EXPECT_NE(marker.find("8980 bytes of this log of 10000 bytes left out"), std::string::npos) << marker;
  EXPECT_EQ(marker.back(), '\n');
  EXPECT_EQ(marker.find('\n'), marker.size() - 1) << "one line";
}

TEST(HeadAndTail, AppendingInPiecesKeepsTheSameAsTheWholeTextAndHoldsBoundedMemory) {
  const auto text = Lines(1, 50'000);  // 500,000 bytes
  HeadAndTail keep(4096);
  for (std::size_t at = 0; at < text.size(); at += 7)
    keep.Append(std::string_view(text).substr(at, 7));
  EXPECT_EQ(keep.size(), text.size());
  const auto pieces = keep.Take();
  const auto whole = KeepHeadAndTail(text, 4096);
  EXPECT_EQ(pieces.text, whole.text);
  EXPECT_EQ(pieces.left_out, whole.left_out);
  EXPECT_LT(pieces.text.size(), 4096u + 200u);
  EXPECT_EQ(keep.size(), 0u) << "Take leaves it empty";
}

TEST(HeadAndTail, ALineLongerThanHalfTheCapIsCutOnACodePointBoundaryAndEnded) {
  // One line of 3,000 bytes of "é" (2 bytes each): the head's cut at 512 bytes falls between sequences, the
  // tail's too (an even count); shift by one byte so that both cuts fall inside a sequence.
  std::string text = "x";
  for (int i = 0; i < 1500; ++i)
    text += "\xC3\xA9";
  text += "\n";
  const auto kept = KeepHeadAndTail(text, 1024);
  ASSERT_GT(kept.left_out, 0u);
  const auto marker_at = kept.text.find("-----------");
  ASSERT_NE(marker_at, std::string::npos);
  const auto head = kept.text.substr(0, marker_at);
  EXPECT_EQ(head.back(), '\n') << "the cut head line is ended";
  EXPECT_EQ(head.size() % 2, 0u) << "x + whole é sequences + '\\n': no half sequence";
  const auto tail = kept.text.substr(kept.text.find('\n', marker_at) + 1);
  EXPECT_EQ(static_cast<unsigned char>(tail.front()), 0xC3u) << "the tail starts on a lead byte";
  EXPECT_EQ(kept.size - kept.left_out, (head.size() - 1) + tail.size());
}

TEST(HeadAndTail, SkippingAFilesMiddleCountsItAsLeftOut) {
  const auto text = Lines(1, 1000);
  HeadAndTail keep(1024);
  keep.Append(std::string_view(text).substr(0, keep.head_cap()));
  keep.Skip(text.size() - keep.head_cap() - keep.tail_cap());
  keep.Append(std::string_view(text).substr(text.size() - keep.tail_cap()));
  const auto kept = keep.Take();
  EXPECT_EQ(kept.size, 10'000u);
  EXPECT_EQ(kept.text, KeepHeadAndTail(text, 1024).text) << "as if it had read every byte";
}

// Any byte may come before the tail (a script's output need not be UTF-8): a 0xFF there once read as "the
// tail follows the head" (a sentinel of a signed char), and the tail kept the cut line's end.
TEST(HeadAndTail, TheTailStartsAtALineStartWhateverByteCameBeforeIt) {
  const std::string head = std::string(511, 'h') + "\n";
  const std::string window = std::string(100, 'P') + "\n" + std::string(411, 'q');  // the last 512 bytes
  const auto kept = KeepHeadAndTail(head + std::string(70'000, 'm') + "\xFF" + window, 1024);
  EXPECT_EQ(kept.text.substr(kept.text.size() - 412), "\n" + std::string(411, 'q'));
  EXPECT_EQ(kept.text.find('P'), std::string::npos) << "the line cut by the window is left out";
}

TEST(HeadAndTail, ACapBelowTheMinimumIsRaisedToIt) {
  HeadAndTail keep(10);
  EXPECT_EQ(keep.cap(), HeadAndTail::kMinCap);
  EXPECT_EQ(KeepHeadAndTail("", 0).text, "");
}

}  // namespace
