#include "metrics.hpp"

#include "callback_sender.hpp"
#include "job_dispatcher.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {
namespace {

// Jobs run from milliseconds to hours.
std::vector<double> RunTimeBuckets() {
  auto b = metrics::LatencyBuckets();
  b.insert(b.end(), {300, 900, 3600});
  return b;
}

}  // namespace

ExecutorMetrics::ExecutorMetrics(metrics::Registry& r)
    : registry(r),
      runs(
          r.AddCounter("cronwheel_executor_runs_received_total",
                       "/run requests received, by result: accepted (queued or started), duplicate (a log id "
                       "already queued, running or run: not run again), refused (block strategy, unknown "
                       "handler, stopping), invalid (the body did not parse).",
                       {"result"})),
      runs_accepted(runs.Labels({"accepted"})),
      runs_duplicate(runs.Labels({"duplicate"})),
      runs_refused(runs.Labels({"refused"})),
      runs_invalid(runs.Labels({"invalid"})),
      unauthorized(r.AddCounter("cronwheel_executor_unauthorized_requests_total",
                                "Requests refused because their access token was wrong.")
                       .Labels({})),
      jobs_running(r.AddGauge("cronwheel_executor_jobs_running", "Job handlers running now.").Labels({})),
      job_run_duration(r.AddHistogram("cronwheel_executor_job_run_duration_seconds",
                                      "Run time of job handlers, by result (success = handle code 200).",
                                      {"result"}, RunTimeBuckets())),
      job_run_success(job_run_duration.Labels({"success"})),
      job_run_failure(job_run_duration.Labels({"failure"})),
      callbacks(r.AddCounter("cronwheel_executor_callbacks_total",
                             "Results sent to the admins (one per fire), by result: sent (an admin accepted "
                             "it) or failed (no admin did: spooled, retried later).",
                             {"result"})),
      callbacks_sent(callbacks.Labels({"sent"})),
      callbacks_failed(callbacks.Labels({"failed"})),
      registrations(r.AddCounter("cronwheel_executor_registrations_total",
                                 "Registry calls to the admins, by kind (registry = heartbeat, remove) and "
                                 "result (ok = an admin accepted it, failed).",
                                 {"kind", "result"})) {
  for (const char* kind : {"registry", "remove"}) {
    for (const char* result : {"ok", "failed"})
      registrations.Labels({kind, result});
  }
  metrics::AddBuildInfo(r);
}

void ExecutorMetrics::CountRun(bool parsed, int code, std::string_view msg) {
  if (!parsed) return runs_invalid.Inc();
  if (code == xxljob::kCodeSuccess) {
    // An accepted /run answers without a message; a finished log id delivered again answers 200 saying so.
    return (msg.empty() ? runs_accepted : runs_duplicate).Inc();
  }
  (msg.starts_with("repeat trigger job") ? runs_duplicate : runs_refused).Inc();
}

JobHandler ExecutorMetrics::Meter(JobHandler handler, ringwheel::Clock& clock) {
  return [this, handler = std::move(handler), &clock](JobContext& ctx) {
    jobs_running.Inc();
    const auto start = clock.SteadyNow();
    const auto done = [&](bool ok) {
      jobs_running.Dec();
      (ok ? job_run_success : job_run_failure).Observe(clock.SteadyNow() - start);
    };
    try {
      handler(ctx);
    } catch (...) {
      done(false);
      throw;
    }
    done(!ctx.result() || ctx.result()->code == xxljob::kCodeSuccess);
  };
}

void ExecutorMetrics::WatchCallbacks(CallbackSender& sender) {
  registry.AddGaugeCallback("cronwheel_executor_callbacks_pending",
                            "Results queued for the admins, not yet sent or spooled.",
                            [&sender] { return static_cast<double>(sender.pending()); });
  registry.AddCounterCallback("cronwheel_executor_callbacks_spooled_total",
                              "Results written to the spool directory because no admin accepted them.",
                              [&sender] { return static_cast<double>(sender.spooled()); });
  registry.AddGaugeCallback("cronwheel_executor_callback_spool_files",
                            "Spool files waiting to be sent again (each holds one batch of results).",
                            [&sender] { return static_cast<double>(sender.SpoolFiles().size()); });
}

void ExecutorMetrics::WatchDispatcher(const JobDispatcher& dispatcher) {
  registry.AddGaugeCallback("cronwheel_executor_job_threads",
                            "Job threads: a job's queue and handler, one per job id with work or idle.",
                            [&dispatcher] { return static_cast<double>(dispatcher.JobThreads()); });
  registry.AddGaugeCallback(
      "cronwheel_executor_workers",
      "Worker threads running the fires (job_workers, plus those added for blocked handlers).",
      [&dispatcher] { return static_cast<double>(dispatcher.Workers()); });
  registry.AddGaugeCallback("cronwheel_executor_draining",
                            "1 while the executor drains (refuses new fires, lets the running ones finish, "
                            "then stops), else 0.",
                            [&dispatcher] { return dispatcher.Draining() ? 1.0 : 0.0; });
}

AdminReply MeteredAdminClient::Call(std::string_view api, const nlohmann::json& body) {
  auto reply = inner_.Call(api, body);
  if (api == "callback") {
    const auto n = body.is_array() ? body.size() : 1;
    (reply.ok ? m_.callbacks_sent : m_.callbacks_failed).Inc(n);
  } else if (api == "registry" || api == "registryRemove") {
    m_.registrations.Labels({api == "registry" ? "registry" : "remove", reply.ok ? "ok" : "failed"}).Inc();
  }
  return reply;
}

}  // namespace cronwheel::executor
