#include "cronwheel/metrics.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "cronwheel/mutex.hpp"

#ifndef CRONWHEEL_VERSION
#define CRONWHEEL_VERSION "unknown"
#endif

namespace cronwheel::metrics {
namespace {

// [a-zA-Z_:][a-zA-Z0-9_:]* (metric names; colons are for recording rules, allowed but unused here).
bool ValidMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus's own labels).
bool ValidLabelName(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"}` (plus `extra`, already formatted as `le="..."`), or "" when there is nothing.
void AppendLabels(std::string& out, const std::vector<std::string>& names, const LabelValues& values,
                  std::string_view extra = {}) {
  if (names.empty() && extra.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra.empty()) {
    if (!names.empty()) out += ',';
    out += extra;
  }
  out += '}';
}

void AppendSample(std::string& out, std::string_view name, const std::vector<std::string>& names,
                  const LabelValues& values, std::string_view value, std::string_view extra = {}) {
  out += name;
  AppendLabels(out, names, values, extra);
  out += ' ';
  out += value;
  out += '\n';
}

// A family whose samples come from a callback at scrape time.
class CallbackFamily final : public FamilyBase {
 public:
  CallbackFamily(std::string name, std::string help, Type type, std::vector<std::string> label_names,
                 std::function<std::vector<Sample>()> collect)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        collect_(std::move(collect)) {}

 private:
  void RenderSamples(std::string& out) const override {
    std::vector<Sample> samples;
    try {
      samples = collect_();
    } catch (const std::exception& e) {
      // One failing source must not fail the whole scrape: its series are left out this time.
      spdlog::warn("metric {}: reading its value failed: {}", name(), e.what());
      return;
    }
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) { return a.labels < b.labels; });
    for (const auto& s : samples) {
      if (s.labels.size() != label_names().size()) {
        spdlog::warn("metric {}: a sample has {} label value(s) for {} label name(s); left out", name(),
                     s.labels.size(), label_names().size());
        continue;
      }
      AppendSample(out, name(), label_names(), s.labels, FormatValue(s.value));
    }
  }
  std::function<std::vector<Sample>()> collect_;
};

std::function<std::vector<Sample>()> Single(std::function<double()> read) {
  return [read = std::move(read)] { return std::vector<Sample>{{{}, read()}}; };
}

}  // namespace

std::vector<double> LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  if (!(start > 0) || !(factor > 1) || count < 1) {
    throw std::invalid_argument(fmt::format(
        "ExponentialBuckets({}, {}, {}): needs start > 0, factor > 1, count >= 1", start, factor, count));
  }
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor)
    out.push_back(v);
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);  // shortest representation that reads back as the same double
}

Histogram::Histogram(const std::vector<double>& bounds)
    : bounds_(bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {}

void Histogram::Observe(double value) noexcept {
  // The first bound >= value: Prometheus buckets are "less than or equal" (le).
  const auto i =
      static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.cumulative.resize(bounds_.size() + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = total;
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

FamilyBase::FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {
  if (!ValidMetricName(name_)) {
    throw std::invalid_argument(
        fmt::format("metric name '{}' is not valid: use [a-zA-Z_:][a-zA-Z0-9_:]*", name_));
  }
  if (type_ == Type::kCounter && !name_.ends_with("_total")) {
    throw std::invalid_argument(fmt::format("counter '{}' must be named ..._total", name_));
  }
  for (std::size_t i = 0; i < label_names_.size(); ++i) {
    const auto& l = label_names_[i];
    if (!ValidLabelName(l)) {
      throw std::invalid_argument(fmt::format(
          "metric {}: label name '{}' is not valid: use [a-zA-Z_][a-zA-Z0-9_]*, not starting with __", name_,
          l));
    }
    if (type_ == Type::kHistogram && l == "le") {
      throw std::invalid_argument(fmt::format("histogram {}: the label name 'le' is reserved", name_));
    }
    if (std::find(label_names_.begin(), label_names_.begin() + static_cast<std::ptrdiff_t>(i), l) !=
        label_names_.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::invalid_argument(fmt::format("metric {}: label name '{}' given twice", name_, l));
    }
  }
}

void FamilyBase::Render(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  out += EscapeHelp(help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += TypeName(type_);
  out += '\n';
  RenderSamples(out);
}

void FamilyBase::CheckArity(std::size_t values) const {
  if (values != label_names_.size()) {
    throw std::invalid_argument(fmt::format("metric {}: {} label value(s) given for {} label name(s)", name_,
                                            values, label_names_.size()));
  }
}

template <class Metric>
Family<Metric>::Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
                       std::vector<double> bounds)
    : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)), bounds_(std::move(bounds)) {
  if constexpr (std::is_same_v<Metric, Histogram>) {
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1])) {
        throw std::invalid_argument(
            fmt::format("histogram {}: bucket bounds must be finite and strictly increasing (bound {} is {})",
                        this->name(), i, bounds_[i]));
      }
    }
  }
  if (this->label_names().empty()) children_.emplace(LabelValues{}, Make());
}

