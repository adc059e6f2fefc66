#pragma once
// Every Prometheus metric of the admin, defined in this one place (docs/operations.md lists them with their
// meaning): the handles the fire path updates, and the gauges read at scrape time from the parts that
// already keep the number (scheduler, trigger pools, PostgreSQL pool, executor registry).
//
// The fire path is measured from the outside where it can be: AdminApp wraps the seams (the trigger
// recorder, the executor client, the scheduler store, the alarm sender) in the decorators of
// app/metered.hpp, which update these handles, so the stages themselves carry no metrics code.
//
// Thread-safety: the handles are lock-free atomics (cronwheel/metrics.hpp); Watch* register callbacks that
// the scrape runs on an HTTP thread. Lifetime: the registry and every watched part outlive the scrapes
// (AdminApp stops the HTTP server first).

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cronwheel/metrics.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

class Scheduler;
class TriggerPools;
class PgPool;
class JobCatalog;
class HttpExecutorClient;
class OutputPuller;
struct ExecutorApiMetrics;

struct AdminMetrics {
  explicit AdminMetrics(metrics::Registry& registry);

  // The handles the executor API counts with (api/server.hpp).
  [[nodiscard]] ExecutorApiMetrics ForExecutorApi();

  metrics::Registry& registry;

  // cronwheel_fires_total{outcome}: every fire's end on this admin.
  metrics::CounterFamily& fires;
  metrics::Counter& fires_sent;                 // the executor accepted /run (code 200)
  metrics::Counter& fires_failed;               // trigger failed: no executor, refused, no answer, pool full
  metrics::Counter& fires_skipped_misfire;      // a DO_NOTHING misfire: recorded, never sent
  metrics::Counter& fires_skipped_concurrency;  // its job was at its concurrency limit: recorded, never sent
  metrics::Counter& fires_retried;              // a failed fire that gets another attempt (retry_count)
  // Scheduled instant -> /run answered, CRON fires only.
  metrics::Histogram& fire_lag;
  // Scheduled instant -> the executor started the handler, CRON fires whose executor reports its start
  // (cronwheel-executor's handleStartTime); a start before the instant (clocks apart) counts as 0.
  metrics::Histogram& fire_start_lag;

  // Scans (schedule/scheduler.hpp): one transaction per scan.
  metrics::CounterFamily& scans;  // {result: ok | full_batch | error}
  metrics::Counter& scans_ok;
  metrics::Counter& scans_full_batch;
  metrics::Counter& scans_error;
  metrics::Histogram& scan_duration;
  metrics::Histogram& scan_jobs_read;
  metrics::Histogram& scan_lock_wait;
  metrics::Gauge& scan_last_success;  // epoch seconds of the last scan that committed
  metrics::Gauge& partitions_held;
  metrics::Gauge& partitions_total;

  // Requests to executors (dispatch/executor_client.hpp), by method (run, beat, idle_beat, kill, log).
  struct Method {
    metrics::Counter& success;
    metrics::Counter& failure;
    metrics::Histogram& duration;
  };
  metrics::CounterFamily& executor_requests;
  metrics::HistogramFamily& executor_request_duration;
  Method run, beat, idle_beat, kill, log;

  // What executors send (api/executor_routes.cpp).
  metrics::CounterFamily& callbacks;  // {result: recorded | ignored | refused | invalid}
  metrics::Counter& callbacks_recorded;
  metrics::Counter& callbacks_ignored;
  metrics::Counter& callbacks_refused;
  metrics::Counter& callbacks_invalid;
  metrics::CounterFamily& registrations;  // {kind: registry | remove, result: ok | refused | invalid}

  // Alarms (results/alarm.hpp): one per failed fire whose job has a channel.
  metrics::CounterFamily& alarms;  // {result: sent | failed}
  metrics::Counter& alarms_sent;
  metrics::Counter& alarms_failed;

  // The fire output archive (docs/operations.md, "The fire output archive"): job logs that came with
  // callbacks (api/executor_routes.cpp), {result: archived | truncated}.
  metrics::CounterFamily& outputs_pushed;
  metrics::Counter& outputs_pushed_archived;
  metrics::Counter& outputs_pushed_truncated;
  // The archive's size in the cluster (read by AdminApp every minute): bytes on disk, rows, pulls queued.
  metrics::Gauge& output_archive_bytes;
  metrics::Gauge& output_archive_rows;
  metrics::Gauge& output_pulls_queued;

  // Enabled jobs in the cluster (read by AdminApp every few seconds).
  metrics::Gauge& jobs_enabled;
  // Workflow runs of the cluster started in the last 24 hours, by state (read with jobs_enabled).
  metrics::GaugeFamily& workflow_runs;

  // Gauges and counters read from the parts at scrape time.
  void WatchScheduler(const Scheduler& scheduler);
  void WatchTriggerPools(const TriggerPools& pools);
  void WatchPgPool(const PgPool& pool);
  void WatchExecutorConnections(const HttpExecutorClient& client);
  // Executors online per app name, from the catalog's live registry. An app seen once keeps being
  // reported (0 when none is online), so "dropped to 0" is a value an alert can see, not a missing series.
  void WatchExecutors(JobCatalog& catalog);
  // What the output puller did: cronwheel_fire_outputs_pulled_total{result}.
  void WatchOutputPuller(const OutputPuller& puller);

 private:
  cronwheel::Mutex seen_mu_;
  std::set<std::string> seen_apps_ ABSL_GUARDED_BY(seen_mu_);
};

}  // namespace cronwheel::admin
