// The admin's executor client against a real HTTP server on loopback: a pooled keep-alive connection that
// the executor closed while it sat idle is retried on a new connection, not reported as a failed trigger.
#include "admin/executor_client.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "ringwheel/clock.hpp"

namespace {

using namespace cronwheel;

class ExecutorStub {
 public:
  explicit ExecutorStub(time_t keep_alive_s) {
    server_.set_keep_alive_timeout(keep_alive_s);
    server_.Post("/run", [this](const httplib::Request&, httplib::Response& res) {
      ++runs;
      res.set_content(R"({"code":200,"msg":null})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::yield();
  }
  ~ExecutorStub() {
    server_.stop();
    thread_.join();
  }
  std::string address() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::atomic<int> runs{0};

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(ExecutorClient, AConnectionTheExecutorClosedWhileIdleIsRetriedOnANewOne) {
  ExecutorStub executor(1);  // closes idle keep-alive connections after 1 s
  // Reuse connections idle up to a minute: the client will pick the one the server has closed.
  admin::HttpExecutorClient client({.max_idle_age = std::chrono::minutes(1)},
                                   ringwheel::RealClock::Instance());
  protocol::TriggerParam p;
  p.job_id = 1;
  p.log_id = 1;
  ASSERT_TRUE(client.Run(executor.address(), "", p).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // real time: the server's idle timeout
  p.log_id = 2;
  const auto second = client.Run(executor.address(), "", p);
  EXPECT_TRUE(second.ok()) << second.msg.value_or("");
  EXPECT_EQ(executor.runs, 2);
}

// Answers the first request of each connection and closes the connection when a second request arrives
// on it, as an executor does when its idle timeout fires just as the admin sends.
class ClosingServer {
 public:
  ClosingServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(listener_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ClosingServer() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  std::string address() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::atomic<int> answered{0};

 private:
  static bool ReadRequest(int fd) {
    std::string data;
    char buf[4096];
    for (;;) {
      const auto head = data.find("\r\n\r\n");
      if (head != std::string::npos) {
        const auto cl = data.find("Content-Length: ");
        const std::size_t body = cl == std::string::npos ? 0 : std::stoul(data.substr(cl + 16));
        if (data.size() >= head + 4 + body) return true;
      }
      const auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      data.append(buf, static_cast<std::size_t>(n));
    }
  }
  void Serve() {
    while (!stop_) {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      if (ReadRequest(fd)) {
        const std::string body = R"({"code":200,"msg":null})";
        const std::string resp = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\nConnection: keep-alive\r\n\r\n" + body;
        ::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL);
        ++answered;
        ReadRequest(fd);  // the second request on this connection: dropped unanswered
      }
      ::close(fd);
    }
  }
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(ExecutorClient, ARequestLostOnAReusedConnectionIsResentOnANewOne) {
  ClosingServer executor;
  admin::HttpExecutorClient client({.max_idle_age = std::chrono::minutes(1)},
                                   ringwheel::RealClock::Instance());
  protocol::TriggerParam p;
  p.job_id = 1;
  for (int i = 1; i <= 3; ++i) {
    p.log_id = i;
    const auto r = client.Run(executor.address(), "", p);
    EXPECT_TRUE(r.ok()) << "fire " << i << ": " << r.msg.value_or("");
  }
  EXPECT_EQ(executor.answered, 3);
}

TEST(ExecutorClient, ConnectionsIdleLongerThanTheLimitAreNotReused) {
  ExecutorStub executor(1);
  admin::HttpExecutorClient client({.max_idle_age = std::chrono::milliseconds(200)},
                                   ringwheel::RealClock::Instance());
  protocol::TriggerParam p;
  p.job_id = 1;
  for (int i = 1; i <= 3; ++i) {
    p.log_id = i;
    const auto r = client.Run(executor.address(), "", p);
    EXPECT_TRUE(r.ok()) << r.msg.value_or("");
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  EXPECT_EQ(executor.runs, 3);
}

}  // namespace