template <class Metric>
std::unique_ptr<Metric> Family<Metric>::Make() const {
  if constexpr (std::is_same_v<Metric, Histogram>) {
    return std::make_unique<Histogram>(bounds_);
  } else {
    return std::make_unique<Metric>();
  }
}

template <class Metric>
Metric& Family<Metric>::Labels(std::initializer_list<std::string_view> values) {
  LabelValues v;
  v.reserve(values.size());
  for (const auto s : values)
    v.emplace_back(s);
  return Labels(v);
}

template <class Metric>
Metric& Family<Metric>::Labels(const LabelValues& values) {
  CheckArity(values.size());
  cronwheel::MutexLock lock(mu_);
  auto& slot = children_[values];
  if (!slot) slot = Make();
  return *slot;
}

template <class Metric>
void Family<Metric>::RenderSamples(std::string& out) const {
  cronwheel::MutexLock lock(mu_);
  for (const auto& [values, child] : children_) {
    if constexpr (std::is_same_v<Metric, Counter>) {
      AppendSample(out, name(), label_names(), values, fmt::format("{}", child->value()));
    } else if constexpr (std::is_same_v<Metric, Gauge>) {
      AppendSample(out, name(), label_names(), values, FormatValue(child->value()));
    } else {
      const auto snap = child->snapshot();
      const auto bucket = name() + "_bucket";
      for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        const auto le = fmt::format("le=\"{}\"", i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf");
        AppendSample(out, bucket, label_names(), values, fmt::format("{}", snap.cumulative[i]), le);
      }
      AppendSample(out, name() + "_sum", label_names(), values, FormatValue(snap.sum));
      AppendSample(out, name() + "_count", label_names(), values, fmt::format("{}", snap.count()));
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

template <class F>
F& Registry::Insert(std::unique_ptr<F> family) {
  cronwheel::MutexLock lock(mu_);
  for (const auto& f : families_) {
    if (f->name() == family->name()) {
      throw std::invalid_argument(fmt::format("metric {} is registered twice", family->name()));
    }
  }
  auto& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  return Insert(std::make_unique<CounterFamily>(std::move(name), std::move(help), Type::kCounter,
                                                std::move(label_names)));
}

GaugeFamily& Registry::AddGauge(std::string name, std::string help, std::vector<std::string> label_names) {
  return Insert(
      std::make_unique<GaugeFamily>(std::move(name), std::move(help), Type::kGauge, std::move(label_names)));
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names, std::vector<double> bounds) {
  return Insert(std::make_unique<HistogramFamily>(std::move(name), std::move(help), Type::kHistogram,
                                                  std::move(label_names), std::move(bounds)));
}

void Registry::AddGaugeCallback(std::string name, std::string help, std::vector<std::string> label_names,
                                std::function<std::vector<Sample>()> collect) {
  Insert(std::make_unique<CallbackFamily>(std::move(name), std::move(help), Type::kGauge,
                                          std::move(label_names), std::move(collect)));
}

void Registry::AddGaugeCallback(std::string name, std::string help, std::function<double()> read) {
  AddGaugeCallback(std::move(name), std::move(help), {}, Single(std::move(read)));
}

void Registry::AddCounterCallback(std::string name, std::string help, std::vector<std::string> label_names,
                                  std::function<std::vector<Sample>()> collect) {
  Insert(std::make_unique<CallbackFamily>(std::move(name), std::move(help), Type::kCounter,
                                          std::move(label_names), std::move(collect)));
}

void Registry::AddCounterCallback(std::string name, std::string help, std::function<double()> read) {
  AddCounterCallback(std::move(name), std::move(help), {}, Single(std::move(read)));
}

std::string Registry::Render() const {
  std::string out;
  cronwheel::MutexLock lock(mu_);
  out.reserve(families_.size() * 256);
  for (const auto& f : families_)
    f->Render(out);
  return out;
}

std::vector<std::string> Registry::Names() const {
  cronwheel::MutexLock lock(mu_);
  std::vector<std::string> out;
  out.reserve(families_.size());
  for (const auto& f : families_)
    out.push_back(f->name());
  return out;
}

std::string_view BuildVersion() {
  return CRONWHEEL_VERSION;
}

void AddBuildInfo(Registry& registry) {
  registry
      .AddGauge("cronwheel_build_info", "The version of this cronwheel build (value always 1).", {"version"})
      .Labels({BuildVersion()})
      .Set(1);
}

}  // namespace cronwheel::metrics
