// GET /metrics end to end: a real admin (real PostgreSQL) and a real cronwheel-executor run three jobs every
// second. Both expositions parse with the Python client's parser and promtool (child processes); the
// counters move as fires happen, and once the jobs stop the admin's fires-sent counter equals exactly the
// /run the executor received (its own counter, and its --run-trace-file, written when it stops) and the rows
// with trigger code 200. The window is bounded by conditions (a count reached, then nothing in flight), never
// by a fixed sleep.
// The admin allows /metrics only from an address that is not loopback, so a request from 127.0.0.1 without
// the metrics token gets 403; with the token it gets 200. The executor keeps the default (loopback).
//
// The expositions are written to <build>/tests/e2e/metrics/{admin,executor}.prom, and every cronwheel_*
// series queried by docker/prometheus/rules.yml and docker/grafana/dashboards/*.json must be in them
// (scripts/test checks the same files again next to promtool's checks of the monitoring stack).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cluster.hpp"
#include "cwtest/shell.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

constexpr const char* kMetricsToken = "e2e-metrics-token-5b1f0c";

// Runs `command` with its standard error in the output.
cwtest::ShellRun Shell(const std::string& command) {
  return cwtest::RunShell(command + " 2>&1");
}

// A scrape, parsed by tests/tools/metrics_tool.py (the official Python client's parser plus the histogram
// and counter rules); the text is kept for dumping.
struct Scrape {
  std::string text;
  json families;

  // The value of the sample `name` with exactly `labels`; -1 when there is none.
  [[nodiscard]] double Value(const std::string& name, const json& labels = json::object()) const {
    for (const auto& [family, f] : families.items()) {
      for (const auto& s : f["samples"]) {
        if (s["name"] == name && s["labels"] == labels) return s["value"].get<double>();
      }
    }
    return -1;
  }
};

Scrape Parse(const std::string& text, const fs::path& dir, const std::string& name) {
  const auto path = dir / (name + ".prom");
  std::ofstream(path) << text;
  const auto r = Shell(fmt::format("/usr/bin/python3 {}/tests/tools/metrics_tool.py parse {}",
                                   CRONWHEEL_SOURCE_DIR, path.string()));
  EXPECT_EQ(r.exit_code, 0) << name << ":\n" << r.out;
  Scrape s{text, json::object()};
  const auto start = r.out.find("{\"families\"");
  if (start != std::string::npos) s.families = json::parse(r.out.substr(start))["families"];
  return s;
}

Scrape Get(int port, const fs::path& dir, const std::string& name, const std::string& token = "") {
  HttpCaller http(port);
  const auto r =
      http.Send("GET", "/metrics", token.empty() ? httplib::Headers{} : cwtest::BearerHeaders(token), "", "");
  EXPECT_EQ(r.status, 200) << name << ": " << r.error << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  return Parse(r.body, dir, name);
}

std::int64_t Lines(const fs::path& path) {
  std::ifstream in(path);
  std::int64_t n = 0;
  for (std::string line; std::getline(in, line);)
    n += line.empty() ? 0 : 1;
  return n;
}

