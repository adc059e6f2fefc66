#include "admin/app/metrics.hpp"

#include "admin/api/server.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/dispatch/trigger_pools.hpp"
#include "admin/results/output_puller.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/pg_pool.hpp"
#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {
namespace {

using metrics::HistogramFamily;
using metrics::Registry;

AdminMetrics::Method MakeMethod(metrics::CounterFamily& requests, HistogramFamily& durations,
                                std::string_view method) {
  return {requests.Labels({method, "success"}), requests.Labels({method, "failure"}),
          durations.Labels({method})};
}

}  // namespace

AdminMetrics::AdminMetrics(Registry& r)
    : registry(r),
      fires(r.AddCounter("cronwheel_fires_total",
                         "Fires that ended on this admin, by outcome: sent (the executor accepted /run), "
                         "failed (trigger failed: no executor, refused, no answer, trigger pool full), "
                         "skipped_misfire (DO_NOTHING misfire, never sent), skipped_concurrency (its job "
                         "was at its concurrency limit, never sent), retried (a failed fire given another "
                         "attempt).",
                         {"outcome"})),
      fires_sent(fires.Labels({"sent"})),
      fires_failed(fires.Labels({"failed"})),
      fires_skipped_misfire(fires.Labels({"skipped_misfire"})),
      fires_skipped_concurrency(fires.Labels({"skipped_concurrency"})),
      fires_retried(fires.Labels({"retried"})),
      fire_lag(r.AddHistogram("cronwheel_fire_lag_seconds",
                              "From a CRON fire's scheduled instant to the executor's answer to /run.", {},
                              metrics::LatencyBuckets())
                   .Labels({})),
      fire_start_lag(r.AddHistogram("cronwheel_fire_start_lag_seconds",
                                    "From a CRON fire's scheduled instant to its handler's start on the "
                                    "executor, as the executor's callback reports it (cronwheel-executor's "
                                    "handleStartTime; XXL-JOB executors do not report it). On the executor's "
                                    "clock: a start before the instant counts as 0.",
                                    {}, metrics::LatencyBuckets())
                         .Labels({})),
      scans(
          r.AddCounter("cronwheel_scans_total",
                       "Scan transactions, by result: ok, full_batch (read pre_read_count jobs: more may be "
                       "due, scanned again at once), error (rolled back).",
                       {"result"})),
      scans_ok(scans.Labels({"ok"})),
      scans_full_batch(scans.Labels({"full_batch"})),
      scans_error(scans.Labels({"error"})),
      scan_duration(r.AddHistogram("cronwheel_scan_duration_seconds",
                                   "Duration of one scan transaction (lock partitions, read, plan, write, "
                                   "commit).",
                                   {}, metrics::LatencyBuckets())
                        .Labels({})),
      scan_jobs_read(r.AddHistogram("cronwheel_scan_jobs_read", "Jobs read by one scan.", {},
                                    {0, 1, 10, 100, 1000, 3000, 10000, 30000, 100000})
                         .Labels({})),
      scan_lock_wait(r.AddHistogram("cronwheel_scan_lock_wait_seconds",
                                    "Time one scan spent locking its schedule partitions.", {},
                                    metrics::LatencyBuckets())
                         .Labels({})),
      scan_last_success(r.AddGauge("cronwheel_scan_last_success_timestamp_seconds",
                                   "When the last scan of this admin committed (Unix time); 0 = none yet.")
                            .Labels({})),
      partitions_held(r.AddGauge("cronwheel_schedule_partitions_held",
                                 "Schedule partitions the last scan of this admin locked and scanned.")
                          .Labels({})),
      partitions_total(r.AddGauge("cronwheel_schedule_partitions",
                                  "Schedule partitions of the cluster, as of this admin's last scan.")
                           .Labels({})),
      executor_requests(r.AddCounter("cronwheel_executor_requests_total",
                                     "Requests to executors, by method (run, beat, idle_beat, kill, log) and "
                                     "result (success = code 200; failure = refused, error answer or no "
                                     "answer).",
                                     {"method", "result"})),
      executor_request_duration(r.AddHistogram("cronwheel_executor_request_duration_seconds",
                                               "Latency of requests to executors, by method.", {"method"},
                                               metrics::LatencyBuckets())),
      run(MakeMethod(executor_requests, executor_request_duration, "run")),
      beat(MakeMethod(executor_requests, executor_request_duration, "beat")),
      idle_beat(MakeMethod(executor_requests, executor_request_duration, "idle_beat")),
      kill(MakeMethod(executor_requests, executor_request_duration, "kill")),
      log(MakeMethod(executor_requests, executor_request_duration, "log")),
      callbacks(
          r.AddCounter("cronwheel_callbacks_received_total",
                       "Results reported by executors (one per fire in a callback batch), by result: "
                       "recorded, ignored (a repeat or an unknown fire), refused (wrong token), invalid "
                       "(the body did not parse).",
                       {"result"})),
      callbacks_recorded(callbacks.Labels({"recorded"})),
      callbacks_ignored(callbacks.Labels({"ignored"})),
      callbacks_refused(callbacks.Labels({"refused"})),
      callbacks_invalid(callbacks.Labels({"invalid"})),
      registrations(
          r.AddCounter("cronwheel_registrations_received_total",
                       "Executor registry calls received, by kind (registry = heartbeat, remove) and "
                       "result (ok, refused = wrong token, invalid).",
                       {"kind", "result"})),
      alarms(r.AddCounter("cronwheel_alarms_total",
                          "Alarms for failed fires, by result: sent (every channel of the job succeeded) or "
                          "failed.",
                          {"result"})),
      alarms_sent(alarms.Labels({"sent"})),
      alarms_failed(alarms.Labels({"failed"})),
      outputs_pushed(r.AddCounter("cronwheel_fire_outputs_pushed_total",
                                  "Fires' job logs that came with their callbacks (cronwheel-executor), "
                                  "archived by result: archived (whole) or truncated (its middle left out).",
                                  {"result"})),
      outputs_pushed_archived(outputs_pushed.Labels({"archived"})),
      outputs_pushed_truncated(outputs_pushed.Labels({"truncated"})),
      output_archive_bytes(r.AddGauge("cronwheel_fire_output_archive_bytes",
                                      "Bytes on disk of the cluster's fire output archive (table fire_output "
                                      "with its TOAST and indexes; read every minute).")
                               .Labels({})),
      output_archive_rows(r.AddGauge("cronwheel_fire_output_archive_rows",
                                     "Fires in the cluster's fire output archive, from PostgreSQL's "
                                     "statistics (read every minute).")
                              .Labels({})),
      output_pulls_queued(r.AddGauge("cronwheel_fire_output_pulls_queued",
                                     "Fires whose job log waits to be read from their executor's /log (read "
                                     "every minute).")
                              .Labels({})),
      jobs_enabled(
          r.AddGauge("cronwheel_jobs_enabled", "Enabled jobs in the cluster (read every 15 s).").Labels({})),
      workflow_runs(
          r.AddGauge("cronwheel_workflow_runs",
                     "Workflow runs of the cluster started in the last 24 hours, by state: RUNNING, "
                     "SUCCESS, FAILED, KILLED, SKIPPED (read every 15 s).",
                     {"state"})) {
  for (const char* state : {"RUNNING", "SUCCESS", "FAILED", "KILLED", "SKIPPED"})
    workflow_runs.Labels({state});
  for (const char* kind : {"registry", "remove"}) {
    for (const char* result : {"ok", "refused", "invalid"})
      registrations.Labels({kind, result});
  }
  metrics::AddBuildInfo(r);
}

