// bench_ringwheel: the hashed wheel against std::priority_queue, and cron next-fire, measured in one run;
// prints the wheel/priority_queue ratios at the end. Build with the release preset:
//   scripts/build release bench_ringwheel && build/release/bench/ringwheel/bench_ringwheel
// Google Benchmark flags work (e.g. --benchmark_filter=cron).
//
// Workloads (the same operations on both structures; tick = 1 ms, 512 ticks per wheel = one 512 ms turn):
//   schedule+expire  N timers pending with deadlines uniform over the next H ticks (H = one turn, or four
//                    turns for the "long" rows). Each iteration advances time by one tick, expires every
//                    timer due, and schedules as many new ones (deadline now + uniform(0, H]), so N stays
//                    constant. Cost per timer = one schedule + one expire.
//   cancel           N pending as above. Each iteration cancels N/H random pending timers and schedules a
//                    replacement for each (a job finished before its timeout), then advances one tick and
//                    reschedules what expired. std::priority_queue has no erase: cancelling marks the entry
//                    stale (a generation counter) and the stale entry is discarded when it reaches the top
//                    (lazy deletion, the usual way). Cost per cancel+reschedule (expiries included in time).
// Random deadlines come from a pre-generated table so RNG cost is not measured.
#include <benchmark/benchmark.h>
#include <date/tz.h>

#include <cstdio>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "bench/collector.hpp"
#include "ringwheel/cron.hpp"
#include "ringwheel/hashed_wheel.hpp"

namespace {

using namespace std::chrono_literals;
using ringwheel::HashedWheel;
using ringwheel::SteadyTime;
using ringwheel::WheelHandle;

constexpr std::int64_t kTickNs = 1'000'000;  // 1 ms
constexpr std::size_t kTicksPerWheel = 512;
constexpr SteadyTime kStart{std::chrono::hours(1)};

// Pre-generated offsets in (0, horizon_ticks * tick] ns, and random indexes, cycled.
class RandomTable {
 public:
  RandomTable(std::int64_t horizon_ticks, std::size_t n) : offsets_(kSize), indexes_(kSize) {
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<std::int64_t> off(1, horizon_ticks * kTickNs);
    std::uniform_int_distribution<std::size_t> idx(0, n - 1);
    for (std::size_t i = 0; i < kSize; ++i) {
      offsets_[i] = off(rng);
      indexes_[i] = idx(rng);
    }
  }
  std::int64_t Offset() { return offsets_[next_off_++ & (kSize - 1)]; }
  std::size_t Index() { return indexes_[next_idx_++ & (kSize - 1)]; }

