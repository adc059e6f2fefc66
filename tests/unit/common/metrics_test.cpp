// The Prometheus exposition (cronwheel/metrics.hpp), read back by real parsers: the official Python
// client's (prometheus_client.parser, through tests/tools/metrics_tool.py) and `promtool check metrics`
// (Debian's prometheus package), run as child processes on a file. Plus the allow list and the access rule
// of GET /metrics (cronwheel/metrics_endpoint.hpp).
#include "cronwheel/metrics.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/address_allow_list.hpp"
#include "cwtest/shell.hpp"

namespace {

using namespace cronwheel;
using nlohmann::json;

// Runs `command` through the shell with `text` in a temporary file named by {} in the command.
cwtest::ShellRun RunOn(const std::string& text, const std::string& command) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cronwheel-metrics-" + std::to_string(::getpid()) + "-" +
                     std::to_string(reinterpret_cast<std::uintptr_t>(&text)) + ".prom");
  std::ofstream(path) << text;
  std::string cmd = command;
  cmd.replace(cmd.find("{}"), 2, path.string());
  auto r = cwtest::RunShell(cmd + " 2>&1");
  std::filesystem::remove(path);
  return r;
}

// The families as the Python client parses them (metrics_tool.py parse also checks the histogram rules).
json ParseWithPython(const std::string& text) {
  const auto r =
      RunOn(text, "/usr/bin/python3 " CRONWHEEL_SOURCE_DIR "/tests/tools/metrics_tool.py parse {}");
  EXPECT_EQ(r.exit_code, 0) << r.out << "\n--- exposition:\n" << text;
  const auto start = r.out.find("{\"families\"");
  if (start == std::string::npos) {
    ADD_FAILURE() << "no JSON from the parser:\n" << r.out;
    return json::object();
  }
  return json::parse(r.out.substr(start))["families"];
}

// The value of the sample `name` with exactly `labels`; NaN when there is none.
double SampleValue(const json& families, const std::string& family, const std::string& name,
                   const json& labels) {
  if (!families.contains(family)) return std::nan("");
  for (const auto& s : families[family]["samples"]) {
    if (s["name"] == name && s["labels"] == labels) return s["value"].get<double>();
  }
  return std::nan("");
}

// A registry with every kind of family, label values that need escaping, and a few observations.
struct Sample {
  metrics::Registry registry;
  metrics::CounterFamily& fires = registry.AddCounter(
      "cronwheel_test_fires_total", "Fires by outcome.\nSecond line, a \\ backslash.", {"outcome", "group"});
  metrics::GaugeFamily& queue = registry.AddGauge("cronwheel_test_queue_depth", "Fires waiting.", {"pool"});
  metrics::HistogramFamily& lag =
      registry.AddHistogram("cronwheel_test_lag_seconds", "Lag.", {"pool"}, {0.001, 0.01, 0.1, 1});
  metrics::HistogramFamily& plain =
      registry.AddHistogram("cronwheel_test_plain_seconds", "No labels, no observations.", {}, {0.5, 5});
  int ring = 7;

  Sample() {
    fires.Labels({"sent", "billing"}).Inc(3);
    fires.Labels({"failed", "we\"ird\\name\nline"}).Inc();
    queue.Labels({"fast"}).Set(12);
    queue.Labels({"slow"}).Set(-1.5);
    auto& fast = lag.Labels({"fast"});
    for (double v : {0.0005, 0.001, 0.002, 0.05, 0.5, 2.0, 100.0})
      fast.Observe(v);
    lag.Labels({"slow"});  // exists, no observations
    registry.AddGaugeCallback("cronwheel_test_ring_size", "Fires in the ring.", [this] { return ring; });
    registry.AddGaugeCallback("cronwheel_test_executors_online", "Executors per group.", {"group"}, [] {
      return std::vector<metrics::Sample>{{{"b"}, 2}, {{"a"}, 1}};
    });
    registry.AddCounterCallback("cronwheel_test_scans_total", "Scans.", [] { return 42.0; });
    metrics::AddBuildInfo(registry);
  }
};