void AdminMetrics::WatchOutputPuller(const OutputPuller& puller) {
  registry.AddCounterCallback(
      "cronwheel_fire_outputs_pulled_total",
      "Fires' job logs the admin read from their executor's /log (executors that do not send them with the "
      "callback), by result: archived (whole), truncated (its middle left out), retried (a pull failed and "
      "is "
      "tried again), failed (given up: the fire's archive says why).",
      {"result"}, [&puller] {
        const auto s = puller.stats();
        return std::vector<metrics::Sample>{{{"archived"}, static_cast<double>(s.archived)},
                                            {{"truncated"}, static_cast<double>(s.truncated)},
                                            {{"retried"}, static_cast<double>(s.retried)},
                                            {{"failed"}, static_cast<double>(s.failed)}};
      });
}

void AdminMetrics::WatchScheduler(const Scheduler& scheduler) {
  registry.AddGaugeCallback("cronwheel_ring_size",
                            "Fires waiting in this admin's time ring for their second.",
                            [&scheduler] { return static_cast<double>(scheduler.ring_size()); });
  registry.AddGaugeCallback("cronwheel_unclaimed_fires",
                            "Due fires this admin could not claim yet (database unavailable); retried each "
                            "second.",
                            [&scheduler] { return static_cast<double>(scheduler.stats().unclaimed); });
  registry.AddCounterCallback(
      "cronwheel_fire_commit_doubts_total",
      "Commits whose outcome the scheduler resolved after the database connection was lost during COMMIT "
      "(a failover), by kind: claim (a claim retried by its stamp), resolved (the admin's own unclaimed "
      "fires "
      "read back and submitted), adopted (fires so read back).",
      {"kind"}, [&scheduler] {
        const auto s = scheduler.stats();
        return std::vector<metrics::Sample>{{{"claim"}, static_cast<double>(s.claims_in_doubt)},
                                            {{"resolved"}, static_cast<double>(s.doubts_resolved)},
                                            {{"adopted"}, static_cast<double>(s.fires_adopted)}};
      });
  registry.AddCounterCallback(
      "cronwheel_fires_withdrawn_total",
      "Fires this admin had claimed and did not send because a stop, change or delete of their job (or an "
      "edit of its calendar) committed before their instant (withdrawn); and the checks for them that "
      "failed, whose fires were sent as claimed (check_failed).",
      {"kind"}, [&scheduler] {
        const auto s = scheduler.stats();
        return std::vector<metrics::Sample>{
            {{"withdrawn"}, static_cast<double>(s.fires_withdrawn)},
            {{"check_failed"}, static_cast<double>(s.withdrawal_check_errors)}};
      });
}

