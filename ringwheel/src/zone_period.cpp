#include "zone_period.hpp"

#include <date/tz.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "cronwheel/mutex.hpp"

namespace ringwheel::detail {
namespace {

// date-tz (USE_OS_TZDB) ends a zone's last listed period at the limit of its range (year 32767); anything
// past 2400 means "open-ended: the TZif footer rule applies from here on".
constexpr std::int64_t kOpenEnded = 13'569'465'600;  // 2400-01-01T00:00:00Z

std::optional<PosixTz> LoadFooterRule(const date::time_zone* zone) {
  std::ifstream in("/usr/share/zoneinfo/" + zone->name(), std::ios::binary);
  if (!in) return std::nullopt;
  // (Read in chunks: building the string from istreambuf_iterators trips GCC 12's -Wnull-dereference at -O2.)
  std::string data;
  std::array<char, 4096> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    data.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  // TZif version 2+ ends with "\n<POSIX TZ string>\n".
  if (data.size() < 6 || data.compare(0, 4, "TZif") != 0 || data[4] < '2' || data.back() != '\n') {
    return std::nullopt;
  }
  const std::size_t start = data.rfind('\n', data.size() - 2);
  if (start == std::string::npos) return std::nullopt;
  return ParsePosixTz(std::string_view(data).substr(start + 1, data.size() - start - 2));
}

// The footer rule of each zone, read once. A thread-local one-entry cache keeps the mutex off the hot path
// (cron searches ask for the same zone again and again).
const std::optional<PosixTz>& RuleOf(const date::time_zone* zone) {
  thread_local const date::time_zone* last_zone = nullptr;
  thread_local const std::optional<PosixTz>* last_rule = nullptr;
  if (zone == last_zone) return *last_rule;
  static cronwheel::Mutex mu;
  // Values never move, so a reference handed out stays valid after the lock is released.
  static std::unordered_map<const date::time_zone*, std::optional<PosixTz>> rules ABSL_GUARDED_BY(mu);
  const cronwheel::MutexLock lock(mu);
  auto [it, inserted] = rules.try_emplace(zone);
  if (inserted) it->second = LoadFooterRule(zone);
  last_zone = zone;
  last_rule = &it->second;
  return it->second;
}

// The period containing t >= last_begin, where [last_begin, open end) is the zone's last listed period with
// offset last_offset, and the footer rule governs what follows.
ZonePeriod RulePeriod(const PosixTz& rule, std::int64_t last_begin, std::int64_t last_offset,
                      std::int64_t t) {
  struct Transition {
    std::int64_t at;
    int order;  // at the same instant a DST end applies before a DST start (rules that mean "DST all year")
    std::int64_t offset;
  };
  const auto year = static_cast<int>(
      date::year_month_day{date::floor<date::days>(date::sys_seconds{std::chrono::seconds{t}})}.year());
  std::array<Transition, 6> all{};
  std::size_t n = 0;
  for (int y = year - 1; y <= year + 1; ++y) {
    const std::int64_t start = TransitionInstant(rule.dst_start, y, rule.std_offset);
    const std::int64_t end = TransitionInstant(rule.dst_end, y, rule.dst_offset);
    if (start > last_begin) all.at(n++) = Transition{start, 1, rule.dst_offset};
    if (end > last_begin) all.at(n++) = Transition{end, 0, rule.std_offset};
  }
  // Insertion sort of at most six (std::sort here trips a GCC 12 -Warray-bounds false positive at -O2).
  for (std::size_t i = 1; i < n; ++i) {
    for (std::size_t j = i; j > 0; --j) {
      const Transition& a = all.at(j - 1);
      const Transition& b = all.at(j);
      if (a.at < b.at || (a.at == b.at && a.order <= b.order)) break;
      std::swap(all.at(j - 1), all.at(j));
    }
  }
  ZonePeriod p{last_begin, kNoTransitionAfter, last_offset};
  for (std::size_t i = 0; i < n; ++i) {
    if (all.at(i).at > t) {
      p.end = all.at(i).at;
      break;
    }
    p.begin = all.at(i).at;
    p.offset = all.at(i).offset;
  }
  return p;
}

}  // namespace

ZonePeriod PeriodAt(const date::time_zone* zone, std::int64_t t) {
  if (zone == nullptr) return {};
  const auto info = zone->get_info(date::sys_seconds{std::chrono::seconds{t}});
  // date-tz reports the first and last periods with begin/end at the limits of its range; clamp them to
  // our sentinels so arithmetic on them cannot overflow.
  const std::int64_t begin = std::max(info.begin.time_since_epoch().count(), kNoTransitionBefore);
  const std::int64_t end = info.end.time_since_epoch().count();
  const std::int64_t offset = info.offset.count();
  if (end < kOpenEnded) return {begin, end, offset};
  const std::optional<PosixTz>& rule = RuleOf(zone);
  if (!rule || !rule->has_dst) return {begin, kNoTransitionAfter, offset};
  return RulePeriod(*rule, begin, offset, t);
}

std::int64_t LocalToInstant(const date::time_zone* zone, std::int64_t local) {
  if (zone == nullptr) return local;
  // Walk the periods forward from an instant certainly before any occurrence of `local`: the first period
  // that contains local - offset gives the earliest occurrence; passing a gap that swallows `local` gives
  // the gap's end.
  ZonePeriod p = PeriodAt(zone, local - kMaxAbsOffset);
  for (int i = 0; i < 64; ++i) {
    const std::int64_t candidate = local - p.offset;
    if (candidate >= p.begin && candidate < p.end) return candidate;
    if (p.end >= kNoTransitionAfter) break;
    const ZonePeriod next = PeriodAt(zone, p.end);
    if (local >= p.end + p.offset && local < p.end + next.offset) return p.end;
    p = next;
  }
  return local - p.offset;
}

std::optional<PosixTz> FooterRule(const date::time_zone* zone) {
  if (zone == nullptr) return std::nullopt;
  return RuleOf(zone);
}

}  // namespace ringwheel::detail
