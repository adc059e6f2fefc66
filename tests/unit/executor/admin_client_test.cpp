// The executor's client of the admin API (admin_client.hpp) against a raw HTTP server on loopback that
// closes a kept connection as the next request arrives: the race of the admin's idle timeout with a
// heartbeat or callback sent just then. The request is sent once more on a new connection; a new
// connection that fails is not retried.
#include "admin_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

using cronwheel::executor::HttpAdminClient;

// Serves `plan` on 127.0.0.1: one entry per connection accepted, in order, each the number of requests
// answered on it before the next request is read and the connection closed unanswered (-1: closed at once,
// before anything is read). Every wait is bounded (5 s), so a client that never comes ends the thread.
class ClosingServer {
 public:
  explicit ClosingServer(std::vector<int> plan) : plan_(std::move(plan)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ClosingServer() {
    thread_.join();
    ::close(fd_);
  }
  ClosingServer(const ClosingServer&) = delete;
  ClosingServer& operator=(const ClosingServer&) = delete;

  [[nodiscard]] std::string address() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int accepted() const { return accepted_; }
  [[nodiscard]] int answered() const { return answered_; }

 private:
  static bool Readable(int fd) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, 5000) == 1;
  }
  // Reads one request (head and Content-Length body); false when the peer went away or nothing came.
  static bool ReadRequest(int fd) {
    std::string got;
    char buf[4096];
    while (true) {
      const auto end = got.find("\r\n\r\n");
      if (end != std::string::npos) {
        const auto at = got.find("Content-Length: ");
        const std::size_t body = at == std::string::npos ? 0 : std::stoul(got.substr(at + 16));
        if (got.size() >= end + 4 + body) return true;
      }
      if (!Readable(fd)) return false;
      const auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      got.append(buf, static_cast<std::size_t>(n));
    }
  }
  void Serve() {
    static constexpr std::string_view kAnswer =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 25\r\n"
        "Connection: keep-alive\r\n\r\n{\"code\":200,\"msg\":null}\r\n";
    for (const int answers : plan_) {
      if (!Readable(fd_)) return;
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      ++accepted_;
      for (int i = 0; i < answers && ReadRequest(conn); ++i) {
        ++answered_;  // before the answer: the client may check the count as soon as it has read it
        if (::write(conn, kAnswer.data(), kAnswer.size()) != static_cast<ssize_t>(kAnswer.size())) break;
      }
      // The next request arrives as the server's idle timeout closes the connection: it is not answered.
      if (answers >= 0) Readable(conn);
      ::close(conn);
    }
  }

  std::vector<int> plan_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> accepted_{0};
  std::atomic<int> answered_{0};
};

HttpAdminClient::Settings To(const std::string& address) {
  return {.addresses = {address}, .access_token = "", .app_name = "app", .timeout = std::chrono::seconds(3)};
}

TEST(HttpAdminClient, ARequestTheAdminClosedItsKeptConnectionOnIsSentAgainOnANewOne) {
  ClosingServer admin({1, 1});
  HttpAdminClient client(To(admin.address()));
  const nlohmann::json body = {{"registryGroup", "EXECUTOR"}, {"registryKey", "app"}, {"registryValue", "x"}};
  const auto first = client.Call("registry", body);
  ASSERT_TRUE(first.ok) << first.detail;
  const auto second = client.Call("registry", body);
  EXPECT_TRUE(second.ok) << second.detail;
  EXPECT_EQ(admin.accepted(), 2);
  EXPECT_EQ(admin.answered(), 2);
}

TEST(HttpAdminClient, AFailureOnANewConnectionIsTheAdminsAndIsNotRetried) {
  ClosingServer admin({0, 1});
  HttpAdminClient client(To(admin.address()));
  const auto reply = client.Call("callback", nlohmann::json::array());
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.detail.find("remoting error"), std::string::npos) << reply.detail;
  // The second connection of the plan serves the next call: the failed one made no other.
  const auto next = client.Call("callback", nlohmann::json::array());
  EXPECT_TRUE(next.ok) << next.detail;
  EXPECT_EQ(admin.accepted(), 2);
  EXPECT_EQ(admin.answered(), 1);
}

}  // namespace
