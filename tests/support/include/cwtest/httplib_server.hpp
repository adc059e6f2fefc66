#pragma once
// Starting a test's cpp-httplib server (the stub executors of the e2e tests, which behave like the
// executors users run): bind, raise the listen backlog, serve on a thread of its own, and return once the
// accept loop runs. cronwheel's own servers use cronwheel::net::HttpServer instead.
//
// Two traps of Debian's compiled cpp-httplib 0.11 are handled here once:
//  * it listens with a fixed backlog of 5; Linux lets listen() be called again on a listening socket to
//    change its backlog, which RaiseListenBacklog does (a stub asked for 5 keeps it, as users' do);
//  * it has no wait_until_ready(): a stop() before the accept loop runs is lost, so ServerThread waits
//    until is_running() (the socket already listens: microseconds).
//
// Thread-safety: a ServerThread is started and stopped by its owner thread.

#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace cwtest {

// Finds this process's listening TCP socket bound to `port` (via /proc/self/fd) and calls
// listen(fd, backlog) on it. Returns false if there is none or listen() fails. O(open descriptors).
bool RaiseListenBacklog(int port, int backlog);

// The kernel's limit (SOMAXCONN; net.core.somaxconn caps it).
int DefaultListenBacklog();

class ServerThread final {
 public:
  // Binds `server` to host:port (port 0 = any free port), raises the backlog to `backlog` (0 = leave
  // cpp-httplib's 5), and serves on a new thread. Returns once the accept loop runs. Throws
  // std::runtime_error naming host:port when it cannot bind.
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

}  // namespace cwtest
