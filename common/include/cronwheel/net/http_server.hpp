#pragma once
// cronwheel's HTTP/1.1 server: the admin's console, REST API and executor API, and the executor's API.
//
// Built on Boost.Asio and Boost.Beast (which the admin's client to executors already uses) rather than
// cpp-httplib 0.11, whose thread-per-connection reading let an unauthenticated peer cost what it liked
// (docs/security.md, "The HTTP servers"): a chunked body was not held to any limit (CVE-2025-46728), a
// peer sending its head one byte at a time held a worker thread for as long as it kept sending, and a
// body was read whole before anyone looked at the credentials. Here:
//  * connections are read and written by `io_threads` threads without blocking, so a slow peer holds a
//    socket and at most `header_max_bytes` of memory, never a thread;
//  * a request's head must arrive within `header_timeout` of its first byte and its body within
//    `body_timeout` (whole-phase deadlines, not per read), and an answer must be taken within
//    `write_timeout`; an idle kept connection closes after `keep_alive_timeout`;
//  * the head is limited in bytes (`header_max_bytes`, request line included) and in fields
//    (`header_max_fields`); the body by its route's limit (default `payload_max_bytes`) whatever its
//    framing: a Content-Length above it is refused before a byte of the body is read, and a chunked body
//    is counted as it arrives and refused when its decoded bytes pass it; a route that takes no body
//    refuses one;
//  * a route's `check_head` (on the I/O thread: cheap, a token comparison) and `admit` (on a handler
//    thread: it may look up a session) run once the head is read and before any body byte is: a caller
//    without credentials never gets the server to read, let alone parse, a body. `Expect: 100-continue` is
//    answered only once both passed;
//  * connections are kept by a ConnectionQuota (cronwheel/net/connection_quota.hpp): a connection is
//    unauthenticated until a request on it passes a route check that sets `req.authenticated`; at most
//    `max_unauthenticated_connections(_per_address)` of those are open, at most
//    `max_connections_per_address` authenticated ones from one peer address, `max_connections` in all. A
//    new connection over a cap makes room by closing an unauthenticated one (idle first, the flooding
//    address's first: the quota's header says which); only when every open connection is authenticated
//    is it answered 503 and closed at once;
//  * handlers run on `threads` threads (0: on the I/O threads, for handlers that never block).
// A request the server answers itself (no route, a method the path does not take, a body over the limit,
// a malformed or oversized head, a missing length where a body is needed) goes to the error handler with
// `res.status` and a plain English `res.body` saying what is wrong, which it may rewrite in its protocol's
// dialect; an answer to a request whose body was not read closes the connection.
//
// Thread-safety: routes and handlers are set before Start; Start and Stop from the owner thread. Handlers
// run concurrently on the handler threads and must be thread-safe. Lifetime: everything a handler uses
// must outlive Stop (the destructor stops).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cronwheel/net/http_message.hpp"

