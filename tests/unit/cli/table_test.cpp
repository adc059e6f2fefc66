#include "cwcli/table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cwcli/text_util.hpp"

namespace {

using cronwheel::cli::DisplayWidth;
using cronwheel::cli::Table;

TEST(Table, ColumnsAreAsWideAsTheirWidestCellAndLinesHaveNoTrailingSpaces) {
  Table t({"ID", "DESCRIPTION", "STATE"});
  t.AlignRight(0);
  t.AddRow({"7", "nightly invoices", "running"});
  t.AddRow({"12", "x", ""});
  EXPECT_EQ(t.Render(),
            "ID  DESCRIPTION       STATE\n"
            " 7  nightly invoices  running\n"
            "12  x\n");
  EXPECT_EQ(t.rows(), 2U);
}

TEST(Table, WideCharactersCountTwoColumnsAndCombiningMarksNone) {
  EXPECT_EQ(DisplayWidth("abc"), 3U);
  EXPECT_EQ(DisplayWidth("数据同步"), 8U);  // CJK: 2 each
  EXPECT_EQ(DisplayWidth("e\u0301"), 1U);   // e + combining acute
  EXPECT_EQ(DisplayWidth("ü"), 1U);
  EXPECT_EQ(DisplayWidth("\xff"), 1U);  // an invalid byte
  Table t({"DESCRIPTION", "ID"});
  t.AddRow({"数据同步", "1"});
  t.AddRow({"sync", "2"});
  EXPECT_EQ(t.Render(),
            "DESCRIPTION  ID\n"
            "数据同步     1\n"
            "sync         2\n");
}

TEST(Table, CellsStayOnOneLineAndLongOnesAreCut) {
  Table t({"A", "B"});
  t.LimitWidth(1, 6);
  t.AddRow({"x\ny\tz\x01", "abcdefghij"});
  t.AddRow({"", "数据同步数据"});
  EXPECT_EQ(t.Render(),
            "A         B\n"
            "x\\ny\\tz?  abcde…\n"
            "          数据…\n");
  EXPECT_THROW(t.AddRow({"1", "2", "3"}), std::invalid_argument);
}

TEST(Table, FieldListing) {
  EXPECT_EQ(cronwheel::cli::RenderFields({{"id", "3"}, {"description", "x"}}),
            "FIELD        VALUE\n"
            "id           3\n"
            "description  x\n");
}

TEST(FormatUtcMs, IsoInUtcAndADashForNever) {
  EXPECT_EQ(cronwheel::cli::FormatUtcMs(0), "-");
  EXPECT_EQ(cronwheel::cli::FormatUtcMs(1767225600000), "2026-01-01T00:00:00Z");
  EXPECT_EQ(cronwheel::cli::FormatUtcMs(951782400999), "2000-02-29T00:00:00Z");
}

}  // namespace

TEST(ParseInstantMs, IsoWithAnOffsetOrZToEpochMs) {
  using cronwheel::cli::ParseInstantMs;
  EXPECT_EQ(ParseInstantMs("2026-01-01T00:00:00Z").value(), 1767225600000);
  EXPECT_EQ(ParseInstantMs("2026-01-01T00:00Z").value(), 1767225600000);
  EXPECT_EQ(ParseInstantMs("2026-01-01 01:00:00+01:00").value(), 1767225600000);
  EXPECT_EQ(ParseInstantMs("2025-12-31T19:00:00.250-05:00").value(), 1767225600250);
  for (const char* bad : {"", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00:00+0100x",
                          "2026-13-01T00:00Z", "tomorrow 18:30", "2026-01-01T00:00:00Z trailing"}) {
    const auto r = ParseInstantMs(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ParseDurationMs, UnitsAddUpAndAnythingElseIsRefused) {
  using cronwheel::cli::ParseDurationMs;
  EXPECT_EQ(ParseDurationMs("250ms").value(), 250);
  EXPECT_EQ(ParseDurationMs("90s").value(), 90'000);
  EXPECT_EQ(ParseDurationMs("10m").value(), 600'000);
  EXPECT_EQ(ParseDurationMs("1h30m").value(), 5'400'000);
  EXPECT_EQ(ParseDurationMs("2d").value(), 172'800'000);
  EXPECT_EQ(ParseDurationMs("0s").value(), 0);
  for (const char* bad : {"", "10", "m", "5w", "1.5h", "-1s", "10 m", "1h 30m"}) {
    const auto r = ParseDurationMs(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseDurationMs("999999999999999999d").status().code(), absl::StatusCode::kOutOfRange);
}