TEST(MetricsE2E, BothProcessesExposeMetricsThatParseAndCountEveryFire) {
  const auto trace = fs::temp_directory_path() / fmt::format("cw-metrics-trace-{}.txt", ::getpid());
  fs::remove(trace);
  Cluster c({.admins = 1,
             .executors = 1,
             // 192.0.2.1 (TEST-NET-1) is no address of this machine: loopback needs the token.
             .admin_args = {"--metrics-allow", "192.0.2.1", "--metrics-token", kMetricsToken},
             .executor_args = {"--run-trace-file", trace.string()}});
  const auto dir = c.dir();
  const int admin = c.admin_port(0);
  const int executor = c.executor_port(0);

  // Access: 403 with a reason without the token or with a wrong one; 200 with it.
  {
    HttpCaller http(admin);
    const auto none = http.Send("GET", "/metrics", {}, "", "");
    EXPECT_EQ(none.status, 403) << none.body;
    EXPECT_THAT(none.body, HasSubstr("metrics_allow"));
    EXPECT_THAT(none.body, HasSubstr("metrics_token"));
    EXPECT_EQ(http.Send("GET", "/metrics", cwtest::BearerHeaders("wrong"), "", "").status, 403);
    EXPECT_EQ(http.Send("GET", "/metrics", cwtest::BearerHeaders(kMetricsToken), "", "").status, 200);
    // Another method on it: 405 (the path takes only GET).
    EXPECT_EQ(http.Send("POST", "/metrics", {}, "{}").status, 405);
  }

  const int group = c.AddGroup();
  std::vector<int> jobs;
  jobs.reserve(3);
  for (int i = 0; i < 3; ++i)
    jobs.push_back(c.AddJob(group, "* * * * * ?", "FIRST", "DO_NOTHING", "noopJobHandler", Cluster::NowMs()));

  // The counters move: wait (bounded) until a few fires went through the whole path.
  const auto sent = [&] {
    return Get(admin, dir, "admin", kMetricsToken).Value("cronwheel_fires_total", {{"outcome", "sent"}});
  };
  ASSERT_TRUE(cwtest::Eventually([&] { return sent() >= 9; }, 30s, 250ms))
      << c.admin(0).LogTail() << c.executor(0).LogTail();
  const auto early = Get(admin, dir, "admin", kMetricsToken);
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        return Get(admin, dir, "admin", kMetricsToken)
                   .Value("cronwheel_fires_total", {{"outcome", "sent"}}) >=
               early.Value("cronwheel_fires_total", {{"outcome", "sent"}}) + 6;
      },
      30s, 250ms));

  // Stop the jobs, then wait until nothing is in flight: the ring and the pools are empty, the admin's
  // count has stopped moving, and the executor has answered everything it was sent.
  c.Exec("UPDATE job SET enabled = false");
  Scrape a;
  Scrape e;
  double previous = -1;
  const bool quiet = cwtest::Eventually(
      [&] {
        a = Get(admin, dir, "admin", kMetricsToken);
        e = Get(executor, dir, "executor");
        const double now = a.Value("cronwheel_fires_total", {{"outcome", "sent"}});
        const bool stable = now == previous && a.Value("cronwheel_ring_size") == 0 &&
                            a.Value("cronwheel_trigger_pool_queue_depth", {{"pool", "fast"}}) == 0 &&
                            a.Value("cronwheel_trigger_pool_queue_depth", {{"pool", "slow"}}) == 0 &&
                            a.Value("cronwheel_fires_total", {{"outcome", "sent"}}) ==
                                e.Value("cronwheel_executor_runs_received_total", {{"result", "accepted"}}) &&
                            e.Value("cronwheel_executor_jobs_running") == 0 &&
                            e.Value("cronwheel_executor_callbacks_pending") == 0 &&
                            e.Value("cronwheel_executor_callbacks_total", {{"result", "sent"}}) == now;
        previous = now;
        return stable;
      },
      30s, 1000ms);
  ASSERT_TRUE(quiet) << "admin:\n" << a.text << "\nexecutor:\n" << e.text;

  const double admin_sent = a.Value("cronwheel_fires_total", {{"outcome", "sent"}});
  const double executor_accepted =
      e.Value("cronwheel_executor_runs_received_total", {{"result", "accepted"}});
  EXPECT_GE(admin_sent, 15);
  EXPECT_EQ(admin_sent, executor_accepted);
  EXPECT_EQ(admin_sent,
            static_cast<double>(c.Scalar("SELECT count(*) FROM job_log WHERE trigger_code = 200")));
  EXPECT_EQ(a.Value("cronwheel_fires_total", {{"outcome", "failed"}}), 0);
  EXPECT_EQ(e.Value("cronwheel_executor_runs_received_total", {{"result", "duplicate"}}), 0);

  // The rest of the path moved too.
  EXPECT_EQ(a.Value("cronwheel_executor_requests_total", {{"method", "run"}, {"result", "success"}}),
            admin_sent);
  EXPECT_EQ(a.Value("cronwheel_executor_request_duration_seconds_count", {{"method", "run"}}), admin_sent);
  // Every request to the executor went on a new or a pooled connection (beats and idle beats too).
  const double opened = a.Value("cronwheel_executor_connections_total", {{"event", "opened"}});
  EXPECT_GE(opened, 1);
  EXPECT_GE(opened + a.Value("cronwheel_executor_connections_total", {{"event", "reused"}}), admin_sent);
  EXPECT_LE(a.Value("cronwheel_executor_connections_open"), opened);
  EXPECT_EQ(a.Value("cronwheel_executor_requests_waiting"), 0) << "nothing left waiting for a connection";
  EXPECT_GT(a.Value("cronwheel_fire_lag_seconds_count"), 0);
  EXPECT_GT(a.Value("cronwheel_fire_lag_seconds_bucket", {{"le", "60"}}), 0);
  // cronwheel-executor reports when each fire started (handleStartTime): every CRON fire's row has it, and
  // the start-lag histogram counted each.
  const auto started = c.Scalar("SELECT count(*) FROM job_log WHERE trigger_type = 'CRON' AND start_ms > 0");
  EXPECT_EQ(started,
            c.Scalar("SELECT count(*) FROM job_log WHERE trigger_type = 'CRON' AND handle_code <> 0"));
  EXPECT_GT(started, 0);
  EXPECT_EQ(a.Value("cronwheel_fire_start_lag_seconds_count"), static_cast<double>(started));
  EXPECT_GT(a.Value("cronwheel_scans_total", {{"result", "ok"}}), 0);
  EXPECT_GT(a.Value("cronwheel_scan_duration_seconds_count"), 0);
  EXPECT_GT(a.Value("cronwheel_scan_last_success_timestamp_seconds"), 1.7e9);
  EXPECT_EQ(a.Value("cronwheel_schedule_partitions"), 60);
  EXPECT_EQ(a.Value("cronwheel_schedule_partitions_held"), 60);  // the only admin holds every partition
  EXPECT_EQ(a.Value("cronwheel_executors_online", {{"app_name", "e2e-app"}}), 1);
  EXPECT_GT(a.Value("cronwheel_registrations_received_total", {{"kind", "registry"}, {"result", "ok"}}), 0);
  EXPECT_GT(a.Value("cronwheel_callbacks_received_total", {{"result", "recorded"}}), 0);
  EXPECT_GT(a.Value("cronwheel_pg_pool_acquires_total"), 0);
  EXPECT_EQ(a.Value("cronwheel_build_info", {{"version", "0.1.0"}}), 1);
  // The fire output archive: every fire's log came with its callback and was kept whole; nothing was pulled.
  EXPECT_EQ(a.Value("cronwheel_fire_outputs_pushed_total", {{"result", "archived"}}), admin_sent);
  EXPECT_EQ(a.Value("cronwheel_fire_outputs_pushed_total", {{"result", "truncated"}}), 0);
  EXPECT_EQ(a.Value("cronwheel_fire_outputs_pulled_total", {{"result", "failed"}}), 0);
  EXPECT_GE(a.Value("cronwheel_fire_output_archive_bytes"), 0) << "read every minute: there, at least";
  EXPECT_GE(a.Value("cronwheel_fire_output_archive_rows"), 0);
  EXPECT_EQ(a.Value("cronwheel_fire_output_pulls_queued"), 0);
  EXPECT_EQ(e.Value("cronwheel_executor_job_run_duration_seconds_count", {{"result", "success"}}),
            admin_sent);
  EXPECT_EQ(e.Value("cronwheel_executor_callbacks_total", {{"result", "sent"}}), admin_sent);
  EXPECT_GT(e.Value("cronwheel_executor_registrations_total", {{"kind", "registry"}, {"result", "ok"}}), 0);
  EXPECT_EQ(e.Value("cronwheel_build_info", {{"version", "0.1.0"}}), 1);

  // promtool agrees with the Python parser.
  for (const auto* name : {"admin", "executor"}) {
    const auto r =
        Shell(fmt::format("promtool check metrics < {}", (dir / (std::string(name) + ".prom")).string()));
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out;
    EXPECT_EQ(r.out, "") << name << ": promtool's lint found something";
  }

  // Dump both expositions and check the monitoring stack's queries against them.
  const fs::path dump = CRONWHEEL_METRICS_DUMP_DIR;
  fs::create_directories(dump);
  std::ofstream(dump / "admin.prom") << a.text;
  std::ofstream(dump / "executor.prom") << e.text;
  const auto q = Shell(
      fmt::format("/usr/bin/python3 {0}/tests/tools/metrics_tool.py queries --exposition {1}/admin.prom "
                  "{1}/executor.prom "
                  "--rules {0}/docker/prometheus/rules.yml --dashboard {0}/docker/grafana/dashboards/*.json",
                  CRONWHEEL_SOURCE_DIR, dump.string()));
  EXPECT_EQ(q.exit_code, 0) << q.out;
  std::printf("%s", q.out.c_str());

  // The executor's trace file is written when it stops: every /run it received, one line each.
  EXPECT_EQ(c.executor(0).Stop(std::chrono::seconds(10)), 0);
  const auto traced = Lines(trace);
  std::printf(
      "fires sent by the admin %.0f, /run accepted by the executor %.0f, /run in its trace file %ld\n",
      admin_sent, executor_accepted, static_cast<long>(traced));
  EXPECT_EQ(admin_sent, static_cast<double>(traced));
  // Each line: logId jobId received_ms started_ms, started no earlier than received (same clock).
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::int64_t log_id = 0;
    int job_id = 0;
    std::int64_t received_ms = 0;
    std::int64_t started_ms = 0;
    ASSERT_TRUE(fields >> log_id >> job_id >> received_ms >> started_ms) << line;
    EXPECT_GE(started_ms, received_ms) << line;
  }
  fs::remove(trace);
}

}  // namespace
