// cronwheel's HTTP client (cronwheel/net/http_client.hpp) against servers it did not write: cpp-httplib's
// server (plain and TLS, with a certificate made by the openssl command for this test) and, for what a
// well-behaved server does not do (close a kept connection, never answer), a scripted server on a raw socket.
// Loopback only; every wait is bounded.

#include "cronwheel/net/http_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "cwtest/loopback_server.hpp"
#include "cwtest/process.hpp"
#include "cwtest/shell.hpp"

namespace {

using cronwheel::net::ClientRequest;
using cronwheel::net::HttpAddress;
using cronwheel::net::HttpClient;
using cronwheel::net::ParseHttpAddress;
using namespace std::chrono_literals;

HttpAddress Origin(const std::string& url) {
  auto parsed = ParseHttpAddress(url);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return *parsed;
}

HttpAddress Loopback(int port) {
  return Origin("http://127.0.0.1:" + std::to_string(port));
}

// A TCP server on 127.0.0.1 that hands each accepted connection, in turn, to `script` on its own thread
// (one connection at a time). Stops (and joins) in its destructor.
class ScriptedServer {
 public:
  using Script = std::function<void(int fd, int index)>;
  explicit ScriptedServer(Script script) : script_(std::move(script)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    EXPECT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (int index = 0;; ++index) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0 || stopping_) {
          if (fd >= 0) ::close(fd);
          return;
        }
        accepted_ = index + 1;
        script_(fd, index);
        ::close(fd);
      }
    });
  }
  ~ScriptedServer() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_; }

  // Reads one request head (up to the blank line); false when the peer closed first.
  static bool ReadHead(int fd) {
    std::string head;
    char c = 0;
    while (!head.ends_with("\r\n\r\n")) {
      if (::recv(fd, &c, 1, 0) != 1) return false;
      head += c;
    }
    return true;
  }
  static void Answer(int fd, const std::string& body) {
    const auto text = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  }

 private:
  Script script_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST(HttpClientTest, SendsMethodTargetHeadersAndBodyAndKeepsTheConnection) {
  httplib::Server server;
  std::atomic<int> connections_seen{0};
  server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.method + " " + req.target + " " + req.get_header_value("X-Token") + " " +
                        req.get_header_value("X-Call") + " " + req.get_header_value("Content-Type") + " " +
                        req.get_header_value("Host") + " " + req.body,
                    "text/plain");
  });
  server.Get("/hello",
             [](const httplib::Request&, httplib::Response& res) { res.set_content("hi", "text/plain"); });
  cwtest::LoopbackServer running(server);
  HttpClient client(Loopback(running.port()), {.default_headers = {{"X-Token", "secret"}}});

  const auto posted = client.Send({.method = "POST",
                                   .target = "/echo?a=1",
                                   .headers = {{"X-Call", "first"}},
                                   .body = R"({"k":1})",
                                   .content_type = "application/json"});
  ASSERT_TRUE(posted.ok()) << posted.status();
  EXPECT_EQ(posted->status, 200);
  EXPECT_EQ(posted->body, "POST /echo?a=1 secret first application/json 127.0.0.1:" +
                              std::to_string(running.port()) + R"( {"k":1})");
  EXPECT_EQ(posted->Header("content-type"), "text/plain");

  const auto got = client.Send({.target = "/hello"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->body, "hi");
  const auto missing = client.Send({.target = "/nowhere"});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 404);  // an answer, not an error
  EXPECT_EQ(client.Stats().connections, 1U);
  EXPECT_EQ(client.Stats().retries, 0U);
}

TEST(HttpClientTest, HeadReadsNoBodyEvenWhenALengthIsAnnounced) {
  httplib::Server server;
  server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(5000, 'x'), "text/plain");
  });
  cwtest::LoopbackServer running(server);
  HttpClient client(Loopback(running.port()), {.timeout = 5s});
  const auto head = client.Send({.method = "HEAD", .target = "/big"});
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  const auto get = client.Send({.target = "/big"});  // the connection is still in step
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->body.size(), 5000U);
}

TEST(HttpClientTest, AKeptConnectionTheServerClosedIsRetriedOnceOnANewOne) {
  std::promise<void> closed;
  ScriptedServer server([&](int fd, int index) {
    ASSERT_TRUE(ScriptedServer::ReadHead(fd));
    ScriptedServer::Answer(fd, "answer " + std::to_string(index));
    if (index == 0) {
      // Keep-alive was announced (HTTP/1.1, no Connection: close), then the connection ends: an idle
      // timeout that ends as the next request goes out.
      ::shutdown(fd, SHUT_RDWR);
      closed.set_value();
    }
  });
  HttpClient client(Loopback(server.port()), {.timeout = 5s});
  const auto first = client.Send({.target = "/a"});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->body, "answer 0");
  ASSERT_EQ(closed.get_future().wait_for(10s), std::future_status::ready);
  const auto second = client.Send({.method = "POST", .target = "/b", .body = "x"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->body, "answer 1");
  EXPECT_EQ(client.Stats().connections, 2U);
  EXPECT_EQ(client.Stats().retries, 1U);
}

