// Property tests: random valid expressions, each with an independent reference matcher built from the
// generator's own description of the fields (not from the parser). Over a window, every second is
// checked by brute force against the reference and the DST rule of cron.hpp; the fires that
// NextFireMs/NextFiresMs produce must be exactly those seconds: each fire matches, none is missing
// between two consecutive fires, none is early or doubled.
#include <date/tz.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ringwheel/cron.hpp"
#include "test_time.hpp"
#include "zone_period.hpp"

namespace {

using rwtest::UtcText;

constexpr std::int64_t kDay = 86400;
constexpr std::int64_t kHour = 3600;
constexpr std::array<const char*, 12> kMonthNames{"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                  "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<const char*, 7> kDayNames{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

// What a generated expression means, written independently of the parser.
struct Spec {
  std::string text;
  std::array<bool, 60> sec{};
  std::array<bool, 60> min{};
  std::array<bool, 24> hour{};
  std::array<bool, 13> month{};  // 1-12
  enum class Day { kDom, kLast, kLastWeekday, kNearestWeekday, kDow, kLastDow, kNthDow } day = Day::kDom;
  std::array<bool, 32> dom{};  // 1-31
  std::array<bool, 7> dow{};   // 0 = Sunday
  int arg = 0;                 // L-n offset, nW day, weekday (0 = Sunday) of nL / n#k
  int nth = 0;
  bool interval = false;
};

class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }

  // A list field over [lo, hi]; `names` (optional) spell values lo.. as names. Marks values in `set`
  // (indexed by value - shift). Returns the text; sets *interval when it uses * - or /.
  template <std::size_t N>
  std::string Field(int lo, int hi, std::array<bool, N>& set, int shift, const char* const* names,
                    int single_bias, bool* interval) {
    const auto mark = [&](int v) { set.at(static_cast<std::size_t>(v - shift)) = true; };
    const auto spell = [&](int v) {
      return names != nullptr && Chance(50) ? std::string(names[v - lo]) : std::to_string(v);
    };
    const int width = hi - lo + 1;
    const int kind = Chance(single_bias) ? 0 : Uniform(1, 6);
    std::string text;
    switch (kind) {
      case 0: {  // a single value
        const int v = Uniform(lo, hi);
        mark(v);
        return spell(v);
      }
      case 1: {  // a list of 2-3 values
        const int n = Uniform(2, 3);
        for (int i = 0; i < n; ++i) {
          const int v = Uniform(lo, hi);
          mark(v);
          text += (i ? "," : "") + spell(v);
        }
        return text;
      }
      case 2: {  // every value
        for (int v = lo; v <= hi; ++v)
          mark(v);
        *interval = true;
        return "*";
      }
      case 3:    // a range, possibly wrapping past the maximum
      case 4: {  // a range with a step
        const int a = Uniform(lo, hi);
        const int b = Uniform(lo, hi);
        const int step = kind == 4 ? Uniform(1, std::max(1, width / 3)) : 1;
        const int end = b >= a ? b : b + width;
        for (int v = a; v <= end; v += step)
          mark(v > hi ? v - width : v);
        *interval = true;
        return spell(a) + "-" + spell(b) + (kind == 4 ? "/" + std::to_string(step) : "");
      }
      default: {  // start/step or */step
        const int step = Uniform(1, std::max(1, width / 2));
        const bool star = Chance(40);
        const int a = star ? lo : Uniform(lo, hi);
        for (int v = a; v <= hi; v += step)
          mark(v);
        *interval = true;
        return (star ? std::string("*") : std::to_string(a)) + "/" + std::to_string(step);
      }
    }
  }

  // random_time: second/minute/hour are random (else 0 0 12). all_months: month is '*'. every_day: the
  // day fields are '* ... ?' (else a random day rule).
  // dst_hours: half the time the hour field is one of the hours DST transitions happen in (0-3 local).
  Spec Next(bool random_time, bool all_months, bool every_day = false, bool dst_hours = false) {
    Spec s;
    bool interval = false;
    std::string sec;
    std::string min;
    std::string hour;
    if (random_time) {
      sec = Field(0, 59, s.sec, 0, nullptr, 70, &interval);
      min = Field(0, 59, s.min, 0, nullptr, 35, &interval);
      if (dst_hours && Chance(50)) {
        // Hour fields around the transitions (written out: a generated '*' or 'a/n' would mean 0-23).
        struct HourField {
          const char* text;
          std::vector<std::size_t> hours;
          bool interval;
        };
        static const std::vector<HourField> kNearTransitions{
            {"0", {0}, false},           {"1", {1}, false},       {"2", {2}, false},
            {"3", {3}, false},           {"1,2", {1, 2}, false},  {"2,3", {2, 3}, false},
            {"0-3", {0, 1, 2, 3}, true}, {"1-2", {1, 2}, true},   {"2-3", {2, 3}, true},
            {"1/12", {1, 13}, true},     {"2/12", {2, 14}, true},
        };
        const HourField& h = kNearTransitions.at(static_cast<std::size_t>(Uniform(0, 10)));
        hour = h.text;
        for (const std::size_t v : h.hours)
          s.hour.at(v) = true;
        interval = interval || h.interval;
      } else {
        hour = Field(0, 23, s.hour, 0, nullptr, 25, &interval);
      }
    } else {
      s.sec[0] = s.min[0] = s.hour[12] = true;
      sec = "0";
      min = "0";
      hour = "12";
    }
    s.interval = interval;
    std::string month = "*";
    bool ignored = false;
    if (all_months || Chance(70)) {
      for (int m = 1; m <= 12; ++m)
        s.month.at(static_cast<std::size_t>(m)) = true;
    } else {
      month = Field(1, 12, s.month, 0, kMonthNames.data(), 30, &ignored);
    }
    std::string dom = "?";
    std::string dow = "?";
    switch (every_day ? -1 : Uniform(0, 9)) {
      case 0:
        s.day = Spec::Day::kLast;
        s.arg = Chance(50) ? 0 : Uniform(1, 5);
        dom = s.arg == 0 ? "L" : "L-" + std::to_string(s.arg);
        break;
      case 1:
        s.day = Spec::Day::kLastWeekday;
        s.arg = Chance(60) ? 0 : Uniform(1, 5);
        dom = s.arg == 0 ? "LW" : "L-" + std::to_string(s.arg) + "W";
        break;
      case 2:
        s.day = Spec::Day::kNearestWeekday;
        s.arg = Chance(40) ? (Chance(50) ? 1 : Uniform(28, 31)) : Uniform(1, 31);
        dom = std::to_string(s.arg) + "W";
        break;
      case 3:
        s.day = Spec::Day::kLastDow;
        s.arg = Uniform(0, 6);
        dow = (Chance(50) ? std::string(kDayNames.at(static_cast<std::size_t>(s.arg)))
                          : std::to_string(s.arg + 1)) +
              "L";
        break;
      case 4:
        s.day = Spec::Day::kNthDow;
        s.arg = Uniform(0, 6);
        s.nth = Uniform(1, 5);
        dow = std::to_string(s.arg + 1) + "#" + std::to_string(s.nth);
        break;
      case 5:
      case 6: {
        s.day = Spec::Day::kDow;
        std::array<bool, 8> quartz{};  // 1 = SUN ... 7 = SAT
        dow = Field(1, 7, quartz, 0, kDayNames.data(), 30, &ignored);
        for (int w = 0; w < 7; ++w)
          s.dow.at(static_cast<std::size_t>(w)) = quartz.at(static_cast<std::size_t>(w) + 1);
        break;
      }
      case -1:
        s.day = Spec::Day::kDom;
        s.dom.fill(true);
        dom = "*";
        break;
      default:
        s.day = Spec::Day::kDom;
        dom = Field(1, 31, s.dom, 0, nullptr, 20, &ignored);
        break;
    }
    s.text = sec + " " + min + " " + hour + " " + dom + " " + month + " " + dow;
    return s;
  }

 private:
  std::mt19937 rng_;
};

// The day part of the reference: is (y, m, d) a matching day?
bool DayMatches(const Spec& s, int y, unsigned m, unsigned d) {
  if (!s.month.at(m)) return false;
  const date::year_month ym{date::year{y}, date::month{m}};
  const auto dim = static_cast<int>(static_cast<unsigned>((ym / date::last).day()));
  const auto weekday = [&](int day) {
    return static_cast<int>(
        date::weekday{date::sys_days{ym / date::day{static_cast<unsigned>(day)}}}.c_encoding());
  };
  const auto is_workday = [&](int day) { return weekday(day) >= 1 && weekday(day) <= 5; };
  // The Monday-Friday day of this month closest to `target` (ties cannot happen).
  const auto nearest_workday = [&](int target) {
    int best = -1;
    for (int day = 1; day <= dim; ++day) {
      if (is_workday(day) && (best < 0 || std::abs(day - target) < std::abs(best - target))) best = day;
    }
    return best;
  };
  const int day = static_cast<int>(d);
  switch (s.day) {
    case Spec::Day::kDom:
      return s.dom.at(d);
    case Spec::Day::kLast:
      return day == dim - s.arg;
    case Spec::Day::kLastWeekday:
      return dim - s.arg >= 1 && day == nearest_workday(dim - s.arg);
    case Spec::Day::kNearestWeekday:
      return s.arg <= dim && day == nearest_workday(s.arg);
    case Spec::Day::kDow:
      return s.dow.at(static_cast<std::size_t>(weekday(day)));
    case Spec::Day::kLastDow:
      return weekday(day) == s.arg && day + 7 > dim;
    case Spec::Day::kNthDow:
      return weekday(day) == s.arg && (day - 1) / 7 + 1 == s.nth;
  }
  return false;
}

// Reference matcher of wall-clock seconds, caching the day part.
class Reference {
 public:
  explicit Reference(const Spec& s) : s_(s) {}
  bool Matches(std::int64_t local) {
    const std::int64_t day = local >= 0 ? local / kDay : -((-local + kDay - 1) / kDay);
    if (day != cached_day_) {
      const date::year_month_day ymd{date::sys_days{date::days{static_cast<int>(day)}}};
      day_ok_ = DayMatches(s_, static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                           static_cast<unsigned>(ymd.day()));
      cached_day_ = day;
    }
    if (!day_ok_) return false;
    const auto sod = static_cast<std::size_t>(local - day * kDay);
    return s_.hour.at(sod / 3600) && s_.min.at(sod / 60 % 60) && s_.sec.at(sod % 60);
  }