TEST(Metrics, PythonParserReadsEveryKindAndTheEscapes) {
  Sample s;
  const auto text = s.registry.Render();
  const auto f = ParseWithPython(text);
  ASSERT_TRUE(f.contains("cronwheel_test_fires")) << text;  // the parser strips _total off the family name
  EXPECT_EQ(f["cronwheel_test_fires"]["type"], "counter");
  EXPECT_EQ(f["cronwheel_test_fires"]["help"], "Fires by outcome.\nSecond line, a \\ backslash.");
  EXPECT_EQ(SampleValue(f, "cronwheel_test_fires", "cronwheel_test_fires_total",
                        {{"outcome", "sent"}, {"group", "billing"}}),
            3);
  // The escaped label value reads back as the original bytes.
  EXPECT_EQ(SampleValue(f, "cronwheel_test_fires", "cronwheel_test_fires_total",
                        {{"outcome", "failed"}, {"group", "we\"ird\\name\nline"}}),
            1);
  EXPECT_EQ(SampleValue(f, "cronwheel_test_queue_depth", "cronwheel_test_queue_depth", {{"pool", "slow"}}),
            -1.5);
  EXPECT_EQ(f["cronwheel_test_lag_seconds"]["type"], "histogram");
  // Cumulative: le=0.001 holds 0.0005 and 0.001 (le is "less than or equal").
  const auto bucket = [&](const char* le) {
    return SampleValue(f, "cronwheel_test_lag_seconds", "cronwheel_test_lag_seconds_bucket",
                       {{"pool", "fast"}, {"le", le}});
  };
  EXPECT_EQ(bucket("0.001"), 2);
  EXPECT_EQ(bucket("0.01"), 3);
  EXPECT_EQ(bucket("0.1"), 4);
  EXPECT_EQ(bucket("1"), 5);
  EXPECT_EQ(bucket("+Inf"), 7);
  EXPECT_EQ(
      SampleValue(f, "cronwheel_test_lag_seconds", "cronwheel_test_lag_seconds_count", {{"pool", "fast"}}),
      7);
  EXPECT_NEAR(
      SampleValue(f, "cronwheel_test_lag_seconds", "cronwheel_test_lag_seconds_sum", {{"pool", "fast"}}),
      102.5535, 1e-9);
  EXPECT_EQ(
      SampleValue(f, "cronwheel_test_lag_seconds", "cronwheel_test_lag_seconds_count", {{"pool", "slow"}}),
      0);
  EXPECT_EQ(
      SampleValue(f, "cronwheel_test_plain_seconds", "cronwheel_test_plain_seconds_bucket", {{"le", "+Inf"}}),
      0);
  EXPECT_EQ(SampleValue(f, "cronwheel_test_ring_size", "cronwheel_test_ring_size", json::object()), 7);
  EXPECT_EQ(
      SampleValue(f, "cronwheel_test_executors_online", "cronwheel_test_executors_online", {{"group", "a"}}),
      1);
  EXPECT_EQ(SampleValue(f, "cronwheel_test_scans", "cronwheel_test_scans_total", json::object()), 42);
  EXPECT_EQ(
      SampleValue(f, "cronwheel_build_info", "cronwheel_build_info", {{"version", metrics::BuildVersion()}}),
      1);
}

TEST(Metrics, PromtoolAcceptsTheExposition) {
  Sample s;
  const auto r = RunOn(s.registry.Render(), "promtool check metrics < {}");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "") << "promtool's lint found something";
}

TEST(Metrics, TheTextIsExactlyTheFormat) {
  metrics::Registry r;
  r.AddCounter("a_total", "Help with \\ and\nnewline.", {"k"}).Labels({"x\"y\\z\nw"}).Inc(2);
  r.AddHistogram("h_seconds", "H.", {}, {0.25, 1}).Labels({}).Observe(0.25);
  EXPECT_EQ(r.Render(),
            "# HELP a_total Help with \\\\ and\\nnewline.\n"
            "# TYPE a_total counter\n"
            "a_total{k=\"x\\\"y\\\\z\\nw\"} 2\n"
            "# HELP h_seconds H.\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"0.25\"} 1\n"
            "h_seconds_bucket{le=\"1\"} 1\n"
            "h_seconds_bucket{le=\"+Inf\"} 1\n"
            "h_seconds_sum 0.25\n"
            "h_seconds_count 1\n");
  EXPECT_EQ(metrics::FormatValue(1e-05), "1e-05");
  EXPECT_EQ(metrics::FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metrics::FormatValue(std::nan("")), "NaN");
}

