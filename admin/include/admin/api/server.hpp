#pragma once
// The admin's HTTP server (cronwheel/net/http_server.hpp: Boost.Beast, bounded per peer; docs/security.md):
//  * the executor API of XXL-JOB (docs/xxl-job-protocol.md §3): POST /api/registry, /api/registryRemove,
//    /api/callback, at the root and under /xxl-job-admin; answers with the {code,msg,content} envelope,
//    code 500 with a message saying what is wrong for bad input (which changes nothing); the access token
//    header is compared in constant time (the group's token, else the global one);
//  * GET /metrics: Prometheus metrics (app/metrics.hpp), for the addresses in metrics_allow, the bearer
//    token metrics_token or a signed-in console administrator; 403 with a reason for anyone else;
//  * the REST API under /api/v1 (snake_case JSON; enums spelled as XXL-JOB; described by
//    web/openapi.json): health, groups, jobs, logs, and with ConsoleServices the console's routes (auth,
//    users, tokens, audit, dashboard, previews, a fire's output, kill, clearing fires) and pages.
//    Errors: the status of the Error's kind with {"error", "code", "errors":[{"field","message","code",
//    "params"}]} (model/result.hpp); never a 5xx for bad input; 503 when the database is unavailable.
//
// Every /api/v1 route but health, login and the OpenAPI document authenticates its caller and checks the
// caller's rights on the resource before touching it: groups are managed by admins; jobs and logs are
// visible and changeable by admins and by users permitted on their group; a resource the caller may not see
// answers 404, as if it did not exist. Every state-changing route records an audit entry
// (store/audit_log.hpp).
//
// Credentials are checked before a body is read: the executor API's token (the global one or a group's)
// as soon as the head is read, a REST caller's session or API token in the route's admission step; the
// login route takes at most 64 KiB from anyone.
//
// Thread-safety: the server runs its own pool of `threads`; Start/Stop from the owner thread. Lifetime:
// every referenced service must outlive the server.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/auth/accounts.hpp"
#include "admin/auth/auth_service.hpp"
#include "admin/auth/authenticator.hpp"
#include "admin/catalog/alert_channel_service.hpp"
#include "admin/catalog/calendar_service.hpp"
#include "admin/catalog/group_service.hpp"
#include "admin/catalog/job_service.hpp"
#include "admin/catalog/workflow_service.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/alarm.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/results/registry_service.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/audit_log.hpp"
#include "admin/store/console_repository.hpp"
#include "admin/store/log_repository.hpp"
#include "cronwheel/metrics.hpp"
#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/http_server.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class SsoService;

// What the executor API (/api/registry, /api/registryRemove, /api/callback) counts: handles of the admin's
// metrics, which the wiring takes from app/metrics.hpp (docs/operations.md lists them), so that api/ needs
// only common's metric types. Thread-safety: the handles are lock-free atomics.
struct ExecutorApiMetrics {
  metrics::CounterFamily& registrations;  // {kind: registry | remove, result: ok | refused | invalid}
  metrics::Counter& callbacks_recorded;
  metrics::Counter& callbacks_ignored;
  metrics::Counter& callbacks_refused;
  metrics::Counter& callbacks_invalid;
  metrics::Histogram& fire_start_lag;  // seconds from the instant to the handler's start, as reported
  metrics::Counter& outputs_pushed_archived;
  metrics::Counter& outputs_pushed_truncated;
};

// One REST route as the OpenAPI document names it: method and path template ("/api/v1/jobs/{id}").
struct RouteInfo {
  std::string method;
  std::string path;
  std::string scope;  // the API token scope it needs ("read" ... "admin"); "" for a public route
};

// The web console's parts: accounts, audit, dashboard, fire output, pages.
struct ConsoleServices {
  AuthService& auth;
  Accounts& accounts;
  AuditLog& audit;
  ConsoleRepository& store;
  ExecutorClient& executors;  // for a fire's output (/log) and kill (/kill)
  std::string web_dir;        // serve the pages from this folder instead of the embedded copy ("" = embedded)
  // Single sign-on and the sign-in policy (with an empty SsoConfig: local passwords only).
  SsoService& sso;
  // Filled while the server registers its routes: every /api/v1 route (for the OpenAPI completeness test).
  std::vector<RouteInfo> routes{};
};

class ApiServer final {
 public:
  struct Settings {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0 = any free port (tests)
    int threads = 32;
    std::string access_token;  // global executor token
    std::string node_id;
    std::size_t max_body_bytes = std::size_t{5} * 1024 * 1024;
    // Open connections in all; authenticated ones from one peer address; unauthenticated ones in all and
    // from one peer address (net::HttpServerSettings, net::ConnectionQuota).
    std::size_t max_connections = 4096;
    std::size_t max_connections_per_address = 256;
    std::size_t max_unauthenticated_connections = 1024;
    std::size_t max_unauthenticated_connections_per_address = 64;
    // URL prefixes a job's alarm_webhook may start with (the operator's alarm_webhook_allow).
    std::vector<std::string> webhook_allow;
  };
  struct Services {
    GroupService& groups;
    JobService& jobs;
    LogRepository& logs;
    Scheduler& scheduler;
    JobCatalog& catalog;
    RegistryService& registry;
    CallbackService& callbacks;
    Authenticator& authenticator;
    // Extra fields for GET /api/v1/health (scheduler and pool statistics).
    std::function<nlohmann::json()> health_details;
    // nullptr = the jobs API alone (tests); every change is then unaudited.
    ConsoleServices* console = nullptr;
    // GET /metrics (Prometheus); nullptr = not served. Also counts the executor API's calls.
    const MetricsEndpoint* metrics = nullptr;
    const ExecutorApiMetrics* executor_api_metrics = nullptr;
    // /api/v1/alert-channels; nullptr = not served. `alarms` sends a channel's test alarm.
    AlertChannelService* alert_channels = nullptr;
    AlarmSender* alarms = nullptr;
    // /api/v1/calendars, and the calendars of the schedule preview; nullptr = not served.
    CalendarService* calendars = nullptr;
    // /api/v1/workflows and /api/v1/workflow-runs; nullptr = not served.
    WorkflowService* workflows = nullptr;
    // Sends fires that were claimed and sent already (the trigger pools): the replacements of fires sent
    // ahead of their instant when their job changes (RouteContext::ReplaceSentAhead). nullptr = none.
    std::function<void(std::vector<Fire>)> send_again;
    // Writes the trigger results not written yet, those kept back for callbacks included
    // (TriggerResultWriter::Flush): called before a read of where fires went. Empty = nothing to write.
    std::function<void()> write_trigger_results;
  };

  ApiServer(Settings settings, Services services, ringwheel::Clock& clock);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds and starts serving. Returns false (logged) when the address cannot be bound.
  bool Start();
  void Stop();
  // The bound port (after Start).
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] net::HttpServerStats Stats() const;

 private:
  struct Impl;
  Settings settings_;
  Services services_;
  ringwheel::Clock& clock_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace cronwheel::admin