 private:
  static constexpr std::size_t kSize = std::size_t{1} << 20;
  std::vector<std::int64_t> offsets_;
  std::vector<std::size_t> indexes_;
  std::size_t next_off_ = 0;
  std::size_t next_idx_ = 0;
};

struct PqEntry {
  std::int64_t deadline_ns;
  std::uint32_t id;
  std::uint32_t generation;
  bool operator>(const PqEntry& o) const { return deadline_ns > o.deadline_ns; }
};
using MinHeap = std::priority_queue<PqEntry, std::vector<PqEntry>, std::greater<>>;

void WheelScheduleExpire(benchmark::State& state, std::int64_t horizon_ticks) {
  const auto n = static_cast<std::size_t>(state.range(0));
  RandomTable rnd(horizon_ticks, n);
  HashedWheel<std::uint32_t> wheel(kStart, std::chrono::nanoseconds(kTickNs), kTicksPerWheel);
  wheel.Reserve(n + n / 4);
  for (std::size_t i = 0; i < n; ++i) {
    wheel.Schedule(kStart + std::chrono::nanoseconds(rnd.Offset()), static_cast<std::uint32_t>(i));
  }
  std::vector<std::uint32_t> expired;
  std::int64_t now_ns = 0;
  std::int64_t timers = 0;
  for (auto _ : state) {
    now_ns += kTickNs;
    const SteadyTime now = kStart + std::chrono::nanoseconds(now_ns);
    expired.clear();
    wheel.Advance(now, expired);
    for (const std::uint32_t id : expired)
      wheel.Schedule(now + std::chrono::nanoseconds(rnd.Offset()), id);
    timers += static_cast<std::int64_t>(expired.size());
    benchmark::DoNotOptimize(expired.data());
  }
  state.SetItemsProcessed(timers);
}

void PqScheduleExpire(benchmark::State& state, std::int64_t horizon_ticks) {
  const auto n = static_cast<std::size_t>(state.range(0));
  RandomTable rnd(horizon_ticks, n);
  std::vector<PqEntry> storage;
  storage.reserve(n + n / 4);
  MinHeap heap(std::greater<>{}, std::move(storage));
  for (std::size_t i = 0; i < n; ++i)
    heap.push({rnd.Offset(), static_cast<std::uint32_t>(i), 0});
  std::vector<std::uint32_t> expired;
  std::int64_t now_ns = 0;
  std::int64_t timers = 0;
  for (auto _ : state) {
    now_ns += kTickNs;
    expired.clear();
    while (!heap.empty() && heap.top().deadline_ns <= now_ns) {
      expired.push_back(heap.top().id);
      heap.pop();
    }
    for (const std::uint32_t id : expired)
      heap.push({now_ns + rnd.Offset(), id, 0});
    timers += static_cast<std::int64_t>(expired.size());
    benchmark::DoNotOptimize(expired.data());
  }
  state.SetItemsProcessed(timers);
}

void WheelCancel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto per_tick = std::max<std::size_t>(1, n / kTicksPerWheel);
  RandomTable rnd(kTicksPerWheel, n);
  HashedWheel<std::uint32_t> wheel(kStart, std::chrono::nanoseconds(kTickNs), kTicksPerWheel);
  wheel.Reserve(n + n / 4);
  std::vector<WheelHandle> handle(n);
  for (std::size_t i = 0; i < n; ++i) {
    handle[i] =
        wheel.Schedule(kStart + std::chrono::nanoseconds(rnd.Offset()), static_cast<std::uint32_t>(i));
  }
  std::vector<std::uint32_t> expired;
  std::int64_t now_ns = 0;
  std::int64_t cancels = 0;
  for (auto _ : state) {
    const SteadyTime now = kStart + std::chrono::nanoseconds(now_ns);
    for (std::size_t k = 0; k < per_tick; ++k) {
      const std::size_t j = rnd.Index();
      benchmark::DoNotOptimize(wheel.Cancel(handle[j]));
      handle[j] = wheel.Schedule(now + std::chrono::nanoseconds(rnd.Offset()), static_cast<std::uint32_t>(j));
    }
    cancels += static_cast<std::int64_t>(per_tick);
    now_ns += kTickNs;
    const SteadyTime next = kStart + std::chrono::nanoseconds(now_ns);
    expired.clear();
    wheel.Advance(next, expired);
    for (const std::uint32_t id : expired) {
      handle[id] = wheel.Schedule(next + std::chrono::nanoseconds(rnd.Offset()), id);
    }
  }
  state.SetItemsProcessed(cancels);
}

void PqCancel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto per_tick = std::max<std::size_t>(1, n / kTicksPerWheel);
  RandomTable rnd(kTicksPerWheel, n);
  std::vector<PqEntry> storage;
  storage.reserve(2 * n + n / 4);
  MinHeap heap(std::greater<>{}, std::move(storage));
  std::vector<std::uint32_t> generation(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    heap.push({rnd.Offset(), static_cast<std::uint32_t>(i), 0});
  std::int64_t now_ns = 0;
  std::int64_t cancels = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < per_tick; ++k) {
      const std::size_t j = rnd.Index();
      ++generation[j];  // the old entry is now stale
      heap.push({now_ns + rnd.Offset(), static_cast<std::uint32_t>(j), generation[j]});
    }
    cancels += static_cast<std::int64_t>(per_tick);
    now_ns += kTickNs;
    while (!heap.empty() && heap.top().deadline_ns <= now_ns) {
      const PqEntry e = heap.top();
      heap.pop();
      if (e.generation != generation[e.id]) continue;  // cancelled: discarded on reaching the top
      ++generation[e.id];
      heap.push({now_ns + rnd.Offset(), e.id, generation[e.id]});
    }
  }
  state.SetItemsProcessed(cancels);
}

struct CronCase {
  const char* label;
  const char* expr;
  const char* zone;  // nullptr = UTC
};
constexpr CronCase kCronCases[] = {
    {"every_5_min_utc", "0 0/5 * * * ?", nullptr},
    {"daily_noon_utc", "0 0 12 * * ?", nullptr},
    {"weekdays_10_15_utc", "0 15 10 ? * MON-FRI", nullptr},
    {"every_5_min_new_york", "0 0/5 * * * ?", "America/New_York"},
    {"weekdays_10_15_shanghai", "0 15 10 ? * MON-FRI", "Asia/Shanghai"},
    {"third_friday_new_york", "0 15 10 ? * 6#3", "America/New_York"},
    {"last_weekday_berlin", "0 0 18 LW * ?", "Europe/Berlin"},
};

