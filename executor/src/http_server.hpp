#pragma once
// The executor's HTTP server (cronwheel::net::HttpServer, Boost.Beast): every request gets HTTP 200 and an
// envelope (docs/xxl-job-protocol.md §1).
//  * POST only; another method is 500 "invalid request, HttpMethod not support." (but GET /metrics, when
//    `metrics` is set: Prometheus metrics, cronwheel/metrics_endpoint.hpp);
//  * the token header is checked (xxljob::TokenMatches) when a token is configured, as soon as the head is
//    read: a wrong one is 500 "The access token is wrong." and no byte of its body is read;
//  * a body over xxljob::kMaxBodyBytes (5 MiB), whatever its framing, is 500 naming the limit;
//  * the path may carry `path_prefix` (the advertised address's base path) or not.
// Threads: `threads` threads read and write the connections and run the handlers, which never block long (a
// /run only queues its fire; /log reads a bounded slice of a file). A connection holds no thread while it
// waits. Idle keep-alive connections close after `keep_alive_timeout`.
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
    int threads = 2;
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
  Settings settings_;
  ExecutorService& service_;
  std::unique_ptr<net::HttpServer> server_;
};

}  // namespace cronwheel::executor