// Counters read by the parser never go down between scrapes, and histograms stay cumulative, while
// threads update them: every update lands, none is lost (atomics, no lock).
TEST(Metrics, ConcurrentUpdatesAreAllCountedAndCountersOnlyGrow) {
  Sample s;
  auto& sent = s.fires.Labels({"sent", "billing"});
  auto& lag = s.lag.Labels({"fast"});
  constexpr int kThreads = 4;
  constexpr int kEach = 50'000;
  std::vector<std::string> scrapes;
  {
    std::vector<std::jthread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < kEach; ++i) {
          sent.Inc();
          lag.Observe(0.005);
        }
      });
    }
    for (int i = 0; i < 5; ++i)
      scrapes.push_back(s.registry.Render());
  }
  scrapes.push_back(s.registry.Render());
  EXPECT_EQ(sent.value(), 3U + kThreads * kEach);
  EXPECT_EQ(lag.snapshot().count(), 7U + kThreads * kEach);
  double previous = 0;
  for (const auto& text : scrapes) {
    const auto f = ParseWithPython(text);  // also checks every histogram's +Inf == _count, cumulative
    const double v = SampleValue(f, "cronwheel_test_fires", "cronwheel_test_fires_total",
                                 {{"outcome", "sent"}, {"group", "billing"}});
    EXPECT_GE(v, previous);
    previous = v;
  }
  EXPECT_EQ(previous, 3 + kThreads * kEach);
}