void CronNextFire(benchmark::State& state, const CronCase& c) {
  const auto expr = ringwheel::CronExpression::Parse(c.expr);
  const date::time_zone* zone = c.zone == nullptr ? nullptr : date::locate_zone(c.zone);
  const std::int64_t start = 1'767'225'600'123;  // 2026-01-01T00:00:00.123Z
  std::int64_t after = start;
  for (auto _ : state) {
    const auto next = expr->NextFireMs(after, zone);
    after = next && *next < 2'082'758'400'000 ? *next : start;  // wrap before 2036
    benchmark::DoNotOptimize(after);
  }
  state.SetItemsProcessed(state.iterations());
}

using cronwheel::bench::Collector;

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::int64_t> sizes{1'000, 100'000, 1'000'000};
  for (const std::int64_t n : sizes) {
    benchmark::RegisterBenchmark("wheel/schedule_expire", WheelScheduleExpire, std::int64_t{kTicksPerWheel})
        ->Arg(n)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
    benchmark::RegisterBenchmark("pq/schedule_expire", PqScheduleExpire, std::int64_t{kTicksPerWheel})
        ->Arg(n)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  benchmark::RegisterBenchmark("wheel/schedule_expire_long", WheelScheduleExpire,
                               std::int64_t{4 * kTicksPerWheel})
      ->Arg(1'000'000)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("pq/schedule_expire_long", PqScheduleExpire, std::int64_t{4 * kTicksPerWheel})
      ->Arg(1'000'000)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
  for (const std::int64_t n : sizes) {
    benchmark::RegisterBenchmark("wheel/cancel", WheelCancel)
        ->Arg(n)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
    benchmark::RegisterBenchmark("pq/cancel", PqCancel)->Arg(n)->Repetitions(3)->ReportAggregatesOnly(true);
  }
  for (const CronCase& c : kCronCases) {
    benchmark::RegisterBenchmark((std::string("cron/next_fire/") + c.label).c_str(), CronNextFire, c)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }

  Collector collector;
  if (!cronwheel::bench::RunRegistered(argc, argv, collector)) return 1;

  std::printf(
      "\nWorkload: tick 1 ms, 512 ticks per wheel (one turn = 512 ms). N timers pending, deadlines uniform "
      "over the\n"
      "next H ticks (H = 1 turn; 'long' = 4 turns). schedule+expire: each step advances one tick, expires "
      "what is\n"
      "due and schedules as many new timers (N constant); ns per timer = one schedule + one expire. cancel: "
      "each\n"
      "step cancels N/512 random pending timers and schedules replacements, then advances one tick;\n"
      "std::priority_queue cancels lazily (stale entries popped later). Medians of 3 repetitions, CPU "
      "time.\n\n");
  std::printf("%-22s %10s %16s %16s %10s\n", "workload", "pending", "wheel ns/op", "pq ns/op", "pq/wheel");
  const auto row = [&](const char* label, const std::string& wheel, const std::string& pq, std::int64_t n) {
    const std::string suffix = "/" + std::to_string(n);
    const double w = collector.NsPerItem(wheel + suffix);
    const double p = collector.NsPerItem(pq + suffix);
    if (w <= 0 || p <= 0) return;
    std::printf("%-22s %10lld %16.1f %16.1f %9.1fx\n", label, static_cast<long long>(n), w, p, p / w);
  };
  for (const std::int64_t n : sizes)
    row("schedule+expire", "wheel/schedule_expire", "pq/schedule_expire", n);
  row("schedule+expire long", "wheel/schedule_expire_long", "pq/schedule_expire_long", 1'000'000);
  for (const std::int64_t n : sizes)
    row("cancel", "wheel/cancel", "pq/cancel", n);
  std::printf("\n%-32s %12s\n", "cron next fire", "ns/call");
  double worst = 0;
  for (const CronCase& c : kCronCases) {
    const double ns = collector.NsPerItem(std::string("cron/next_fire/") + c.label);
    if (ns <= 0) continue;
    worst = std::max(worst, ns);
    std::printf("%-32s %12.1f\n", c.label, ns);
  }
  if (worst > 0) {
    std::printf("goal: next fire <= 2000 ns for a typical expression: %s (worst %.0f ns)\n",
                worst <= 2000 ? "met" : "NOT met", worst);
  }
  return 0;
}
