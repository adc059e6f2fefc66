#pragma once
// A Google Benchmark reporter for the micro-benchmarks (bench/ringwheel, bench/protocol): prints the console
// report as usual and keeps each row's time per item, so a benchmark can print its ratios against a
// reference measured in the same run.
//
// A row is named "function" or "function/args"; its time per item is 1e9 / items_per_second, from the row
// itself, or from the median of its repetitions when they are reported as aggregates.
// Thread-safety: Google Benchmark calls a reporter from one thread.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

namespace cronwheel::bench {

class Collector : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal (a reporter passed in does not see --benchmark_color).
  Collector() : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type != Run::RT_Iteration && !median) continue;
      const auto it = r.counters.find("items_per_second");
      if (it == r.counters.end() || it->second.value <= 0) continue;
      const std::string& args = r.run_name.args;
      ns_per_item_[r.run_name.function_name + (args.empty() ? "" : "/" + args)] = 1e9 / it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Nanoseconds per item of row `name`; 0 if it did not run (filtered out, or failed).
  [[nodiscard]] double NsPerItem(const std::string& name) const {
    const auto it = ns_per_item_.find(name);
    return it == ns_per_item_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> ns_per_item_;
};

// Runs the registered benchmarks with the command line's flags, reporting to `collector`. False (after
// Google Benchmark printed why) for an argument it does not know.
inline bool RunRegistered(int argc, char** argv, Collector& collector) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return false;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();
  return true;
}

}  // namespace cronwheel::bench
