#include "ringwheel/time_zone.hpp"

#include <date/tz.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>

#include "zone_period.hpp"

namespace ringwheel {
namespace {

using detail::FloorDiv;

constexpr std::int64_t kSecondsPerDay = 86400;

// A left-to-right reader for the fixed-width ISO-8601 forms ParseInstantMs accepts.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  [[nodiscard]] bool AtEnd() const { return pos_ == s_.size(); }
  [[nodiscard]] char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Exactly `width` decimal digits.
  bool Digits(std::size_t width, int& out) {
    if (s_.size() - pos_ < width) return false;
    int v = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const char c = s_[pos_ + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    pos_ += width;
    out = v;
    return true;
  }
  // One or more digits; returns the first three as milliseconds (".5" = 500 ms).
  bool Fraction(int& ms) {
    int v = 0;
    std::size_t n = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      if (n < 3) v = v * 10 + (Peek() - '0');
      ++n;
      ++pos_;
    }
    for (std::size_t i = n; i < 3; ++i)
      v *= 10;
    ms = v;
    return n > 0;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

absl::StatusOr<const date::time_zone*> FindTimeZone(std::string_view name) {
  // date-tz builds its zone database on first use and publishes it with atomics inside the library, which
  // ThreadSanitizer cannot see (the library is not instrumented): two threads' first lookups were reported
  // as a race. The first use happens here once, under std::call_once, which every sanitizer sees.
  static std::once_flag loaded;
  std::call_once(loaded, [] { static_cast<void>(date::get_tzdb()); });
  const std::string key = name.empty() ? std::string("UTC") : std::string(name);
  try {
    return date::locate_zone(key);
  } catch (const std::exception&) {
    return absl::NotFoundError("unknown time zone '" + key +
                               "'; use an IANA name such as 'UTC' or 'Asia/Shanghai'");
  }
}

std::string FormatIso8601(std::int64_t ms, const date::time_zone* zone) {
  const std::int64_t sec = FloorDiv(ms, 1000);
  const auto millis = static_cast<int>(ms - sec * 1000);
  const std::int64_t offset = detail::PeriodAt(zone, sec).offset;
  const std::int64_t local = sec + offset;
  const std::int64_t day = FloorDiv(local, kSecondsPerDay);
  const auto sod = static_cast<int>(local - day * kSecondsPerDay);
  const date::year_month_day ymd{date::sys_days{date::days{static_cast<int>(day)}}};
  std::array<char, 64> buf{};
  int n = std::snprintf(buf.data(), buf.size(), "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                        static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), sod / 3600,
                        sod / 60 % 60, sod % 60);
  std::string out(buf.data(), static_cast<std::size_t>(n));
  if (millis != 0) {
    n = std::snprintf(buf.data(), buf.size(), ".%03d", millis);
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  const std::int64_t abs = offset < 0 ? -offset : offset;
  const auto oh = static_cast<int>(abs / 3600);
  const auto om = static_cast<int>(abs / 60 % 60);
  const auto os = static_cast<int>(abs % 60);
  n = os != 0 ? std::snprintf(buf.data(), buf.size(), "%c%02d:%02d:%02d", offset < 0 ? '-' : '+', oh, om, os)
              : std::snprintf(buf.data(), buf.size(), "%c%02d:%02d", offset < 0 ? '-' : '+', oh, om);
  out.append(buf.data(), static_cast<std::size_t>(n));
  return out;
}

absl::StatusOr<std::int64_t> ParseInstantMs(std::string_view text, const date::time_zone* zone) {
  const std::string_view s = Trim(text);
  const auto fail = [&]() -> absl::StatusOr<std::int64_t> {
    return absl::InvalidArgumentError(
        "invalid instant '" + std::string(text) +
        "'; use ISO-8601 such as '2026-03-08T01:30:00' (wall time in the zone), "
        "'2026-03-08T01:30:00-05:00' "
        "or '2026-03-08T06:30:00Z', or epoch milliseconds such as '1772951400000'");
  };
  if (s.empty()) return fail();

  // Epoch milliseconds: an optional '-' and digits only.
  if (s.find_first_not_of("0123456789", s.front() == '-' ? 1 : 0) == std::string_view::npos) {
    std::int64_t ms = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
    if (ec != std::errc{} || ptr != s.data() + s.size()) return fail();
    return ms;
  }

  Cursor c(s);
  int y = 0;
  int mo = 0;
  int d = 0;
  int h = 0;
  int mi = 0;
  int sec = 0;
  int millis = 0;
  if (!c.Digits(4, y) || !c.Consume('-') || !c.Digits(2, mo) || !c.Consume('-') || !c.Digits(2, d))
    return fail();
  if (c.Consume('T') || c.Consume('t') || c.Consume(' ')) {
    if (!c.Digits(2, h) || !c.Consume(':') || !c.Digits(2, mi)) return fail();
    if (c.Consume(':')) {
      if (!c.Digits(2, sec)) return fail();
      if ((c.Consume('.') || c.Consume(',')) && !c.Fraction(millis)) return fail();
    }
  }
  std::optional<std::int64_t> offset;
  if (c.Consume('Z') || c.Consume('z')) {
    offset = 0;
  } else if (c.Peek() == '+' || c.Peek() == '-') {
    int sign = 1;
    if (c.Consume('-')) {
      sign = -1;
    } else {
      c.Consume('+');
    }
    int oh = 0;
    int om = 0;
    if (!c.Digits(2, oh)) return fail();
    if (c.Consume(':')) {
      if (!c.Digits(2, om)) return fail();
    } else if (!c.AtEnd() && !c.Digits(2, om)) {
      return fail();
    }
    if (oh > 23 || om > 59) return fail();
    offset = std::int64_t{sign} * (oh * 3600 + om * 60);
  }
  if (!c.AtEnd()) return fail();

  const date::year_month_day ymd{date::year{y}, date::month{static_cast<unsigned>(mo)},
                                 date::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return fail();
  const std::int64_t local = std::int64_t{date::sys_days{ymd}.time_since_epoch().count()} * kSecondsPerDay +
                             std::int64_t{h} * 3600 + std::int64_t{mi} * 60 + sec;
  std::int64_t instant = 0;
  if (offset) {
    instant = local - *offset;
  } else {
    instant = detail::LocalToInstant(zone, local);
  }
  return instant * 1000 + millis;
}

}  // namespace ringwheel
