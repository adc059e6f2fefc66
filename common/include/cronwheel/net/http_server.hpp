#pragma once
// Starting a cpp-httplib server the same way everywhere (the admin's API, the executor's API, the tests'
// stubs): configure it, bind, raise the listen backlog, serve on a thread of its own, and return once the
// accept loop runs.
//
// Two traps of Debian's compiled cpp-httplib 0.11 are handled here once:
//  * it listens with a fixed backlog of 5: a burst of connects (an admin sending one second's fires opens
//    many connections at once) overflowed the accept queue, handshakes stalled and requests failed with a
//    read timeout. Linux lets listen() be called again on a listening socket to change its backlog;
//    RaiseListenBacklog does that;
//  * it has no wait_until_ready(): a stop() before the accept loop runs is lost, so Start waits until
//    is_running() (the socket already listens: microseconds).
//
// Thread-safety: a ServerThread is started and stopped by its owner thread.

#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace cronwheel::net {

struct HttpServerSettings {
  int threads = 8;  // worker threads (new_task_queue; CPPHTTPLIB_THREAD_POOL_COUNT does nothing here)
  std::chrono::seconds keep_alive_timeout{2};  // idle keep-alive connections close after this
  std::size_t keep_alive_max_count = 100;      // requests per connection before the server closes it
  std::chrono::seconds read_timeout{10};       // a request that does not arrive in time is dropped
  std::size_t payload_max_bytes = std::size_t{5} * 1024 * 1024;
};

// Applies `settings` and TCP_NODELAY (without it each keep-alive request waits 40-85 ms for a delayed
// ACK) to a server that is not listening yet.
void Configure(httplib::Server& server, const HttpServerSettings& settings);

// Finds this process's listening TCP socket bound to `port` (via /proc/self/fd) and calls
// listen(fd, backlog) on it. Returns false if there is none or listen() fails. O(open descriptors).
bool RaiseListenBacklog(int port, int backlog);

// The listen backlog cronwheel's servers use: the kernel's limit (SOMAXCONN, net.core.somaxconn caps it).
int DefaultListenBacklog();

class ServerThread final {
 public:
  // Binds `server` to host:port (port 0 = any free port), raises the backlog to `backlog` (0 = leave
  // cpp-httplib's 5, for tests that need a small queue), and serves on a new thread. Returns once the
  // accept loop runs. Throws std::runtime_error naming host:port when it cannot bind.
  ServerThread(httplib::Server& server, const std::string& host, int port, int backlog);
  ~ServerThread();
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  // Stops the server (waiting for open keep-alive connections, at most their keep-alive timeout) and
  // joins the thread. Idempotent.
  void Stop();
  [[nodiscard]] int port() const { return port_; }

 private:
  httplib::Server& server_;
  int port_ = 0;
  std::jthread thread_;
};

}  // namespace cronwheel::net
