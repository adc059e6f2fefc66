#include "ringwheel/cron.hpp"

#include <date/date.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <chrono>
#include <span>

#include "zone_period.hpp"

namespace ringwheel {
namespace {

using detail::FloorDiv;
using detail::ZonePeriod;

constexpr int kMinYear = 1970;
constexpr int kMaxYear = 2199;
constexpr std::int64_t kSecondsPerDay = 86400;
// 2200-01-01T00:00:00Z: nothing fires at or after this instant (well, a zone east of UTC may still fire
// a few hours of 2199-12-31 wall time after it; the search bound is the wall-clock year).
constexpr std::int64_t kEndOfSearchS =
    std::int64_t{date::sys_days{date::year{2200} / 1 / 1}.time_since_epoch().count()} * kSecondsPerDay;
// Longer than any UTC offset change on record (Kwajalein 1993 dropped a whole day: a gap, not an
// overlap; the largest overlap is below 24 h). Bounds where the second pass of an overlap can be.
constexpr std::int64_t kMaxOverlapS = 2 * kSecondsPerDay;

enum Field : std::uint8_t { kSecond, kMinute, kHour, kDayOfMonth, kMonth, kDayOfWeek, kYear, kFieldCount };

struct FieldSpec {
  std::string_view name;
  int min;
  int max;
  int max_step;  // Quartz: an increment above this is an error
  std::string_view allowed;
};

constexpr std::array<FieldSpec, kFieldCount> kFields{{
    {"second", 0, 59, 59, "0-59, with , - * /"},
    {"minute", 0, 59, 59, "0-59, with , - * /"},
    {"hour", 0, 23, 23, "0-23, with , - * /"},
    {"day-of-month", 1, 31, 31, "1-31, with , - * / ? L W"},
    {"month", 1, 12, 12, "1-12 or JAN-DEC, with , - * /"},
    {"day-of-week", 1, 7, 7, "1-7 or SUN-SAT, with , - * / ? L #"},
    {"year", kMinYear, kMaxYear, kMaxYear - kMinYear, "1970-2199, with , - * /"},
}};

constexpr std::array<std::string_view, 12> kMonthNames{"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> kDayNames{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

// The values a field allows, as bits indexed by (value - offset): offset 1970 for years, 0 otherwise.
struct ValueSet {
  std::array<std::uint64_t, 4> words{};
  void Set(int index) {
    const auto i = static_cast<unsigned>(index);
    words.at(i / 64) |= std::uint64_t{1} << (i % 64);
  }
};

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Non-negative decimal of at most 4 digits (every value and step in the grammar fits).
bool ParseNumber(std::string_view s, int& out) {
  if (s.empty() || s.size() > 4) return false;
  int v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

int NextBit(std::uint64_t mask, int from) {
  if (from >= 64) return -1;
  const std::uint64_t rest = mask & (~std::uint64_t{0} << static_cast<unsigned>(from));
  return rest == 0 ? -1 : std::countr_zero(rest);
}

}  // namespace

// Parses one expression into a CronExpression. A class (not free functions) so that it can fill the
// private fields; CronExpression names it as a friend.
class CronParser {
 public:
  explicit CronParser(CronExpression& out) : out_(out) {}

  bool Parse(std::string_view text) {
    original_ = text;
    upper_ = std::string(text);
    std::transform(upper_.begin(), upper_.end(), upper_.begin(),
                   [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
    std::vector<std::string_view> fields;
    std::string_view rest = upper_;
    while (!rest.empty()) {
      while (!rest.empty() && IsBlank(rest.front()))
        rest.remove_prefix(1);
      std::size_t n = 0;
      while (n < rest.size() && !IsBlank(rest[n]))
        ++n;
      if (n > 0) fields.push_back(rest.substr(0, n));
      rest.remove_prefix(n);
    }
    if (fields.size() != 6 && fields.size() != 7) {
      std::string msg =
          "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), got " +
          std::to_string(fields.size()) + " in '" + std::string(text) + "'";
      if (fields.size() == 5) {
        msg +=
            "; a Quartz expression starts with seconds: write '0 ' before a 5-field Unix expression and '?'"
            " in day-of-month or day-of-week, e.g. '0 */5 * * * ?'";
      }
      return Fail(msg);
    }

    ValueSet sec;
    ValueSet min;
    ValueSet hour;
    ValueSet month;
    ValueSet year;
    if (!ParseList(kSecond, fields[0], sec) || !ParseList(kMinute, fields[1], min) ||
        !ParseList(kHour, fields[2], hour)) {
      return false;
    }
    bool dom_any = false;
    bool dow_any = false;
    if (!ParseDayOfMonth(fields[3], dom_any) || !ParseList(kMonth, fields[4], month) ||
        !ParseDayOfWeek(fields[5], dow_any)) {
      return false;
    }
    if (fields.size() == 7) {
      if (!ParseList(kYear, fields[6], year)) return false;
    } else {
      for (int y = kMinYear; y <= kMaxYear; ++y)
        year.Set(y - kMinYear);
    }
    if (dom_any && dow_any) {
      return Fail(
          "day-of-month and day-of-week fields: only one of them may be '?'; write e.g. '0 0 12 * * ?' "
          "(every "
          "day) or '0 0 12 ? * MON' (Mondays)");
    }
    if (!dom_any && !dow_any) {
      return Fail(
          "day-of-month and day-of-week fields: exactly one of them must be '?' (Quartz does not support "
          "both), got '" +
          std::string(AsTyped(fields[3])) + "' and '" + std::string(AsTyped(fields[5])) +
          "'; write e.g. '0 0 12 * * ?' (every day) or '0 0 12 ? * MON' (Mondays)");
    }

    out_.text_ = std::string(text);
    out_.seconds_ = sec.words[0];
    out_.minutes_ = min.words[0];
    out_.hours_ = static_cast<std::uint32_t>(hour.words[0]);
    out_.months_ = static_cast<std::uint16_t>(month.words[0]);
    out_.years_ = year.words;
    out_.interval_ = std::any_of(fields.begin(), fields.begin() + 3, [](std::string_view f) {
      return f.find_first_of("*-/") != std::string_view::npos;
    });
    return true;
  }

  // Why Parse() returned false: names the field, the token and what is allowed.
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  // The text the user typed for a token of the upper-cased copy (same length, same positions).
  [[nodiscard]] std::string_view AsTyped(std::string_view token) const {
    const auto offset = static_cast<std::size_t>(token.data() - upper_.data());
    return offset <= original_.size() ? original_.substr(offset, token.size()) : token;
  }
  bool FailToken(Field f, std::string_view token, std::string_view problem) {
    const FieldSpec& spec = kFields.at(f);
    return Fail(std::string(spec.name) + " field: token '" + std::string(AsTyped(token)) + "' " +
                std::string(problem) + "; allowed are " + std::string(spec.allowed));
  }

  // A number or (month, day-of-week) a name; in day-of-week "L" alone is 7 (SAT), as in Quartz.
  bool ParseValue(Field f, std::string_view token, int& out) {
    const FieldSpec& spec = kFields.at(f);
    if (!token.empty() && token.front() >= '0' && token.front() <= '9') {
      if (!ParseNumber(token, out)) return FailToken(f, token, "is not a number");
      if (out < spec.min || out > spec.max) return FailToken(f, token, "is out of range");
      return true;
    }
    if (f == kMonth || f == kDayOfWeek) {
      const auto names = f == kMonth ? std::span<const std::string_view>(kMonthNames)
                                     : std::span<const std::string_view>(kDayNames);
      const auto it = std::find(names.begin(), names.end(), token);
      if (it != names.end()) {
        out = static_cast<int>(it - names.begin()) + 1;
        return true;
      }
      if (f == kDayOfWeek && token == "L") {
        out = 7;
        return true;
      }
      return FailToken(f, token, "is not a number or a name");
    }
    if (token == "?")
      return FailToken(f, token, "is not allowed here ('?' belongs in day-of-month or day-of-week)");
    return FailToken(f, token, "is not a number");
  }

  // One list item: *, a, a-b, with an optional /step.
  bool ParseItem(Field f, std::string_view item, ValueSet& set) {
    const FieldSpec& spec = kFields.at(f);
    const std::size_t slash = item.find('/');
    const std::string_view base = item.substr(0, slash);
    int step = 1;
    const bool has_step = slash != std::string_view::npos;
    if (has_step) {
      if (!ParseNumber(item.substr(slash + 1), step) || step < 1 || step > spec.max_step) {
        return FailToken(
            f, item, "has an invalid step; the number after '/' must be 1-" + std::to_string(spec.max_step));
      }
    }
    int lo = spec.min;
    int hi = spec.max;
    if (base == "*" || (has_step && base.empty())) {
      // every value (from the minimum)
    } else if (const std::size_t dash = base.find('-'); dash != std::string_view::npos && dash > 0) {
      if (!ParseValue(f, base.substr(0, dash), lo) || !ParseValue(f, base.substr(dash + 1), hi)) return false;
      if (lo > hi && f == kYear) return FailToken(f, item, "is a range whose end is before its start");
    } else {
      if (!ParseValue(f, base, lo)) return false;
      if (!has_step) hi = lo;
    }
    const int offset = f == kYear ? kMinYear : 0;
    if (lo <= hi) {
      for (int v = lo; v <= hi; v += step)
        set.Set(v - offset);
    } else {
      // A range that wraps past the maximum (hour 22-2, FRI-MON), stepping across the wrap as Quartz does.
      const int width = spec.max - spec.min + 1;
      for (int i = lo; i <= hi + width; i += step)
        set.Set((i > spec.max ? i - width : i) - offset);
    }
    return true;
  }

  bool ParseList(Field f, std::string_view field, ValueSet& set) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = field.find(',', start);
      const std::string_view item =
          field.substr(start, comma == std::string_view::npos ? comma : comma - start);
      if (item.empty()) return FailToken(f, field, "has an empty list item");
      if (!ParseItem(f, item, set)) return false;
      if (comma == std::string_view::npos) return true;
      start = comma + 1;
    }
  }

  bool ParseDayOfMonth(std::string_view field, bool& any) {
    if (field == "?") {
      any = true;
      return true;
    }
    if (field.front() == 'L') {
      if (field.find(',') != std::string_view::npos) {
        return FailToken(kDayOfMonth, field, "combines 'L' with other days, which Quartz does not support");
      }
      std::string_view rest = field.substr(1);
      const bool weekday = !rest.empty() && rest.back() == 'W';
      if (weekday) rest.remove_suffix(1);
      int offset = 0;
      if (!rest.empty() && (rest.front() != '-' || !ParseNumber(rest.substr(1), offset) || offset > 30)) {
        return FailToken(kDayOfMonth, field, "is not L, L-n, LW or L-nW with n in 0-30");
      }
      out_.day_rule_ = weekday ? CronExpression::DayRule::kLastDayWeekday : CronExpression::DayRule::kLastDay;
      out_.day_arg_ = offset;
      return true;
    }
    if (field.back() == 'W') {
      const std::string_view day = field.substr(0, field.size() - 1);
      if (day.find_first_of(",-/*") != std::string_view::npos) {
        return FailToken(kDayOfMonth, field,
                         "uses 'W' with a list or range; 'W' takes a single day such as 15W");
      }
      int d = 0;
      if (!ParseValue(kDayOfMonth, day, d)) return false;
      out_.day_rule_ = CronExpression::DayRule::kNearestWeekday;
      out_.day_arg_ = d;
      return true;
    }
    ValueSet days;
    if (!ParseList(kDayOfMonth, field, days)) return false;
    out_.day_rule_ = CronExpression::DayRule::kDaysOfMonth;
    out_.days_ = static_cast<std::uint32_t>(days.words[0]);
    return true;
  }

  bool ParseDayOfWeek(std::string_view field, bool& any) {
    if (field == "?") {
      any = true;
      return true;
    }
    if (const std::size_t hash = field.find('#'); hash != std::string_view::npos) {
      if (field.find_first_of(",-/*") != std::string_view::npos) {
        return FailToken(kDayOfWeek, field,
                         "uses '#' with a list or range; '#' takes a single n#k such as 6#3");
      }
      int w = 0;
      int k = 0;
      if (!ParseValue(kDayOfWeek, field.substr(0, hash), w)) return false;
      if (!ParseNumber(field.substr(hash + 1), k) || k < 1 || k > 5) {
        return FailToken(kDayOfWeek, field, "has an invalid week; in n#k, k must be 1-5");
      }
      out_.day_rule_ = CronExpression::DayRule::kNthWeekdayOf;
      out_.day_arg_ = w - 1;
      out_.nth_ = k;
      return true;
    }
    if (field.size() > 1 && field.back() == 'L') {
      const std::string_view day = field.substr(0, field.size() - 1);
      if (day.find_first_of(",-/*") != std::string_view::npos) {
        return FailToken(kDayOfWeek, field,
                         "uses 'L' with a list or range; 'L' takes a single day such as 6L");
      }
      int w = 0;
      if (!ParseValue(kDayOfWeek, day, w)) return false;
      out_.day_rule_ = CronExpression::DayRule::kLastWeekdayOf;
      out_.day_arg_ = w - 1;
      return true;
    }
    ValueSet days;
    if (!ParseList(kDayOfWeek, field, days)) return false;
    out_.day_rule_ = CronExpression::DayRule::kDaysOfWeek;
    out_.weekdays_ = static_cast<std::uint8_t>(days.words[0] >> 1);  // Quartz 1 = SUN -> bit 0
    return true;
  }

  CronExpression& out_;
  std::string error_;  // why Parse() returned false
  std::string_view original_;
  std::string upper_;  // the fields are views into this
};

absl::StatusOr<CronExpression> CronExpression::Parse(std::string_view text) {
  CronExpression expr;
  CronParser parser(expr);
  if (!parser.Parse(text)) return absl::InvalidArgumentError(parser.error());
  return expr;
}

int CronExpression::NextYear(int y) const {
  for (int i = std::max(y, kMinYear) - kMinYear; i <= kMaxYear - kMinYear;) {
    const auto word = static_cast<std::size_t>(i / 64);
    const std::uint64_t bits = years_.at(word) >> static_cast<unsigned>(i % 64);
    if (bits != 0) return kMinYear + i + std::countr_zero(bits);
    i = static_cast<int>(word + 1) * 64;
  }
  return -1;
}

std::uint32_t CronExpression::DayMask(int y, unsigned m) const {
  const date::year_month ym{date::year{y}, date::month{m}};
  const auto dim = static_cast<int>(static_cast<unsigned>((ym / date::last).day()));
  const auto first = static_cast<int>(date::weekday{date::sys_days{ym / 1}}.c_encoding());  // 0 = Sunday
  const auto weekday_of = [first](int d) { return (first + d - 1) % 7; };
  const auto bit = [](int d) { return std::uint32_t{1} << static_cast<unsigned>(d); };
  // Quartz's W: the weekday nearest day d without leaving the month.
  const auto nearest_weekday = [&](int d) -> std::uint32_t {
    if (d < 1 || d > dim) return 0;
    const int w = weekday_of(d);
    if (w == 6) d = d == 1 ? d + 2 : d - 1;    // Saturday: Friday before, or Monday the 3rd
    if (w == 0) d = d == dim ? d - 2 : d + 1;  // Sunday: Monday after, or Friday before the last day
    return bit(d);
  };
  switch (day_rule_) {
    case DayRule::kDaysOfMonth:
      return days_ & ((bit(dim) - 1) << 1);
    case DayRule::kLastDay:
      return dim - day_arg_ >= 1 ? bit(dim - day_arg_) : 0;
    case DayRule::kLastDayWeekday:
      return nearest_weekday(dim - day_arg_);
    case DayRule::kNearestWeekday:
      return nearest_weekday(day_arg_);
    case DayRule::kDaysOfWeek: {
      std::uint32_t mask = 0;
      for (int d = 1; d <= 7; ++d) {
        if ((weekdays_ >> weekday_of(d) & 1U) == 0) continue;
        for (int dd = d; dd <= dim; dd += 7)
          mask |= bit(dd);
      }
      return mask;
    }
    case DayRule::kLastWeekdayOf:
      return bit(dim - (weekday_of(dim) - day_arg_ + 7) % 7);
    case DayRule::kNthWeekdayOf: {
      const int d = 1 + (day_arg_ - first + 7) % 7 + 7 * (nth_ - 1);
      return d <= dim ? bit(d) : 0;
    }
  }
  return 0;
}

std::optional<std::int64_t> CronExpression::NextLocal(std::int64_t local_s) const {
  const std::int64_t day_number = FloorDiv(local_s, kSecondsPerDay);
  const auto second_of_day = static_cast<int>(local_s - day_number * kSecondsPerDay);
  const date::year_month_day ymd{date::sys_days{date::days{
      static_cast<int>(std::clamp<std::int64_t>(day_number, -1, kEndOfSearchS / kSecondsPerDay + 1))}}};
  int y = static_cast<int>(ymd.year());
  auto m = static_cast<int>(static_cast<unsigned>(ymd.month()));
  auto d = static_cast<int>(static_cast<unsigned>(ymd.day()));
  int h = second_of_day / 3600;
  int mi = second_of_day / 60 % 60;
  int s = second_of_day % 60;
  if (y < kMinYear) {
    y = kMinYear;
    m = d = 1;
    h = mi = s = 0;
  }
  std::uint32_t day_mask = 0;
  int mask_y = 0;
  int mask_m = 0;
  // Each pass either returns or moves (y, m, d, h, mi, s) strictly forward, resetting the smaller fields;
  // y is bounded by kMaxYear, so the loop ends.
  for (;;) {
    const int ny = NextYear(y);
    if (ny < 0) return std::nullopt;
    if (ny != y) {
      y = ny;
      m = d = 1;
      h = mi = s = 0;
    }
    const int nm = NextBit(months_, m);
    if (nm < 0) {
      ++y;
      m = d = 1;
      h = mi = s = 0;
      continue;
    }
    if (nm != m) {
      m = nm;
      d = 1;
      h = mi = s = 0;
    }
    if (mask_y != y || mask_m != m) {
      day_mask = DayMask(y, static_cast<unsigned>(m));
      mask_y = y;
      mask_m = m;
    }
    const int nd = NextBit(day_mask, d);
    if (nd < 0) {
      ++m;
      d = 1;
      h = mi = s = 0;
      continue;
    }
    if (nd != d) {
      d = nd;
      h = mi = s = 0;
    }
    const int nh = NextBit(hours_, h);
    if (nh < 0) {
      ++d;
      h = mi = s = 0;
      continue;
    }
    if (nh != h) {
      h = nh;
      mi = s = 0;
    }
    const int nmi = NextBit(minutes_, mi);
    if (nmi < 0) {
      ++h;
      mi = s = 0;
      continue;
    }
    if (nmi != mi) {
      mi = nmi;
      s = 0;
    }
    const int ns = NextBit(seconds_, s);
    if (ns < 0) {
      ++mi;
      s = 0;
      continue;
    }
    const date::sys_days day{date::year{y} / date::month{static_cast<unsigned>(m)} /
                             date::day{static_cast<unsigned>(d)}};
    return std::int64_t{day.time_since_epoch().count()} * kSecondsPerDay + std::int64_t{h} * 3600 +
           std::int64_t{mi} * 60 + ns;
  }
}

std::optional<std::int64_t> CronExpression::NextFireMs(std::int64_t after_ms,
                                                       const date::time_zone* zone) const {
  if (after_ms >= kEndOfSearchS * 1000) return std::nullopt;
  // Fires are whole seconds strictly after after_ms. Before 1970 the wall-clock search starts at 1970.
  std::int64_t candidate = std::max<std::int64_t>(FloorDiv(after_ms, 1000) + 1, -kSecondsPerDay);
  // Walk the zone's offset periods: find the first matching wall time at or after the candidate's wall
  // time under the candidate's offset, then check it against the period (see the DST rule in cron.hpp).
  // Each pass returns or moves `candidate` forward to a later period, close to the match when it is far
  // away: a handful of passes, bounded by a guard.
  for (int pass = 0; pass < 4096; ++pass) {
    const ZonePeriod period = detail::PeriodAt(zone, candidate);
    const std::int64_t local_start = candidate + period.offset;
    const std::optional<std::int64_t> local = NextLocal(local_start);
    if (!local) {
      // No matching wall time >= local_start at all. Only a later period whose wall clock restarts earlier
      // (after a fall-back) can still match, in its repeated part.
      if (period.end >= detail::kNoTransitionAfter) return std::nullopt;
      const ZonePeriod next = detail::PeriodAt(zone, period.end);
      if (period.end + next.offset >= local_start) return std::nullopt;
      candidate = period.end;
      continue;
    }
    if (*local >= period.end + period.offset) {
      // The match lies beyond this period's wall-clock range.
      const ZonePeriod next = detail::PeriodAt(zone, period.end);
      if (*local < period.end + next.offset) return period.end * 1000;  // in a gap: fire once at its end
      // Skip ahead when that is safe (a sparse expression would otherwise walk two periods a year). A later
      // instant t has wall time t + offset(t) >= local_start - (offset range), so a fire whose wall time is
      // below local_start can only lie within the offset range (< 2 * kMaxAbsOffset) after `candidate`, and
      // none lies in this period. Every other fire has a wall time >= *local, so it is at or after
      // *local - kMaxAbsOffset.
      candidate = period.end - candidate >= 2 * detail::kMaxAbsOffset
                      ? std::max(period.end, *local - detail::kMaxAbsOffset)
                      : period.end;
      continue;
    }
    const std::int64_t instant = *local - period.offset;
    if (!interval_ && period.begin > detail::kNoTransitionBefore && instant - period.begin < kMaxOverlapS) {
      const ZonePeriod previous = detail::PeriodAt(zone, period.begin - 1);
      if (previous.offset > period.offset && *local < period.begin + previous.offset) {
        // Second pass of a fall-back overlap: a fixed-time expression already fired at the first one.
        candidate = period.begin + previous.offset - period.offset;
        continue;
      }
    }
    return instant * 1000;
  }
  return std::nullopt;
}

std::vector<std::int64_t> CronExpression::NextFiresMs(std::int64_t after_ms, const date::time_zone* zone,
                                                      std::size_t count) const {
  std::vector<std::int64_t> fires;
  fires.reserve(std::min<std::size_t>(count, 1024));
  while (fires.size() < count) {
    const std::optional<std::int64_t> next = NextFireMs(after_ms, zone);
    if (!next) break;
    fires.push_back(*next);
    after_ms = *next;
  }
  return fires;
}

}  // namespace ringwheel