namespace cronwheel::net {

struct HttpServerSettings {
  int threads = 8;     // handler threads; 0 = handlers run on the I/O threads (they must never block)
  int io_threads = 1;  // threads reading and writing connections
  std::chrono::seconds keep_alive_timeout{2};        // an idle kept connection closes after this
  std::size_t keep_alive_max_count = 100;            // requests per connection before the server closes it
  std::chrono::milliseconds header_timeout{10'000};  // a request's head, from its first byte (or the accept)
  std::chrono::milliseconds body_timeout{30'000};    // its body, from the end of the head
  std::chrono::milliseconds write_timeout{30'000};   // an answer, from when its writing starts
  std::size_t payload_max_bytes = std::size_t{5} * 1024 * 1024;  // a route's body limit unless it sets one
  std::size_t header_max_bytes = std::size_t{16} * 1024;         // request line and header fields
  std::size_t header_max_fields = 100;
  std::size_t max_connections = 4096;                            // open connections in all (file descriptors)
  std::size_t max_connections_per_address = 256;                 // authenticated ones from one peer address
  std::size_t max_unauthenticated_connections = 1024;            // unauthenticated ones in all
  std::size_t max_unauthenticated_connections_per_address = 64;  // ... and from one peer address
  int backlog = 0;  // listen backlog; 0 = the kernel's limit (SOMAXCONN)
};

// What a server has counted since it started (monotonic, but `open`).
struct HttpServerStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;   // connections closed at accept: max_connections open, all authenticated
  std::uint64_t evicted = 0;   // unauthenticated connections closed to make room for a new one
  std::uint64_t requests = 0;  // requests whose head was read
  std::uint64_t timed_out = 0;
  std::uint64_t open = 0;
};

// A check of a request's head. true = go on; false = answer `res` (which it filled) instead.
using HttpCheck = std::function<bool(Request&, Response&)>;

// How a route takes its body and who may send one.
struct RouteOptions {
  // The largest body the route takes, whatever its framing; 0 = none at all (a request announcing one is
  // refused with 400). Default: the server's payload_max_bytes for POST, PUT, PATCH and DELETE, 0 for
  // the other methods.
  std::optional<std::size_t> body_max_bytes;
  // A POST or PUT sent with neither Content-Length nor Transfer-Encoding has an empty body (RFC 9112
  // §6.3). When the route needs one, such a request is refused with 411 instead.
  bool body_required = false;
  // Run in this order once the head is read, before any body byte is read. `check_head` runs on the I/O
  // thread and must not block; `admit` runs on a handler thread and may (a session look-up). What admit
  // stores in `req.admitted` reaches the handler. A check that found valid credentials sets
  // `req.authenticated`: the connection then counts as authenticated (ConnectionQuota).
  HttpCheck check_head;
  HttpCheck admit;
};

// Raises this process's soft limit of open files to its hard limit; returns the limit now in force (0 if
// it cannot be read). HttpServer::Start calls it. Thread-safe (a system call).
std::size_t RaiseOpenFileLimit();

class HttpServer final {
 public:
  using Handler = std::function<void(const Request&, Response&)>;
  using Check = HttpCheck;
  using ExceptionHandler = std::function<void(const Request&, Response&, std::exception_ptr)>;

  using RouteOptions = net::RouteOptions;

  explicit HttpServer(const HttpServerSettings& settings);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Routes by method and a regular expression that must match the whole decoded path (captures in
  // `req.matches`); the first route added that matches wins. HEAD is served by the GET routes, without
  // the body.
  void Route(std::string method, const std::string& pattern, Handler handler, RouteOptions options = {});
  void Get(const std::string& pattern, Handler h, RouteOptions o = {});
  void Post(const std::string& pattern, Handler h, RouteOptions o = {});
  void Put(const std::string& pattern, Handler h, RouteOptions o = {});
  void Delete(const std::string& pattern, Handler h, RouteOptions o = {});
  void Patch(const std::string& pattern, Handler h, RouteOptions o = {});

  // A check of every request's head before its route's (on the I/O thread; must not block).
  void SetHeadCheck(Check check);
  // Rewrites the server's own answers (see the file comment); without one the plain text is sent.
  void SetErrorHandler(Handler handler);
  // Answers a handler's exception; without one: 500 with the exception's text.
  void SetExceptionHandler(ExceptionHandler handler);
  // Runs on every answer to a request whose head was read, just before it is written (security headers).
  void SetPostRoutingHandler(Handler handler);

  // Binds host:port (port 0: any free port), listens and serves. Returns the bound port. Throws
  // std::runtime_error naming host:port when it cannot bind. Call once.
  int Start(const std::string& host, int port);
  // Stops accepting, closes idle connections, lets answers being made finish (at most `grace`), closes the
  // rest and joins every thread. Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

  [[nodiscard]] int port() const;
  [[nodiscard]] HttpServerStats Stats() const;
  [[nodiscard]] const HttpServerSettings& settings() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::net
