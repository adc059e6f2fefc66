#pragma once
// cronwheel's blocking HTTP/1.1 client, on Boost.Asio and Boost.Beast like the servers
// (cronwheel/net/http_server.hpp) and the admin's event-driven client to executors
// (admin/dispatch/executor_client.hpp). It carries the calls one process makes to one origin, one at a time:
// the executor's registry heartbeats and callbacks to each admin, the command-line client's REST calls,
// and the executor's built-in httpJobHandler. (The admin's own outbound calls that must refuse addresses on
// its deny list after name resolution, webhooks, alert e-mail and OIDC, go through libcurl with the guard
// of admin/results/guarded_curl.hpp; SMTP is why libcurl is there at all: docs/architecture.md.)
//
// What it does:
//  * one connection per client, kept alive across calls (RFC 9112 §9.3) unless the server or the settings
//    say otherwise; TCP_NODELAY;
//  * https with the server's certificate verified against the system's trust store (plus `ca_file` when
//    given) and the host name checked (RFC 6125), SNI sent;
//  * whole-phase deadlines: connecting (resolution included) within `connect_timeout`, writing the request
//    within `timeout`, reading the whole answer within `timeout`;
//  * a request that fails on a kept connection before any byte of the answer arrived (the server closed
//    the connection as the request went out, its idle timeout ending just then) is sent once more on a new
//    connection, as RFC 9112 §9.3.1 allows for a connection closed before a response; a failure on a fresh
//    connection is the server's. A retried request may reach the server twice when its answer was lost,
//    so callers send only requests whose repetition is harmless (heartbeats, callbacks the admin
//    de-duplicates, idempotent REST calls) or accept that, as httpJobHandler's users do;
//  * an answer's body is held to `body_max_bytes`;
//  * no redirect is followed (a 3xx is returned as it is).
//
// Errors (Send): InvalidArgument for a request that cannot be sent as given (a method that is not a token,
// a target or header with a control character: nothing is sent); Unavailable when the server cannot be
// reached or the connection fails ("cannot connect to http://10.0.0.5:8080: Connection refused");
// DeadlineExceeded when a phase passes its deadline; ResourceExhausted for an answer over body_max_bytes.
// Each message names the origin, the method and target, and what failed. An HTTP status of 4xx or 5xx is an
// answer, not an error.
//
// Thread-safety: a client belongs to one thread at a time (callers that share one hold a mutex around
// Send). Cost: one connection, one read buffer and one Asio context (no thread) per client.

#include <absl/status/statusor.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cronwheel/net/http_address.hpp"

namespace cronwheel::net {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One request. `target` is the path and query exactly as sent (already percent-encoded), e.g.
// "/api/v1/jobs?group_id=3"; the client's base path is not added (HttpAddress::Path builds one).
struct ClientRequest {
  std::string method = "GET";  // GET, HEAD, POST, PUT, PATCH, DELETE (any RFC 9110 token)
  std::string target = "/";
  HeaderList headers;        // after the client's default headers; Host and Content-Length are set here
  std::string body;          // sent with Content-Length when not empty (or when the method is POST/PUT/PATCH)
  std::string content_type;  // the body's Content-Type, when not empty
};

struct ClientResponse {
  int status = 0;  // 100..599
  HeaderList headers;
  std::string body;  // empty for HEAD

  // The first value of header `name` (case-insensitive), or "" when there is none.
  [[nodiscard]] std::string Header(std::string_view name) const;
};

struct HttpClientSettings {
  std::chrono::milliseconds connect_timeout{3000};  // name resolution, TCP and TLS handshakes together
  std::chrono::milliseconds timeout{3000};          // writing a request; then reading its whole answer
  std::size_t body_max_bytes = std::size_t{64} * 1024 * 1024;
  HeaderList default_headers;  // sent with every request (an access token, an Accept)
  std::string user_agent = "cronwheel";
  bool keep_alive = true;  // false: a connection per request (Connection: close)
  std::string ca_file;     // a PEM file of certificates trusted for https besides the system's; "" = none
};

// What a client has done since it was made (for tests and logs).
struct HttpClientStats {
  std::size_t connections = 0;  // connections opened
  std::size_t retries = 0;      // requests sent again on a new connection after a kept one failed
};

class HttpClient {
 public:
  // `origin` is where requests go (its scheme, host and port; the base path is the caller's to use).
  // Throws std::invalid_argument naming ca_file when it is set and cannot be read.
  HttpClient(HttpAddress origin, HttpClientSettings settings);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` and reads its answer (see the file comment for what is retried and the errors).
  absl::StatusOr<ClientResponse> Send(const ClientRequest& request);

  // Closes the kept connection, if any; the next Send opens a new one.
  void Close();

  [[nodiscard]] const HttpAddress& origin() const;
  [[nodiscard]] HttpClientStats Stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::net
