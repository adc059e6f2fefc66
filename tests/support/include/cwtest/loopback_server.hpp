#pragma once
// Runs a test's httplib::Server on 127.0.0.1, on a port the kernel picks, in a thread of its own: from
// construction until destruction, which stops the server and joins the thread. Configure the server's
// handlers before constructing this. Not copyable; the server must outlive it.

#include <httplib.h>

#include <string>
#include <thread>

namespace cwtest {

class LoopbackServer {
 public:
  explicit LoopbackServer(httplib::Server& server)
      : server_(server), port_(server.bind_to_any_port("127.0.0.1")) {
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) {
      std::this_thread::yield();
    }
  }
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  int port() const { return port_; }
  std::string address() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  httplib::Server& server_;
  int port_;
  std::thread thread_;
};

}  // namespace cwtest
