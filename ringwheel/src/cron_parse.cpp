// Parsing a Quartz cron expression into the bit sets CronExpression walks (ringwheel/cron.hpp; its
// evaluation is cron.cpp).
#include <algorithm>
#include <array>
#include <cctype>
#include <span>
#include <string>
#include <vector>

#include "cron_years.hpp"
#include "ringwheel/cron.hpp"

namespace ringwheel {
namespace {

using cron_years::kMaxYear;
using cron_years::kMinYear;

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

}  // namespace ringwheel