void AdminMetrics::WatchTriggerPools(const TriggerPools& pools) {
  registry.AddGaugeCallback("cronwheel_trigger_pool_queue_depth",
                            "Fires waiting for a trigger thread, by pool.", {"pool"}, [&pools] {
                              const auto s = pools.stats();
                              return std::vector<metrics::Sample>{
                                  {{"fast"}, static_cast<double>(s.queued_fast)},
                                  {{"slow"}, static_cast<double>(s.queued_slow)}};
                            });
  registry.AddCounterCallback(
      "cronwheel_trigger_pool_rejections_total",
      "Fires failed because their trigger pool's queue was full, by pool.", {"pool"}, [&pools] {
        const auto s = pools.stats();
        return std::vector<metrics::Sample>{{{"fast"}, static_cast<double>(s.rejected_fast)},
                                            {{"slow"}, static_cast<double>(s.rejected_slow)}};
      });
  registry.AddCounterCallback(
      "cronwheel_trigger_pool_triggers_total", "Fires the trigger threads have sent (any outcome), by pool.",
      {"pool"}, [&pools] {
        const auto s = pools.stats();
        return std::vector<metrics::Sample>{{{"fast"}, static_cast<double>(s.sent_fast)},
                                            {{"slow"}, static_cast<double>(s.sent_slow)}};
      });
}

void AdminMetrics::WatchPgPool(const PgPool& pool) {
  registry.AddGaugeCallback(
      "cronwheel_pg_pool_connections", "PostgreSQL connections of this admin, by state: in_use, idle, max.",
      {"state"}, [&pool] {
        const auto s = pool.stats();
        return std::vector<metrics::Sample>{{{"in_use"}, static_cast<double>(s.open - s.idle)},
                                            {{"idle"}, static_cast<double>(s.idle)},
                                            {{"max"}, static_cast<double>(s.size)}};
      });
  registry.AddCounterCallback("cronwheel_pg_pool_acquires_total", "Connections taken from the pool.",
                              [&pool] { return static_cast<double>(pool.stats().acquired); });
  registry.AddCounterCallback("cronwheel_pg_pool_waits_total",
                              "Connections taken from the pool that had to wait for one to be given back.",
                              [&pool] { return static_cast<double>(pool.stats().waits); });
  registry.AddCounterCallback("cronwheel_pg_pool_wait_seconds_total",
                              "Time spent waiting for a free PostgreSQL connection.",
                              [&pool] { return static_cast<double>(pool.stats().wait_ns) / 1e9; });
  registry.AddCounterCallback(
      "cronwheel_pg_pool_errors_total",
      "PostgreSQL pool failures, by kind: connect (a connection could not be opened), "
      "exhausted (no connection free within the acquire timeout), discarded (a "
      "connection closed after a failure), stale (an idle connection its server had closed, found before it "
      "was lent: a failover), commit_in_doubt (the connection was lost during COMMIT).",
      {"kind"}, [&pool] {
        const auto s = pool.stats();
        return std::vector<metrics::Sample>{{{"connect"}, static_cast<double>(s.connect_errors)},
                                            {{"exhausted"}, static_cast<double>(s.exhausted)},
                                            {{"discarded"}, static_cast<double>(s.discarded)},
                                            {{"stale"}, static_cast<double>(s.stale)},
                                            {{"commit_in_doubt"}, static_cast<double>(s.commits_in_doubt)}};
      });
}