 private:
  const Spec& s_;
  std::int64_t cached_day_ = -1'000'000;
  bool day_ok_ = false;
};

struct Period {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t offset;
};
// Offsets come from ringwheel's zone periods (date-tz, extended past 2037 by the TZif footer rule; checked
// on its own in posix_tz_test): the tz data is not what this test is about, the cron rules are.
Period PeriodOf(const date::time_zone* zone, std::int64_t t) {
  const auto p = ringwheel::detail::PeriodAt(zone, t);
  return {p.begin, p.end, p.offset};
}

// Brute force: every second of [w0, w1) that must fire, by the definition in cron.hpp.
std::vector<std::int64_t> BruteForce(const Spec& s, const date::time_zone* zone, std::int64_t w0,
                                     std::int64_t w1) {
  Reference ref(s);
  std::vector<std::int64_t> fires;
  Period p = PeriodOf(zone, w0);
  Period prev = PeriodOf(zone, p.begin - 1);
  for (std::int64_t t = w0; t < w1; ++t) {
    if (t >= p.end) {
      p = PeriodOf(zone, t);
      prev = PeriodOf(zone, p.begin - 1);
    }
    bool fire = false;
    const std::int64_t local = t + p.offset;
    if (ref.Matches(local)) {
      // A fixed-time expression does not fire in the second pass of an overlap.
      const bool second_pass = zone != nullptr && prev.offset > p.offset && local < p.begin + prev.offset;
      fire = s.interval || !second_pass;
    }
    if (!fire && zone != nullptr && t == p.begin && prev.offset < p.offset) {
      // The first instant after a gap fires if any missing wall time matches.
      for (std::int64_t l = p.begin + prev.offset; l < p.begin + p.offset && !fire; ++l)
        fire = ref.Matches(l);
    }
    if (fire) fires.push_back(t);
  }
  return fires;
}

std::vector<std::int64_t> FromNextFire(const ringwheel::CronExpression& e, const date::time_zone* zone,
                                       std::int64_t w0, std::int64_t w1) {
  std::vector<std::int64_t> fires;
  std::int64_t after = w0 * 1000 - 1;
  while (true) {
    const auto next = e.NextFireMs(after, zone);
    if (!next || *next >= w1 * 1000) break;
    EXPECT_GT(*next, after);
    EXPECT_EQ(*next % 1000, 0);
    fires.push_back(*next / 1000);
    after = *next;
  }
  return fires;
}

// Returns how many fires the window held (so a test can check it exercised something).
std::size_t CheckWindow(const Spec& spec, const date::time_zone* zone, std::int64_t w0, std::int64_t w1) {
  const auto expr = ringwheel::CronExpression::Parse(spec.text);
  if (!expr.ok()) {
    ADD_FAILURE() << spec.text << ": " << expr.status();
    return 0;
  }
  EXPECT_EQ(expr->interval(), spec.interval) << spec.text;
  const auto expected = BruteForce(spec, zone, w0, w1);
  const auto actual = FromNextFire(*expr, zone, w0, w1);
  if (expected == actual) return expected.size();
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i])
    ++i;
  ADD_FAILURE() << "'" << spec.text << "' in " << (zone ? zone->name() : "UTC") << " over ["
                << UtcText(w0 * 1000) << ", " << UtcText(w1 * 1000) << "): " << expected.size()
                << " expected, " << actual.size() << " produced; first difference at #" << i << ": expected "
                << (i < expected.size() ? UtcText(expected[i] * 1000) : "none") << ", produced "
                << (i < actual.size() ? UtcText(actual[i] * 1000) : "none");
  return expected.size();
}