TEST(HttpClientTest, AFreshConnectionClosedWithoutAnAnswerFailsWithoutARetry) {
  ScriptedServer server([](int fd, int) { ScriptedServer::ReadHead(fd); });
  HttpClient client(Loopback(server.port()), {.timeout = 5s});
  const auto sent = client.Send({.method = "POST", .target = "/api/callback", .body = "[]"});
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kUnavailable) << sent.status();
  EXPECT_NE(sent.status().message().find("POST http://127.0.0.1:" + std::to_string(server.port()) +
                                         "/api/callback: no answer"),
            std::string::npos)
      << sent.status();
  EXPECT_EQ(client.Stats().retries, 0U);
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpClientTest, AnAnswerCutShortIsNotRetriedEvenOnAKeptConnection) {
  ScriptedServer server([](int fd, int index) {
    ASSERT_TRUE(ScriptedServer::ReadHead(fd));
    ScriptedServer::Answer(fd, "ok");
    if (index > 0) return;
    ASSERT_TRUE(ScriptedServer::ReadHead(fd));
    const std::string part = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    ::send(fd, part.data(), part.size(), MSG_NOSIGNAL);
  });
  HttpClient client(Loopback(server.port()), {.timeout = 5s});
  ASSERT_TRUE(client.Send({.target = "/a"}).ok());
  const auto cut = client.Send({.target = "/b"});
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("the answer was cut short"), std::string::npos) << cut.status();
  EXPECT_EQ(client.Stats().retries, 0U);
}

TEST(HttpClientTest, ARefusedConnectionNamesTheOrigin) {
  const int port = cwtest::FreeTcpPort();
  HttpClient client(Loopback(port), {.connect_timeout = 5s});
  const auto sent = client.Send({.target = "/"});
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(sent.status().message().find("cannot connect to http://127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << sent.status();
}

TEST(HttpClientTest, AServerThatNeverAnswersPassesTheDeadline) {
  std::promise<void> release;
  auto released = release.get_future().share();
  ScriptedServer server([released](int fd, int) {
    ScriptedServer::ReadHead(fd);
    released.wait_for(30s);
  });
  HttpClient client(Loopback(server.port()), {.timeout = 300ms});
  const auto sent = client.Send({.target = "/slow"});
  release.set_value();
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kDeadlineExceeded) << sent.status();
}

TEST(HttpClientTest, AnAnswerOverTheBodyLimitIsRefused) {
  httplib::Server server;
  server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(10'000, 'x'), "text/plain");
  });
  cwtest::LoopbackServer running(server);
  HttpClient client(Loopback(running.port()), {.timeout = 5s, .body_max_bytes = 1000});
  const auto sent = client.Send({.target = "/big"});
  ASSERT_FALSE(sent.ok()) << sent->status << ", " << sent->body.size() << " bytes";
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kResourceExhausted) << sent.status();
  EXPECT_NE(sent.status().message().find("larger than 1000 bytes"), std::string::npos);
  // The connection is not left in the middle of an answer: the next call gets its own.
  const auto next = client.Send({.target = "/small"});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->status, 404);
}

TEST(HttpClientTest, AChunkedAnswerOverTheBodyLimitIsRefused) {
  httplib::Server server;
  server.Get("/chunked", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](std::size_t offset, httplib::DataSink& sink) {
      if (offset >= 100'000) {
        sink.done();
        return true;
      }
      const std::string chunk(1000, 'y');
      return sink.write(chunk.data(), chunk.size());
    });
  });
  cwtest::LoopbackServer running(server);
  HttpClient client(Loopback(running.port()), {.timeout = 5s, .body_max_bytes = 5000});
  const auto sent = client.Send({.target = "/chunked"});
  ASSERT_FALSE(sent.ok()) << sent->status << ", " << sent->body.size() << " bytes";
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kResourceExhausted) << sent.status();
  HttpClient roomy(Loopback(running.port()), {.timeout = 5s});
  const auto whole = roomy.Send({.target = "/chunked"});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->body.size(), 100'000U);
}

