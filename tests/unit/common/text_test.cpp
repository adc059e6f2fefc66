#include "cronwheel/text.hpp"

#include <gtest/gtest.h>

#include "cronwheel/json.hpp"
#include "cronwheel/throttled_log.hpp"

namespace {

using namespace cronwheel;
using namespace std::chrono_literals;

TEST(Text, BlankTrimAndCommas) {
  EXPECT_TRUE(IsBlank(" \t\r\n"));
  EXPECT_TRUE(IsBlank(""));
  EXPECT_FALSE(IsBlank(" a "));
  EXPECT_EQ(Trim("  a b \n"), "a b");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(SplitCommas(" a, b,,c ,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitCommas("").empty());
}

// "é" is two bytes (C3 A9), "中" three (E4 B8 AD), "😀" four (F0 9F 98 80): a cut never splits them.
TEST(Text, Utf8CutsNeverSplitASequence) {
  const std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80z";  // a é 中 😀 z: 1+2+3+4+1 bytes
  EXPECT_EQ(Utf8Prefix(s, 0), "");
  EXPECT_EQ(Utf8Prefix(s, 1), "a");
  EXPECT_EQ(Utf8Prefix(s, 2), "a");  // inside é
  EXPECT_EQ(Utf8Prefix(s, 3), "a\xC3\xA9");
  EXPECT_EQ(Utf8Prefix(s, 5), "a\xC3\xA9");  // inside 中
  EXPECT_EQ(Utf8Prefix(s, 6), "a\xC3\xA9\xE4\xB8\xAD");
  EXPECT_EQ(Utf8Prefix(s, 9), "a\xC3\xA9\xE4\xB8\xAD");  // inside 😀
  EXPECT_EQ(Utf8Prefix(s, 10), s.substr(0, 10));
  EXPECT_EQ(Utf8Prefix(s, 100), s);
  EXPECT_EQ(Utf8Truncate(s, 100), s);
  EXPECT_EQ(Utf8Truncate(s, 5), "a\xC3\xA9...");
  EXPECT_EQ(Utf8Truncate(s, 5, ""), "a\xC3\xA9");
}

// PostgreSQL's text holds no NUL: each becomes U+FFFD (a callback's message or a fire's log, stored).
TEST(Text, NulBytesBecomeReplacementCharacters) {
  EXPECT_EQ(WithoutNulBytes(std::string("a\0b\0\0", 5)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(WithoutNulBytes("plain"), "plain");
  EXPECT_EQ(WithoutNulBytes(""), "");
}

TEST(Text, ShownJsonIsBoundedAndValid) {
  EXPECT_EQ(Shown(nlohmann::json("abc")), "\"abc\"");
  const auto long_text = Shown(nlohmann::json(std::string(500, 'x')), 60);
  EXPECT_EQ(long_text.size(), 60U);
  EXPECT_EQ(long_text.substr(57), "...");
}

TEST(ThrottledLog, FirstOfAStreakThenOncePerInterval) {
  ThrottledLog log(60s);
  const ringwheel::SteadyTime t0{};
  EXPECT_EQ(log.Failure(t0), 1U);
  EXPECT_FALSE(log.Failure(t0 + 1s));
  EXPECT_FALSE(log.Failure(t0 + 59s));
  EXPECT_EQ(log.Failure(t0 + 60s), 4U);  // a minute after the last line, with the count so far
  EXPECT_FALSE(log.Failure(t0 + 61s));
  EXPECT_EQ(log.Success(), 5U);
  EXPECT_EQ(log.Failure(t0 + 62s), 1U);  // a new streak is logged at once
  EXPECT_EQ(log.Success(), 1U);
  EXPECT_EQ(log.Success(), 0U);
}

}  // namespace
