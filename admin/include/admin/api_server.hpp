#pragma once
// The admin's HTTP server (cpp-httplib):
//  * the executor API of XXL-JOB (xxl-job-protocol.md §3): POST /api/registry, /api/registryRemove,
//    /api/callback, at the root and under /xxl-job-admin; answers with the {code,msg,content} envelope,
//    code 500 with a message saying what is wrong for bad input (which changes nothing); the access token
//    header is compared in constant time (the group's token, else the global one);
//  * the REST API under /api/v1 (snake_case JSON; enums spelled as XXL-JOB): health, groups, jobs
//    (CRUD, start, stop, trigger), logs, and with a ConsoleServices the console's routes and pages
//    (console.hpp). Errors: 400 {"error", "errors":[{"field","message"}]}, 404, 409;
//    never a 5xx for bad input; 503 when the database is unavailable.
//
// Thread-safety: the server runs its own pool of `threads`; Start/Stop from the owner thread.

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "admin/auth.hpp"
#include "admin/executor_api.hpp"
#include "admin/job_catalog.hpp"
#include "admin/job_repository.hpp"
#include "admin/scheduler.hpp"
#include "ringwheel/clock.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib
namespace cronwheel::net {
class ServerThread;
}

namespace cronwheel::admin {

struct ConsoleServices;  // console.hpp

class ApiServer final {
 public:
  struct Settings {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0 = any free port (tests)
    int threads = 32;
    std::string access_token;  // global executor token
    std::string node_id;
    std::size_t max_body_bytes = std::size_t{5} * 1024 * 1024;
  };
  struct Services {
    JobRepository& repository;
    Scheduler& scheduler;
    JobCatalog& catalog;
    RegistryService& registry;
    CallbackService& callbacks;
    Authenticator& authenticator;
    // Extra fields for GET /api/v1/health (scheduler and pool statistics).
    std::function<nlohmann::json()> health_details;
    // The web console's parts (console.hpp): auth, users, tokens, audit, dashboard, fire output, pages.
    // nullptr = the jobs API alone (tests); every change is then unaudited.
    ConsoleServices* console = nullptr;
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

 private:
  void RegisterExecutorApi(const std::string& prefix);

  Settings settings_;
  Services services_;
  ringwheel::Clock& clock_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::unique_ptr<net::ServerThread> listener_;
};

// Adds the /api/v1 routes (api_rest.cpp).
void RegisterRestRoutes(httplib::Server& server, ApiServer::Services& services,
                        const ApiServer::Settings& settings, ringwheel::Clock& clock);

}  // namespace cronwheel::admin