void AdminMetrics::WatchExecutorConnections(const HttpExecutorClient& client) {
  registry.AddGaugeCallback("cronwheel_executor_connections_open",
                            "HTTP connections from this admin to executors (idle, in use or connecting).",
                            [&client] { return static_cast<double>(client.TotalStats().open); });
  registry.AddGaugeCallback(
      "cronwheel_executor_requests_waiting",
      "Requests to executors waiting for a free connection (each executor has its own queue, bounded by "
      "executor_connections; a request waits at most executor_timeout_ms).",
      [&client] { return static_cast<double>(client.TotalStats().waiting); });
  registry.AddCounterCallback(
      "cronwheel_executor_connections_total",
      "What the pools of connections to executors did, by event: opened (a new connection), reused (a "
      "request sent on a pooled one), found_closed (a pooled one the executor had closed), retired (closed "
      "by the admin, idle past the executor's keep-alive), yielded (closed to free an executor thread for a "
      "new connection's first request), slowed (a sign the executor did not keep up with new connections: a "
      "refused or timed-out connect, a SYN sent again, a new connection lost before its first answer).",
      {"event"}, [&client] {
        const auto s = client.TotalStats();
        return std::vector<metrics::Sample>{{{"opened"}, static_cast<double>(s.opened)},
                                            {{"reused"}, static_cast<double>(s.reused)},
                                            {{"found_closed"}, static_cast<double>(s.found_closed)},
                                            {{"retired"}, static_cast<double>(s.retired)},
                                            {{"yielded"}, static_cast<double>(s.yielded)},
                                            {{"slowed"}, static_cast<double>(s.evidence)}};
      });
  registry.AddCounterCallback(
      "cronwheel_executor_run_batches_total",
      "Fires sent ahead of their instant go to executors many per request (POST /runs): by what was counted, "
      "requests (the batches sent) and runs (the fires in them).",
      {"count"}, [&client] {
        const auto s = client.BatchStats();
        return std::vector<metrics::Sample>{{{"requests"}, static_cast<double>(s.batches)},
                                            {{"runs"}, static_cast<double>(s.runs)}};
      });
}

void AdminMetrics::WatchExecutors(JobCatalog& catalog) {
  registry.AddGaugeCallback(
      "cronwheel_executors_online",
      "Executors registered and alive, by app name (the executor group's AppName), as this admin sees the "
      "registry; an app seen before with none online is 0.",
      {"app_name"}, [this, &catalog] {
        const auto live = catalog.Registry();
        cronwheel::MutexLock lock(seen_mu_);
        for (const auto& [app, addresses] : live)
          seen_apps_.insert(app);
        std::vector<metrics::Sample> out;
        out.reserve(seen_apps_.size());
        for (const auto& app : seen_apps_) {
          const auto it = live.find(app);
          out.push_back({{app}, it == live.end() ? 0.0 : static_cast<double>(it->second.size())});
        }
        return out;
      });
}

ExecutorApiMetrics AdminMetrics::ForExecutorApi() {
  return {.registrations = registrations,
          .callbacks_recorded = callbacks_recorded,
          .callbacks_ignored = callbacks_ignored,
          .callbacks_refused = callbacks_refused,
          .callbacks_invalid = callbacks_invalid,
          .fire_start_lag = fire_start_lag,
          .outputs_pushed_archived = outputs_pushed_archived,
          .outputs_pushed_truncated = outputs_pushed_truncated};
}

}  // namespace cronwheel::admin