TEST(Metrics, MistakesAreRefusedWithTheirName) {
  metrics::Registry r;
  r.AddGauge("cronwheel_x", "X.");
  EXPECT_THROW(r.AddGauge("cronwheel_x", "again"), std::invalid_argument);
  EXPECT_THROW(r.AddCounter("cronwheel_fires", "no _total"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("9bad", "X."), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("bad-name", "X."), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("cronwheel_y", "X.", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("cronwheel_y", "X.", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("cronwheel_h", "H.", {"le"}, {1}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("cronwheel_h", "H.", {}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("cronwheel_h", "H.", {}, {1, std::numeric_limits<double>::infinity()}),
               std::invalid_argument);
  auto& g = r.AddGauge("cronwheel_z", "Z.", {"a", "b"});
  EXPECT_THROW(g.Labels({"only one"}), std::invalid_argument);
  try {
    r.AddCounter("cronwheel_fires", "no _total");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cronwheel_fires"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.Names(), (std::vector<std::string>{"cronwheel_x", "cronwheel_z"}));
}

TEST(Metrics, ACallbackThatThrowsLeavesOnlyItsOwnSeriesOut) {
  metrics::Registry r;
  r.AddGaugeCallback("cronwheel_broken", "B.", []() -> double { throw std::runtime_error("database down"); });
  r.AddGauge("cronwheel_fine", "F.").Labels({}).Set(1);
  const auto f = ParseWithPython(r.Render());
  EXPECT_EQ(SampleValue(f, "cronwheel_fine", "cronwheel_fine", json::object()), 1);
  EXPECT_TRUE(f["cronwheel_broken"]["samples"].empty());
}

TEST(Metrics, ExponentialBuckets) {
  EXPECT_EQ(metrics::ExponentialBuckets(1, 10, 4), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_THROW(metrics::ExponentialBuckets(0, 2, 3), std::invalid_argument);
}

// The checks scripts/test runs on the monitoring stack must be able to fail: a panel with the wrong data
// source, no grid position or a misspelt key, and a rule querying a series no exposition has.
TEST(MonitoringChecks, RefuseABrokenDashboardAndAnUnknownSeries) {
  const std::string tool = "/usr/bin/python3 " CRONWHEEL_SOURCE_DIR "/tests/tools/metrics_tool.py";
  const std::string schema = CRONWHEEL_SOURCE_DIR "/docker/grafana/dashboard.schema.json";
  const json panel = {{"id", 1},
                      {"type", "timeseries"},
                      {"title", "Fires"},
                      {"datasource", {{"type", "prometheus"}, {"uid", "cronwheel-prometheus"}}},
                      {"gridPos", {{"h", 8}, {"w", 12}, {"x", 0}, {"y", 0}}},
                      {"targets", {{{"refId", "A"}, {"expr", "rate(cronwheel_test_fires_total[1m])"}}}}};
  const json good = {{"uid", "t"},
                     {"title", "T"},
                     {"schemaVersion", 37},
                     {"time", {{"from", "now-1h"}, {"to", "now"}}},
                     {"panels", {panel}}};
  EXPECT_EQ(RunOn(good.dump(), tool + " dashboard --schema " + schema + " {}").exit_code, 0);
  auto other_source = good;
  other_source["panels"][0]["datasource"]["uid"] = "x";
  auto no_grid = good;
  no_grid["panels"][0].erase("gridPos");
  auto misspelt = good;
  misspelt["panels"][0]["targets"][0]["exprr"] = "x";
  for (const auto& [what, broken] :
       {std::pair{"data source", other_source}, std::pair{"grid", no_grid}, std::pair{"key", misspelt}}) {
    EXPECT_NE(RunOn(broken.dump(), fmt::format("{} dashboard --schema {} {{}}", tool, schema)).exit_code, 0)
        << what;
  }

  Sample s;
  const auto exposition = std::filesystem::temp_directory_path() / "cronwheel-metrics-exposition.prom";
  std::ofstream(exposition) << s.registry.Render();
  const auto rules = [](const std::string& expr) {
    return "groups:\n- name: t\n  rules:\n  - alert: A\n    expr: " + expr + "\n";
  };
  const auto queries = tool + " queries --exposition " + exposition.string() + " --rules {}";
  EXPECT_EQ(RunOn(rules("rate(cronwheel_test_fires_total[5m]) > 0"), queries).exit_code, 0);
  const auto missing = RunOn(rules("rate(cronwheel_test_fire_total[5m]) > 0"), queries);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.out.find("cronwheel_test_fire_total"), std::string::npos) << missing.out;
  std::filesystem::remove(exposition);
}

TEST(AddressAllowList, MatchesAddressesAndRanges) {
  const auto list =
      net::AddressAllowList::Parse({"127.0.0.1/8", " ::1 ", "10.1.0.0/16", "192.168.5.7", "fd00::/8"});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->Allows("127.0.0.1"));
  EXPECT_TRUE(list->Allows("127.200.3.4"));
  EXPECT_TRUE(list->Allows("::1"));
  EXPECT_TRUE(list->Allows("::ffff:127.0.0.1"));  // IPv4 seen through an IPv6 socket
  EXPECT_TRUE(list->Allows("10.1.255.1"));
  EXPECT_FALSE(list->Allows("10.2.0.1"));
  EXPECT_TRUE(list->Allows("192.168.5.7"));
  EXPECT_FALSE(list->Allows("192.168.5.8"));
  EXPECT_TRUE(list->Allows("fd12:3456::1"));
  EXPECT_FALSE(list->Allows("fe80::1"));
  EXPECT_FALSE(list->Allows("::2"));
  EXPECT_FALSE(list->Allows("localhost"));  // never resolved
  EXPECT_FALSE(list->Allows(""));

  const auto everyone = net::AddressAllowList::Parse({"0.0.0.0/0"});
  ASSERT_TRUE(everyone.ok()) << everyone.status();
  EXPECT_TRUE(everyone->Allows("8.8.8.8"));
  EXPECT_FALSE(everyone->Allows("2001:db8::1"));  // an IPv4 range does not cover IPv6

  const auto none = net::AddressAllowList::Parse({});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->Allows("127.0.0.1"));
}

TEST(AddressAllowList, BadEntriesAreNamed) {
  for (const char* bad : {"localhost", "10.0.0.0/33", "::1/129", "10.0.0.1/", "10.0.0/8", "1.2.3.4/x"}) {
    const auto list = net::AddressAllowList::Parse({"127.0.0.1", bad});
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    const std::string error(list.status().message());
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos) << error;
  }
}

bool Equal(std::string_view a, std::string_view b) {
  return a == b;
}

TEST(MetricsEndpoint, AddressOrBearerTokenAndNothingElse) {
  metrics::Registry r;
  MetricsEndpoint loopback_only(r, {}, Equal);
  EXPECT_EQ(loopback_only.Check("127.0.0.1", "127.0.0.1:8080", ""),
            MetricsEndpoint::Decision::kAllowedByAddress);
  EXPECT_EQ(loopback_only.Check("::1", "127.0.0.1:8080", ""), MetricsEndpoint::Decision::kAllowedByAddress);
  EXPECT_EQ(loopback_only.Check("10.0.0.5", "127.0.0.1:8080", ""), MetricsEndpoint::Decision::kForbidden);
  // No metrics_token configured: no token opens it, not even an empty one.
  EXPECT_EQ(loopback_only.Check("10.0.0.5", "127.0.0.1:8080", "Bearer "),
            MetricsEndpoint::Decision::kForbidden);
  EXPECT_EQ(loopback_only.Check("10.0.0.5", "127.0.0.1:8080", "Bearer anything"),
            MetricsEndpoint::Decision::kForbidden);

  MetricsEndpoint with_token(r, {.allow = {"172.16.0.0/12"}, .token = "s3cret"}, Equal);
  EXPECT_EQ(with_token.Check("172.20.0.3", "127.0.0.1:8080", ""),
            MetricsEndpoint::Decision::kAllowedByAddress);
  EXPECT_EQ(with_token.Check("127.0.0.1", "127.0.0.1:8080", ""),
            MetricsEndpoint::Decision::kForbidden);  // not in this list
  EXPECT_EQ(with_token.Check("10.0.0.5", "127.0.0.1:8080", "Bearer s3cret"),
            MetricsEndpoint::Decision::kAllowedByToken);
  EXPECT_EQ(with_token.Check("10.0.0.5", "127.0.0.1:8080", "bearer  s3cret "),
            MetricsEndpoint::Decision::kAllowedByToken);
  EXPECT_EQ(with_token.Check("10.0.0.5", "127.0.0.1:8080", "Bearer s3cre"),
            MetricsEndpoint::Decision::kForbidden);
  EXPECT_EQ(with_token.Check("10.0.0.5", "127.0.0.1:8080", "Basic czNjcmV0"),
            MetricsEndpoint::Decision::kForbidden);
  EXPECT_EQ(with_token.Check("10.0.0.5", "127.0.0.1:8080", "s3cret"), MetricsEndpoint::Decision::kForbidden);

  EXPECT_THROW(MetricsEndpoint(r, {.allow = {"not-an-ip"}}, Equal), std::invalid_argument);
}

TEST(MetricsEndpoint, ServesTheTextOrAClear403) {
  metrics::Registry r;
  r.AddGauge("cronwheel_up", "Up.").Labels({}).Set(1);
  bool extra = false;
  MetricsEndpoint e(r, {.allow = {"127.0.0.1"}, .token = "t"}, Equal,
                    [&](const net::Request&) { return extra; });
  net::Request req;
  req.remote_addr = "10.9.8.7";
  net::Response res;
  e.Serve(req, res);
  EXPECT_EQ(res.status, 403);
  EXPECT_NE(res.body.find("metrics_allow"), std::string::npos) << res.body;
  EXPECT_NE(res.body.find("metrics_token"), std::string::npos) << res.body;
  EXPECT_NE(res.body.find("10.9.8.7"), std::string::npos) << res.body;
  EXPECT_EQ(res.body.find("127.0.0.1"), std::string::npos) << "the allow list is not revealed: " << res.body;

  extra = true;  // e.g. a signed-in console administrator
  net::Response ok;
  e.Serve(req, ok);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.get_header_value("Content-Type"), metrics::kContentType);
  EXPECT_NE(ok.body.find("cronwheel_up 1\n"), std::string::npos) << ok.body;
}

// A GET /metrics from `remote` with the given Host header ("" = none) and Authorization header; the status.
int ServeWithHost(const MetricsEndpoint& e, const std::string& remote, const std::string& host,
                  const std::string& authorization = "") {
  net::Request req;
  req.remote_addr = remote;
  if (!host.empty()) req.headers.emplace("Host", host);
  if (!authorization.empty()) req.headers.emplace("Authorization", authorization);
  net::Response res;
  e.Serve(req, res);
  return res.status;
}

// Issue 21: DNS rebinding. A page on http://rebound.attacker.test:8080/ whose name the attacker points at
// 127.0.0.1 makes the victim's browser a loopback peer; the Host header still names the attacker's domain.
// Access by address needs a Host that no one can rebind: an IP literal or localhost.
TEST(MetricsEndpoint, AccessByAddressNeedsAHostThatCannotBeRebound) {
  metrics::Registry r;
  const MetricsEndpoint e(r, {.token = "t"}, Equal);
  for (const char* host : {"127.0.0.1:8080", "127.0.0.1", "[::1]:9999", "localhost:8080", "LOCALHOST",
                           "localhost", "10.0.0.5:8080"}) {
    EXPECT_EQ(ServeWithHost(e, "127.0.0.1", host), 200) << host;
  }
  for (const char* host : {"rebound.attacker.test:8080", "rebound.attacker.test", "localhost.attacker.test",
                           "127.0.0.1.attacker.test", "attacker.test:127", ""}) {
    EXPECT_EQ(ServeWithHost(e, "127.0.0.1", host), 403) << host;
  }
  // The token is no browser's: it opens /metrics whatever the Host.
  EXPECT_EQ(ServeWithHost(e, "127.0.0.1", "rebound.attacker.test:8080", "Bearer t"), 200);
  // The 403 says what to do.
  net::Request req;
  req.remote_addr = "127.0.0.1";
  req.headers.emplace("Host", "rebound.attacker.test:8080");
  net::Response res;
  e.Serve(req, res);
  EXPECT_NE(res.body.find("Host"), std::string::npos) << res.body;
  EXPECT_NE(res.body.find("metrics_hosts"), std::string::npos) << res.body;
}

TEST(MetricsEndpoint, NamesInMetricsHostsAreAcceptedToo) {
  metrics::Registry r;
  const MetricsEndpoint e(r, {.allow = {"172.28.0.9"}, .hosts = {"admin-1", " Metrics.Internal "}}, Equal);
  EXPECT_EQ(ServeWithHost(e, "172.28.0.9", "admin-1:8080"), 200);  // Prometheus scraping by service name
  EXPECT_EQ(ServeWithHost(e, "172.28.0.9", "ADMIN-1"), 200);
  EXPECT_EQ(ServeWithHost(e, "172.28.0.9", "metrics.internal:9999"), 200);
  EXPECT_EQ(ServeWithHost(e, "172.28.0.9", "admin-2:8080"), 403);
  EXPECT_EQ(ServeWithHost(e, "172.28.0.9", "admin-1.attacker.test:8080"), 403);
  EXPECT_EQ(ServeWithHost(e, "10.0.0.1", "admin-1:8080"), 403);  // the address still decides first
  EXPECT_EQ(e.Check("172.28.0.9", "evil.test", ""), MetricsEndpoint::Decision::kForbiddenHost);
  EXPECT_EQ(e.Check("10.0.0.1", "evil.test", ""), MetricsEndpoint::Decision::kForbidden);

  EXPECT_TRUE(MetricsEndpoint::CheckHostNames({"admin-1", "a.b.example", ""}).ok());
  for (const char* bad : {"admin-1:8080", "http://admin-1", "a b", "-x", "*.example.com"}) {
    const absl::Status status = MetricsEndpoint::CheckHostNames({"ok", bad});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    const std::string why(status.message());
    EXPECT_NE(why.find(std::string("'") + bad + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("metrics_hosts"), std::string::npos) << why;
    EXPECT_THROW(MetricsEndpoint(r, {.hosts = {bad}}, Equal), std::invalid_argument) << bad;
  }
}

}  // namespace
