#pragma once
// Prometheus metrics: a registry of counters, gauges and histograms, and its exposition in the text format
// version 0.0.4 (the format every Prometheus server scrapes; https://prometheus.io/docs/instrumenting/
// exposition_formats/). Debian 12 packages no C++ Prometheus client, so this is cronwheel's own, kept small.
// docs/operations.md lists every metric the admin and the executor export.
//
//   metrics::Registry registry;
//   auto& fires = registry.AddCounter("cronwheel_fires_total", "Fires by outcome.", {"outcome"});
//   metrics::Counter& sent = fires.Labels({"sent"});    // resolve once, keep the reference
//   sent.Inc();                                          // hot path: one relaxed atomic add
//   auto& lag = registry.AddHistogram("cronwheel_fire_lag_seconds", "...", {}, metrics::LatencyBuckets());
//   lag.Labels({}).Observe(0.012);
//   registry.AddGaugeCallback("cronwheel_ring_size", "...", [&] { return double(ring.size()); });
//   std::string text = registry.Render();                // serve with Content-Type kContentType
//
// A family has a name, a help text, a type and fixed label names; each child of a family is one set of
// label values and holds the numbers. Families appear in the output in registration order, their children
// sorted by label values. A family without label names has its one child from the start (it shows 0 before
// the first update); a labelled family shows the children created so far (create the expected ones at
// start-up so each series exists at 0 and rate() sees its first increment).
//
// Naming follows Prometheus's conventions (https://prometheus.io/docs/practices/naming/): snake_case, a
// `cronwheel_` prefix (the callers' rule), base units in the name (`_seconds`, `_bytes`), counters end in
// `_total`, which AddCounter enforces. Histograms have cumulative buckets `_bucket{le="..."}` ending with
// le="+Inf", then `_sum` and `_count`; `_count` is printed as the +Inf bucket, so the two always agree
// (a scrape racing an Observe may see `_sum` without that observation: harmless, as in the official
// clients).
//
// Errors: registering a name twice, an invalid metric or label name, a counter name without `_total`, a
// histogram label named `le`, or bucket bounds that are not finite and strictly increasing throws
// std::invalid_argument naming the metric; so does asking for a child with the wrong number of label values.
// These are programming errors, caught by the first test that starts the process.
//
// Thread-safety: everything may be called from any thread. Counter/Gauge/Histogram updates are lock-free
// atomics (relaxed: a scrape needs no ordering with other memory). Labels() takes the family's mutex (look a
// child up once, not per event). Render() takes the registry's mutex and runs the callbacks on the calling
// thread; a callback must not register metrics and should be quick (it runs at every scrape).
// Lifetime: children live as long as the registry; references to them stay valid.
// Complexity: Inc/Set O(1); Observe O(log buckets); Render O(series).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cronwheel/mutex.hpp"

namespace cronwheel::metrics {

// The Content-Type of Render()'s output (text format 0.0.4).
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Bucket upper bounds (seconds) for latencies from 1 ms to 60 s: fire lag, request latency, run time.
std::vector<double> LatencyBuckets();

// `count` bounds: start, start*factor, start*factor^2, ... (start > 0, factor > 1, count >= 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

// A value that only goes up (events, seconds spent). Reset only by a restart of the process, which
// Prometheus's rate() handles.
class Counter final {
 public:
  void Inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A value that goes up and down (a queue's length, a count of things now held).
class Gauge final {
 public:
  void Set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void Add(double d) noexcept { value_.fetch_add(d, std::memory_order_relaxed); }
  void Inc() noexcept { Add(1); }
  void Dec() noexcept { Add(-1); }
  [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into fixed buckets, with their sum.
class Histogram final {
 public:
  // `bounds`: the family's upper bounds (finite, strictly increasing); must outlive the histogram.
  explicit Histogram(const std::vector<double>& bounds);
  void Observe(double value) noexcept;
  // A duration observed in seconds.
  void Observe(std::chrono::nanoseconds d) noexcept { Observe(std::chrono::duration<double>(d).count()); }

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    [[nodiscard]] std::uint64_t count() const { return cumulative.empty() ? 0 : cumulative.back(); }
  };
  [[nodiscard]] Snapshot snapshot() const;
  [[nodiscard]] const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double>& bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // bounds_.size() + 1 (the last is > every bound)
  std::atomic<double> sum_{0};
};

using LabelValues = std::vector<std::string>;

// One value of a callback family, read at scrape time.
struct Sample {
  LabelValues labels;  // one value per label name of the family
  double value = 0;
};

enum class Type { kCounter, kGauge, kHistogram };

// What every family has; Render appends its lines.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::vector<std::string>& label_names() const { return label_names_; }
  [[nodiscard]] Type type() const { return type_; }
  // Appends "# HELP", "# TYPE" and the samples.
  void Render(std::string& out) const;

 protected:
  virtual void RenderSamples(std::string& out) const = 0;
  // Throws std::invalid_argument unless `values` has one value per label name.
  void CheckArity(std::size_t values) const;

 private:
  std::string name_;
  std::string help_;
  Type type_;
  std::vector<std::string> label_names_;
};

// A family of counters, gauges or histograms: one child per set of label values.
template <class Metric>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
         std::vector<double> bounds = {});

  // The child for these label values, created at the first call. O(log children) under a mutex: call it
  // once and keep the reference.
  Metric& Labels(std::initializer_list<std::string_view> values);
  Metric& Labels(const LabelValues& values);

 private:
  void RenderSamples(std::string& out) const override;
  std::unique_ptr<Metric> Make() const;

  std::vector<double> bounds_;  // histograms
  mutable cronwheel::Mutex mu_;
  std::map<LabelValues, std::unique_ptr<Metric>> children_ ABSL_GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry final {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // `name` must end in `_total`.
  CounterFamily& AddCounter(std::string name, std::string help, std::vector<std::string> label_names = {});
  GaugeFamily& AddGauge(std::string name, std::string help, std::vector<std::string> label_names = {});
  // `bounds`: finite, strictly increasing upper bounds; +Inf is added.
  HistogramFamily& AddHistogram(std::string name, std::string help, std::vector<std::string> label_names,
                                std::vector<double> bounds);

  // Families whose values are read when scraped: `collect` returns the current samples (each with one
  // value per label name; a sample with the wrong number is skipped and logged). A counter callback must
  // return values that never go down (a running total kept elsewhere).
  void AddGaugeCallback(std::string name, std::string help, std::vector<std::string> label_names,
                        std::function<std::vector<Sample>()> collect);
  void AddGaugeCallback(std::string name, std::string help, std::function<double()> read);
  void AddCounterCallback(std::string name, std::string help, std::vector<std::string> label_names,
                          std::function<std::vector<Sample>()> collect);
  void AddCounterCallback(std::string name, std::string help, std::function<double()> read);

  // The exposition of every family (text format 0.0.4, ends with a newline).
  [[nodiscard]] std::string Render() const;
  // The names of the families registered so far.
  [[nodiscard]] std::vector<std::string> Names() const;

 private:
  template <class F>
  F& Insert(std::unique_ptr<F> family);

  mutable cronwheel::Mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
};

// The text format's escaping: in a label value, backslash, double quote and line feed become \\, \" and
// \n; in HELP text, backslash and line feed become \\ and \n.
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);
// A sample value as the text format writes it: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// Adds `cronwheel_build_info{version="..."} 1` (the version of this build, from CMake's project version).
void AddBuildInfo(Registry& registry);
// The version of this build ("0.1.0").
std::string_view BuildVersion();

}  // namespace cronwheel::metrics
