// Reading a POST /runs batch, the body an admin sends a cronwheel executor with the fires of one second
// (docs/architecture.md, "Many fires per request"). Build with the release preset:
//   scripts/bench protocol [--quick] [Google Benchmark flags...]
//
// Rows (each item is one run of a 5,000-run batch, the body as ToJson(runs) writes it, about 1.4 MB):
//   nlohmann/parse           the reference: nlohmann::json::parse of the body, no depth limit
//   nlohmann/parse_callback  json::parse with a parser callback enforcing the depth limit: how ParseJson
//                            limited the depth before 29 Nov 2026
//   ParseJson                cronwheel::ParseJson (the depth limit counted by a DOM builder of its own)
//   ParseTriggerBatch        the executor's whole read of the batch: ParseJson and each run's fields
// and the ratios of each to the reference, measured in the same run.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/collector.hpp"
#include "cronwheel/json.hpp"
#include "xxljob/protocol.hpp"

namespace {

constexpr int kRuns = 5'000;

const std::string& Body() {
  static const std::string body = [] {
    std::vector<cronwheel::xxljob::TriggerParam> runs(kRuns);
    for (int i = 0; i < kRuns; ++i) {
      auto& p = runs[static_cast<std::size_t>(i)];
      p.job_id = i + 1;
      p.executor_handler = "benchHandler";
      p.executor_block_strategy = "SERIAL_EXECUTION";
      p.log_id = 1'000'000 + i;
      p.log_date_time = 1'796'601'600'000;
      p.glue_type = "BEAN";
      p.run_at_ms = 1'796'601'601'000;
    }
    return cronwheel::xxljob::ToJson(std::span<const cronwheel::xxljob::TriggerParam>(runs)).dump();
  }();
  return body;
}

void NlohmannParse(benchmark::State& state) {
  const auto& body = Body();
  for (auto _ : state) {
    auto j = nlohmann::json::parse(body.begin(), body.end());
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations() * kRuns);
}

void NlohmannParseCallback(benchmark::State& state) {
  const auto& body = Body();
  const nlohmann::json::parser_callback_t limit = [](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= cronwheel::kMaxJsonDepth) {
      throw std::runtime_error("too deep");
    }
    return true;
  };
  for (auto _ : state) {
    auto j = nlohmann::json::parse(body.begin(), body.end(), limit);
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations() * kRuns);
}

void ParseJson(benchmark::State& state) {
  const auto& body = Body();
  for (auto _ : state) {
    auto j = cronwheel::ParseJson(body);
    if (!j.ok()) state.SkipWithError(std::string(j.status().message()).c_str());
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations() * kRuns);
}

void ParseTriggerBatch(benchmark::State& state) {
  const auto& body = Body();
  for (auto _ : state) {
    auto runs = cronwheel::xxljob::ParseTriggerBatch(body);
    if (!runs.ok() || runs->size() != kRuns) state.SkipWithError("the batch did not parse");
    benchmark::DoNotOptimize(runs);
  }
  state.SetItemsProcessed(state.iterations() * kRuns);
}

using cronwheel::bench::Collector;

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::pair<const char*, void (*)(benchmark::State&)>> rows{
      {"nlohmann/parse", NlohmannParse},
      {"nlohmann/parse_callback", NlohmannParseCallback},
      {"ParseJson", ParseJson},
      {"ParseTriggerBatch", ParseTriggerBatch}};
  for (const auto& [name, fn] : rows) {
    benchmark::RegisterBenchmark(name, fn)->Repetitions(3)->ReportAggregatesOnly(true)->Unit(
        benchmark::kMillisecond);
  }

  Collector collector;
  if (!cronwheel::bench::RunRegistered(argc, argv, collector)) return 1;

  std::printf(
      "\nA POST /runs body of %d runs, %zu bytes. Per run (median of 3), and against nlohmann/parse:\n",
      kRuns, Body().size());
  const double reference = collector.NsPerItem("nlohmann/parse");
  for (const auto& [name, fn] : rows) {
    const double ns = collector.NsPerItem(name);
    if (ns <= 0 || reference <= 0) continue;
    std::printf("  %-24s %8.2f us per run  %5.2fx\n", name, ns / 1000, ns / reference);
  }
  return 0;
}
