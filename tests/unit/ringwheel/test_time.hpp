#pragma once
// Test helpers: instants written as ISO-8601 UTC text, so expected fire times in the tests read as a
// calendar does. Independent of ringwheel's own parsing/formatting (built on date::sys_days only).

#include <absl/status/statusor.h>
#include <date/date.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace rwtest {

// "2026-03-08T07:00:00Z" -> epoch ms. Throws on anything else.
inline std::int64_t Utc(const std::string& iso) {
  int y = 0;
  unsigned mo = 0;
  unsigned d = 0;
  int h = 0;
  int mi = 0;
  int s = 0;
  char z = 0;
  // NOLINTNEXTLINE(cert-err34-c): test input is a literal; the count check below is enough.
  if (std::sscanf(iso.c_str(), "%4d-%2u-%2uT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z) != 7 || z != 'Z') {
    throw std::invalid_argument("bad test instant " + iso);
  }
  const date::sys_days day{date::year{y} / date::month{mo} / date::day{d}};
  return (std::int64_t{day.time_since_epoch().count()} * 86400 + std::int64_t{h} * 3600 +
          std::int64_t{mi} * 60 + s) *
         1000;
}

// epoch ms -> "2026-03-08T07:00:00Z" (for readable failure messages).
inline std::string UtcText(std::int64_t ms) {
  const std::int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  const std::int64_t days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400);
  const auto sod = static_cast<int>(s - days * 86400);
  const date::year_month_day ymd{date::sys_days{date::days{static_cast<int>(days)}}};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), sod / 3600,
                sod / 60 % 60, sod % 60);
  return buf;
}

// The value `r` holds, or nullopt when it holds an error: EXPECT_EQ(Value(ParseInstantMs(...)), ms).
template <typename T>
std::optional<T> Value(const absl::StatusOr<T>& r) {
  return r.ok() ? std::optional<T>(*r) : std::nullopt;
}

}  // namespace rwtest
