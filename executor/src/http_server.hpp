#pragma once
// The executor's HTTP server (cpp-httplib): every request gets HTTP 200 and an envelope
// (docs/xxl-job-protocol.md §1).
//  * POST only; another method is 500 "invalid request, HttpMethod not support." (but GET /metrics, when
//    `metrics` is set: Prometheus metrics, cronwheel/metrics_endpoint.hpp);
//  * a body over xxljob::kMaxBodyBytes (5 MiB) is 500 naming the limit;
//  * the token header is checked (xxljob::TokenMatches) when a token is configured: 500 "The access token
//  is wrong.";
//  * the path may carry `path_prefix` (the advertised address's base path) or not.
// Worker threads: `threads` (new_task_queue; CPPHTTPLIB_THREAD_POOL_COUNT does nothing with Debian's
// compiled httplib). TCP_NODELAY on; idle keep-alive connections close after `keep_alive_timeout`, which
// also bounds how long Stop() waits for them.
//
// Thread-safety: Start/Stop from one thread. Lifetime: the service must outlive the server.

#include <chrono>
#include <memory>
#include <string>

#include "cronwheel/metrics_endpoint.hpp"
#include "cronwheel/net/http_server.hpp"
#include "executor_service.hpp"

namespace cronwheel::executor {

class HttpServer final {
 public:
  struct Settings {
    std::string host = "127.0.0.1";
    int port = 9999;  // 0 = any free port
    int threads = 64;
    std::chrono::seconds keep_alive_timeout{2};
    std::string access_token;
    std::string path_prefix;  // "" or "/prefix"
    // GET /metrics (and <path_prefix>/metrics); nullptr = not served (every GET is refused as before).
    const MetricsEndpoint* metrics = nullptr;
  };
  HttpServer(Settings settings, ExecutorService& service);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; returns the bound port. Throws std::runtime_error when it cannot bind.
  int Start();
  void Stop();

 private:
  void Serve(const std::string& method, const std::string& path, const std::string& token,
             const std::string& body, std::string& response) const;

  Settings settings_;
  ExecutorService& service_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<net::ServerThread> listener_;
};

}  // namespace cronwheel::executor