std::int64_t DayStart(int y, unsigned m, unsigned d) {
  return std::int64_t{
             date::sys_days{date::year{y} / date::month{m} / date::day{d}}.time_since_epoch().count()} *
         kDay;
}

TEST(CronProperty, RandomExpressionsMatchBruteForceInUtc) {
  Generator gen(20260101);
  std::size_t fires = 0;
  for (int i = 0; i < 60; ++i) {
    const Spec spec = gen.Next(/*random_time=*/true, /*all_months=*/true);
    const std::int64_t w0 = DayStart(gen.Uniform(2020, 2036), static_cast<unsigned>(gen.Uniform(1, 12)),
                                     static_cast<unsigned>(gen.Uniform(1, 28))) +
                            gen.Uniform(0, static_cast<int>(kDay) - 1);
    fires += CheckWindow(spec, nullptr, w0, w0 + kDay);
  }
  EXPECT_GT(fires, 1000U);
}

TEST(CronProperty, RandomExpressionsMatchBruteForceAcrossDstTransitions) {
  Generator gen(4242);
  std::size_t fires = 0;
  const std::array<const char*, 3> zones{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe"};
  for (int i = 0; i < 240; ++i) {
    const auto* zone = date::locate_zone(zones.at(static_cast<std::size_t>(i) % zones.size()));
    // A window of 28 h around one of the year's two transitions (after 2037: from the TZif footer rule).
    const std::int64_t jan1 = DayStart(gen.Uniform(2020, 2045), 1, 1);
    const Period first = PeriodOf(zone, jan1);
    const std::int64_t transition = gen.Chance(50) ? first.end : PeriodOf(zone, first.end).end;
    const std::int64_t w0 = transition - 14 * kHour + gen.Uniform(-3600, 3600);
    // Every day: with a random day rule most windows would hold no fire at all.
    const Spec spec =
        gen.Next(/*random_time=*/true, /*all_months=*/true, /*every_day=*/true, /*dst_hours=*/true);
    fires += CheckWindow(spec, zone, w0, w0 + 28 * kHour);
  }
  EXPECT_GT(fires, 1000U);
}

TEST(CronProperty, RandomDayRulesMatchBruteForceOverYears) {
  // Day-level rules (L, L-n, LW, nW, nL, n#k, lists, ranges, steps, month lists) at noon, over 3 years,
  // in UTC and in New York.
  Generator gen(7);
  std::size_t fires = 0;
  for (int i = 0; i < 150; ++i) {
    const Spec spec = gen.Next(/*random_time=*/false, /*all_months=*/false);
    const auto expr = ringwheel::CronExpression::Parse(spec.text);
    ASSERT_TRUE(expr.ok()) << spec.text << ": " << expr.status();
    const int y0 = gen.Uniform(2020, 2034);
    for (const date::time_zone* zone :
         {static_cast<const date::time_zone*>(nullptr), date::locate_zone("America/New_York")}) {
      std::vector<std::int64_t> expected;
      for (date::sys_days day = date::year{y0} / 1 / 1; day < date::year{y0 + 3} / 1 / 1;
           day += date::days{1}) {
        const date::year_month_day ymd{day};
        if (!DayMatches(spec, static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                        static_cast<unsigned>(ymd.day()))) {
          continue;
        }
        const std::int64_t noon_local = std::int64_t{day.time_since_epoch().count()} * kDay + 12 * kHour;
        const std::int64_t offset =
            zone == nullptr
                ? 0
                : zone->get_info(date::local_seconds{std::chrono::seconds{noon_local}}).first.offset.count();
        expected.push_back(noon_local - offset);
      }
      const auto actual = FromNextFire(*expr, zone, DayStart(y0, 1, 1) + 2 * kHour, DayStart(y0 + 3, 1, 1));
      EXPECT_EQ(actual, expected) << "'" << spec.text << "' from " << y0 << " in "
                                  << (zone ? zone->name() : "UTC");
      fires += expected.size();
    }
  }
  EXPECT_GT(fires, 1000U);
}

}  // namespace