TEST(HttpClientTest, ARequestThatCannotBeSentAsGivenIsRefusedBeforeConnecting) {
  HttpClient client(Loopback(cwtest::FreeTcpPort()), {.default_headers = {{"X-Ok", "fine"}}});
  for (const ClientRequest& bad : {
           ClientRequest{.method = "GET /x HTTP/1.1\r\nX:", .target = "/"},
           ClientRequest{.target = "/a b"},
           ClientRequest{.target = "/a\r\nX-Injected: 1"},
           ClientRequest{.target = "relative"},
           ClientRequest{.target = "/", .headers = {{"X-Bad", "v\r\nX-Injected: 1"}}},
           ClientRequest{.target = "/", .headers = {{"Bad Name", "v"}}},
           ClientRequest{.method = "POST", .target = "/", .body = "x", .content_type = "text/plain\r\nX: 1"},
       }) {
    const auto sent = client.Send(bad);
    ASSERT_FALSE(sent.ok()) << bad.method << " " << bad.target;
    EXPECT_EQ(sent.status().code(), absl::StatusCode::kInvalidArgument) << sent.status();
  }
  EXPECT_EQ(client.Stats().connections, 0U);
}

TEST(HttpClientTest, ConnectionCloseFromTheServerOpensANewConnectionWithoutARetry) {
  httplib::Server server;
  server.set_keep_alive_max_count(1);  // every answer says Connection: close
  server.Get("/x",
             [](const httplib::Request&, httplib::Response& res) { res.set_content("x", "text/plain"); });
  cwtest::LoopbackServer running(server);
  HttpClient client(Loopback(running.port()), {.timeout = 5s});
  for (int i = 0; i < 3; ++i) {
    const auto sent = client.Send({.target = "/x"});
    ASSERT_TRUE(sent.ok()) << sent.status();
  }
  EXPECT_EQ(client.Stats().connections, 3U);
  EXPECT_EQ(client.Stats().retries, 0U);
}

// A certificate for 127.0.0.1 only (not for "localhost"), made by the openssl command (scripts/setup installs
// it).
struct Certificate {
  std::filesystem::path dir;
  std::filesystem::path cert;
  std::filesystem::path key;
};

Certificate MakeCertificate() {
  Certificate c;
  c.dir = std::filesystem::temp_directory_path() / ("cw-http-client-" + std::to_string(::getpid()));
  std::filesystem::create_directories(c.dir);
  c.cert = c.dir / "cert.pem";
  c.key = c.dir / "key.pem";
  const auto command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
      "-subj /CN=cronwheel-test.invalid -addext subjectAltName=IP:127.0.0.1 -keyout '" +
      c.key.string() + "' -out '" + c.cert.string() + "'";
  const auto made = cwtest::RunShell(command + " 2>&1");
  EXPECT_EQ(made.exit_code, 0) << command << "\n" << made.out;
  return c;
}

TEST(HttpClientTest, HttpsVerifiesTheCertificateAndItsName) {
  const auto certificate = MakeCertificate();
  httplib::SSLServer server(certificate.cert.c_str(), certificate.key.c_str());
  ASSERT_TRUE(server.is_valid());
  server.Get("/secure",
             [](const httplib::Request&, httplib::Response& res) { res.set_content("s", "text/plain"); });
  cwtest::LoopbackServer running(server);
  const auto port = std::to_string(running.port());

  // Not trusted: the system's store does not hold this self-signed certificate.
  HttpClient untrusted(Origin("https://127.0.0.1:" + port), {.connect_timeout = 5s, .timeout = 5s});
  const auto refused = untrusted.Send({.target = "/secure"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("the TLS handshake failed"), std::string::npos)
      << refused.status();

  // Trusted through ca_file.
  HttpClient trusted(Origin("https://127.0.0.1:" + port),
                     {.connect_timeout = 5s, .timeout = 5s, .ca_file = certificate.cert.string()});
  const auto sent = trusted.Send({.target = "/secure"});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->body, "s");
  ASSERT_TRUE(trusted.Send({.target = "/secure"}).ok());
  EXPECT_EQ(trusted.Stats().connections, 1U) << "the TLS connection is kept";

  // Trusted, but the certificate does not name the host asked for ("localhost" reaches the same server).
  HttpClient wrong_name(Origin("https://localhost:" + port),
                        {.connect_timeout = 5s, .timeout = 5s, .ca_file = certificate.cert.string()});
  const auto mismatch = wrong_name.Send({.target = "/secure"});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("the TLS handshake failed"), std::string::npos)
      << mismatch.status();

  EXPECT_THROW(HttpClient(Origin("https://127.0.0.1:" + port), {.ca_file = "/nonexistent/ca.pem"}),
               std::invalid_argument);
  std::filesystem::remove_all(certificate.dir);
}

}  // namespace
