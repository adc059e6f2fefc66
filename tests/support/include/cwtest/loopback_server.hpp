#pragma once
// Runs a test's httplib::Server on 127.0.0.1, on a port the kernel picks, in a thread of its own
// (cwtest::ServerThread, as the admin and the executor start theirs): from construction until
// destruction, which stops the server and joins the thread. Configure the server's handlers before
// constructing this. Not copyable; the server must outlive it.

#include <httplib.h>

#include <string>

#include "cwtest/httplib_server.hpp"

namespace cwtest {

class LoopbackServer {
 public:
  // `backlog` 0 keeps cpp-httplib's listen backlog of 5.
  explicit LoopbackServer(httplib::Server& server, int backlog = cwtest::DefaultListenBacklog())
      : thread_(server, "127.0.0.1", 0, backlog) {}

  int port() const { return thread_.port(); }
  std::string address() const { return "http://127.0.0.1:" + std::to_string(port()) + "/"; }

 private:
  cwtest::ServerThread thread_;
};

}  // namespace cwtest
