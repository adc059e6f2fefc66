#include "posix_tz.hpp"

#include <date/date.h>

#include <cctype>

namespace ringwheel::detail {
namespace {

constexpr std::int64_t kSecondsPerDay = 86400;
constexpr std::int64_t kTwoAm = std::int64_t{2} * 3600;  // the default transition time

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  [[nodiscard]] bool AtEnd() const { return pos_ >= s_.size(); }
  [[nodiscard]] char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }

  // A zone abbreviation: three or more letters, or <...> of letters, digits, '+' and '-'.
  bool Name() {
    if (Consume('<')) {
      const std::size_t start = pos_;
      while (!AtEnd() && Peek() != '>') {
        const auto c = static_cast<unsigned char>(Peek());
        if (std::isalnum(c) == 0 && c != '+' && c != '-') return false;
        ++pos_;
      }
      return pos_ - start >= 1 && Consume('>');
    }
    const std::size_t start = pos_;
    while (!AtEnd() && std::isalpha(static_cast<unsigned char>(Peek())) != 0)
      ++pos_;
    return pos_ - start >= 3;
  }

  // [+|-]hh[:mm[:ss]] in seconds, hours up to max_hours.
  bool Time(int max_hours, std::int64_t& out) {
    int sign = 1;
    if (Consume('-')) {
      sign = -1;
    } else {
      Consume('+');
    }
    int h = 0;
    int m = 0;
    int s = 0;
    if (!Number(1, 3, h) || h > max_hours) return false;
    if (Consume(':')) {
      if (!Number(1, 2, m) || m > 59) return false;
      if (Consume(':') && (!Number(1, 2, s) || s > 59)) return false;
    }
    out = sign * (std::int64_t{h} * 3600 + std::int64_t{m} * 60 + s);
    return true;
  }

  bool Number(std::size_t min_digits, std::size_t max_digits, int& out) {
    const std::size_t start = pos_;
    int v = 0;
    while (!AtEnd() && pos_ - start < max_digits && std::isdigit(static_cast<unsigned char>(Peek())) != 0) {
      v = v * 10 + (Peek() - '0');
      ++pos_;
    }
    out = v;
    return pos_ - start >= min_digits;
  }

  // Jn | n | Mm.w.d, then an optional /time.
  bool Rule(PosixTransition& t) {
    if (Consume('J')) {
      t.day = PosixTransition::Day::kJulian1;
      if (!Number(1, 3, t.n) || t.n < 1 || t.n > 365) return false;
    } else if (Consume('M')) {
      t.day = PosixTransition::Day::kMonthWeekDay;
      if (!Number(1, 2, t.month) || t.month < 1 || t.month > 12 || !Consume('.') || !Number(1, 1, t.week) ||
          t.week < 1 || t.week > 5 || !Consume('.') || !Number(1, 1, t.weekday) || t.weekday > 6) {
        return false;
      }
    } else {
      t.day = PosixTransition::Day::kJulian0;
      if (!Number(1, 3, t.n) || t.n > 365) return false;
    }
    t.time = kTwoAm;
    return !Consume('/') || Time(167, t.time);  // RFC 8536 extends the POSIX 0-24 h range to -167..167 h
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<PosixTz> ParsePosixTz(std::string_view text) {
  Reader r(text);
  PosixTz tz;
  std::int64_t west = 0;
  if (!r.Name() || !r.Time(24, west)) return std::nullopt;
  tz.std_offset = -west;
  if (r.AtEnd()) return tz;
  if (!r.Name()) return std::nullopt;
  tz.has_dst = true;
  tz.dst_offset = tz.std_offset + 3600;
  if (!r.AtEnd() && r.Peek() != ',') {
    if (!r.Time(24, west)) return std::nullopt;
    tz.dst_offset = -west;
  }
  if (r.AtEnd()) {
    // No rule: POSIX leaves it to the implementation; glibc and tzcode use the US rule.
    tz.dst_start = {PosixTransition::Day::kMonthWeekDay, 0, 3, 2, 0, kTwoAm};
    tz.dst_end = {PosixTransition::Day::kMonthWeekDay, 0, 11, 1, 0, kTwoAm};
    return tz;
  }
  if (!r.Consume(',') || !r.Rule(tz.dst_start) || !r.Consume(',') || !r.Rule(tz.dst_end) || !r.AtEnd()) {
    return std::nullopt;
  }
  return tz;
}

std::int64_t TransitionInstant(const PosixTransition& t, int year, std::int64_t offset_before) {
  using date::days;
  using date::sys_days;
  const sys_days jan1{date::year{year} / 1 / 1};
  sys_days day = jan1;
  switch (t.day) {
    case PosixTransition::Day::kJulian1: {
      // Day n of a 365-day year: from March on, a leap year's February 29 is skipped.
      const bool leap = date::year{year}.is_leap();
      day = jan1 + days{t.n - 1 + (leap && t.n >= 60 ? 1 : 0)};
      break;
    }
    case PosixTransition::Day::kJulian0:
      day = jan1 + days{t.n};
      break;
    case PosixTransition::Day::kMonthWeekDay: {
      const date::year_month ym{date::year{year}, date::month{static_cast<unsigned>(t.month)}};
      const sys_days first{ym / 1};
      const auto first_wd = static_cast<int>(date::weekday{first}.c_encoding());
      int d = 1 + (t.weekday - first_wd + 7) % 7 + 7 * (t.week - 1);
      const auto dim = static_cast<int>(static_cast<unsigned>((ym / date::last).day()));
      while (d > dim)
        d -= 7;  // week 5 = the last such weekday
      day = first + days{d - 1};
      break;
    }
  }
  return std::int64_t{day.time_since_epoch().count()} * kSecondsPerDay + t.time - offset_before;
}

}  // namespace ringwheel::detail
