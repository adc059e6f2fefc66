#pragma once
// Every Prometheus metric of the executor, defined in this one place (docs/operations.md lists them): the
// handles updated by the service (/run results), the handler wrapper (jobs running, run time), the admin
// client wrapper (registrations, callbacks delivered), and the gauges read at scrape time from the callback
// sender and the job dispatcher. Served at GET /metrics (cronwheel/metrics_endpoint.hpp).
//
// Thread-safety: the handles are lock-free atomics (cronwheel/metrics.hpp). Lifetime: owned by the
// Executor; the watched parts outlive every scrape (the HTTP server stops first).

#include <cstdint>
#include <string_view>

#include "admin_client.hpp"
#include "cronwheel/metrics.hpp"
#include "executor/job_context.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

class CallbackSender;
class JobDispatcher;

struct ExecutorMetrics {
  explicit ExecutorMetrics(metrics::Registry& registry);

  metrics::Registry& registry;

  // /run (and /trigger) received, by result.
  metrics::CounterFamily& runs;
  metrics::Counter& runs_accepted;   // queued or started
  metrics::Counter& runs_duplicate;  // a log id already queued, running or run (answered without running)
  metrics::Counter& runs_refused;    // block strategy, unknown handler, stopping, ...
  metrics::Counter& runs_invalid;    // the body did not parse
  // Requests refused for a wrong access token (any path).
  metrics::Counter& unauthorized;

  metrics::Gauge& jobs_running;  // handlers running now
  metrics::HistogramFamily& job_run_duration;
  metrics::Histogram& job_run_success;
  metrics::Histogram& job_run_failure;

  metrics::CounterFamily& callbacks;  // {result: sent | failed}: per callback, per delivery attempt
  metrics::Counter& callbacks_sent;
  metrics::Counter& callbacks_failed;
  metrics::CounterFamily& registrations;  // {kind: registry | remove, result: ok | failed}

  // Classifies the answer to one /run (`parsed` false: the body did not parse).
  void CountRun(bool parsed, int code, std::string_view msg);
  // Wraps a handler so that it counts as running while it runs and its run time is observed.
  JobHandler Meter(JobHandler handler, ringwheel::Clock& clock);
  void WatchCallbacks(CallbackSender& sender);
  void WatchDispatcher(const JobDispatcher& dispatcher);
};

// The admin client, counting registrations and callback deliveries.
class MeteredAdminClient final : public AdminClient {
 public:
  MeteredAdminClient(AdminClient& inner, ExecutorMetrics& m) : inner_(inner), m_(m) {}
  AdminReply Call(std::string_view api, const nlohmann::json& body) override;
  [[nodiscard]] bool HasAdmins() const override { return inner_.HasAdmins(); }

 private:
  AdminClient& inner_;
  ExecutorMetrics& m_;
};

}  // namespace cronwheel::executor
