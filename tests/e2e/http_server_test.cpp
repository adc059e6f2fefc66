// cronwheel's HTTP server (cronwheel/net/http_server.hpp) on loopback, against peers that behave badly on
// purpose: what a peer without credentials can cost it, and that it still answers everyone else. Real
// sockets and real time (label e2e); every wait is bounded and generous, and the bounds are far from what
// a wrong server would do (a per-read timeout keeps a dribbling peer for ever).
#include "cronwheel/net/http_server.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cwtest/raw_connection.hpp"

namespace {

using namespace std::chrono_literals;
using cronwheel::net::HttpServer;
using cronwheel::net::HttpServerSettings;
using cronwheel::net::Request;
using cronwheel::net::Response;
using cwtest::RawConnection;
using ::testing::HasSubstr;
using SteadyClock = std::chrono::steady_clock;

std::string Get(const std::string& path) {
  return fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
}

// A server with one route of each kind the admin and the executor have: GET /ping, POST /echo (any body up
// to the limit), POST /guarded (admitted only with "X-Token: secret", checked before the body, which makes
// the connection an authenticated one).
class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerSettings settings) {
    server_ = std::make_unique<HttpServer>(settings);
    server_->Get("/ping", [](const Request&, Response& res) { res.set_content("pong", "text/plain"); });
    server_->Post("/echo", [this](const Request& req, Response& res) {
      ++handled_;
      res.set_content(req.body, "text/plain");
    });
    server_->Post("/guarded",
                  [this](const Request& req, Response& res) {
                    ++handled_;
                    res.set_content(fmt::format("{} bytes", req.body.size()), "text/plain");
                  },
                  {.admit = [](Request& req, Response& res) {
                    if (req.get_header_value("X-Token") == "secret") {
                      req.authenticated = true;  // the connection now counts as authenticated
                      return true;
                    }
                    res.status = 401;
                    res.set_content("wrong token", "text/plain");
                    return false;
                  }});
    server_->Post("/slow", [](const Request&, Response& res) {
      std::this_thread::sleep_for(300ms);  // an answer being made when Stop comes
      res.set_content("done", "text/plain");
    });
    port_ = server_->Start("127.0.0.1", 0);
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<int> handled_{0};
  int port_ = 0;
};

TEST_F(HttpServerTest, AHeadSentOneByteAtATimeIsCutAtItsWholeDeadlineNotKeptAliveByEachByte) {
  Start({.threads = 2, .header_timeout = 500ms});
  RawConnection conn(port_, 2s);
  const std::string head =
      "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + std::string(200, 'p') + "\r\n\r\n";
  const auto start = SteadyClock::now();
  std::size_t sent = 0;
  // One byte every 50 ms would take 12 s for this head; a per-read timeout (cpp-httplib's) never fires.
  for (; sent < head.size(); ++sent) {
    if (!conn.Send(head.substr(sent, 1))) break;
    std::this_thread::sleep_for(50ms);
    if (SteadyClock::now() - start > 5s) break;
  }
  const auto answer = conn.Read();
  const auto held = SteadyClock::now() - start;
  std::printf("[slow head] cut after %lld ms and %zu of %zu bytes; answer %d\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(held).count()),
              sent, head.size(), answer.status);
  EXPECT_LT(sent, head.size()) << "the whole head was accepted at one byte per 50 ms";
  EXPECT_TRUE(answer.status == 408 || answer.status == 0) << answer.head;
  EXPECT_LT(held, 5s);
  EXPECT_GE(server_->Stats().timed_out, 1u);
}

TEST_F(HttpServerTest, TwoHundredPeersSendingTheirHeadsSlowlyLeaveEveryoneElseAnswered) {
  Start({.threads = 2,
         .io_threads = 1,
         .header_timeout = 30s,
         .max_unauthenticated_connections = 1000,
         .max_unauthenticated_connections_per_address = 1000});
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(slow.back()->Send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& c : slow)
      c->Send("s");  // still sending, never finishing
    RawConnection conn(port_, 5s);
    const auto start = SteadyClock::now();
    ASSERT_TRUE(conn.Send(Get("/ping")));
    const auto answer = conn.Read();
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
    std::printf("[200 slow heads] round %d: a GET answered in %lld us\n", round,
                static_cast<long long>(took.count()));
    EXPECT_EQ(answer.status, 200);
    EXPECT_EQ(answer.body, "pong");
  }
  EXPECT_GE(server_->Stats().open, 200u) << "the slow peers are still connected, costing no thread";
}

TEST_F(HttpServerTest, ABodyIsNotReadBeforeTheRouteAdmitsItsSender) {
  Start({.threads = 2});
  RawConnection conn(port_, 5s);
  // The head announces 5 MiB; no byte of the body is sent. The refusal must come anyway, at once.
  ASSERT_TRUE(conn.Send(
      "POST /guarded HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: wrong\r\nContent-Length: 5242880\r\n\r\n"));
  const auto answer = conn.Read();
  EXPECT_EQ(answer.status, 401);
  EXPECT_EQ(answer.body, "wrong token");
  EXPECT_THAT(answer.head, HasSubstr("Connection: close")) << "the unread body ends the connection";
  EXPECT_EQ(handled_, 0);
  RawConnection ok(port_, 5s);
  ASSERT_TRUE(ok.Send(
      "POST /guarded HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: secret\r\nContent-Length: 3\r\n\r\nabc"));
  EXPECT_EQ(ok.Read().body, "3 bytes");
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredOnlyOnceTheSenderIsAdmitted) {
  Start({.threads = 2});
  RawConnection refused(port_, 5s);
  ASSERT_TRUE(
      refused.Send("POST /guarded HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: wrong\r\nExpect: "
                   "100-continue\r\nContent-Length: 3\r\n\r\n"));
  EXPECT_EQ(refused.Read().status, 401) << "no 100 Continue before the refusal";
  RawConnection admitted(port_, 5s);
  ASSERT_TRUE(
      admitted.Send("POST /guarded HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: secret\r\nExpect: "
                    "100-continue\r\nContent-Length: 3\r\n\r\n"));
  EXPECT_EQ(admitted.Read().status, 100);
  ASSERT_TRUE(admitted.Send("abc"));
  const auto answer = admitted.Read();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "3 bytes");
}

TEST_F(HttpServerTest, AChunkedBodyIsRefusedAsSoonAsItsDecodedBytesPassTheLimit) {
  Start({.threads = 2, .payload_max_bytes = std::size_t{64} * 1024});
  RawConnection conn(port_, 5s);
  ASSERT_TRUE(conn.Send("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  // 64 MiB announced chunk by chunk, never finished: the server must stop reading long before.
  const std::string chunk =
      fmt::format("{:x}\r\n{}\r\n", 16 * 1024, std::string(std::size_t{16} * 1024, 'c'));
  std::size_t sent = 0;
  while (sent < std::size_t{64} << 20 && conn.Send(chunk))
    sent += std::size_t{16} * 1024;
  const auto answer = conn.Read();
  std::printf("[chunked] the client got %zu KiB out before the answer %d\n", sent / 1024, answer.status);
  EXPECT_EQ(answer.status, 413);
  EXPECT_THAT(answer.body, HasSubstr("65536 bytes"));
  EXPECT_LT(sent, std::size_t{64} << 20) << "the server read the whole 64 MiB";
  EXPECT_EQ(handled_, 0);
}

std::string Guarded(const std::string& body = "abc") {
  return fmt::format(
      "POST /guarded HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: secret\r\nContent-Length: {}\r\n\r\n{}",
      body.size(), body);
}

// Security review 2, N1: 256 idle connections from 127.0.0.1 made the admin refuse its executor on the same
// host. Now 300 idle connections without credentials from one address cost an authenticated client of that
// address nothing: its kept connection stays, and its new ones get in, each closing the flood's oldest.
TEST_F(HttpServerTest, N1_IdleConnectionsWithoutCredentialsDoNotKeepAnAuthenticatedClientOfTheirAddressOut) {
  Start({.threads = 2, .keep_alive_timeout = 30s});  // the default limits: 64 unauthenticated per address
  RawConnection executor(port_, 5s);
  ASSERT_TRUE(executor.Send(Guarded()));
  ASSERT_EQ(executor.Read().status, 200);
  std::vector<std::unique_ptr<RawConnection>> flood;
  flood.reserve(300);
  for (int i = 0; i < 300; ++i)
    flood.push_back(std::make_unique<RawConnection>(port_, 5s));  // connected, never a byte sent
  for (int attempt = 0; attempt < 500 && server_->Stats().accepted < 301; ++attempt)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->Stats().accepted, 301u);
  EXPECT_EQ(server_->Stats().refused, 0u);
  EXPECT_GE(server_->Stats().evicted, 300u - 64u);
  ASSERT_TRUE(executor.Send(Guarded("kept")));
  EXPECT_EQ(executor.Read().body, "4 bytes") << "the authenticated connection was kept";
  for (int i = 0; i < 3; ++i) {
    RawConnection another(port_, 5s);
    ASSERT_TRUE(another.Send(Guarded()));
    EXPECT_EQ(another.Read().body, "3 bytes") << "a new connection from the flooding address";
  }
  // The flood's oldest connections were the ones closed; its youngest are still open.
  EXPECT_TRUE(flood.front()->ClosedByPeer());
  EXPECT_LE(server_->Stats().open, 64u + 1u + 3u);
}

TEST_F(HttpServerTest, N1_OnlyWhenEveryOpenConnectionIsAuthenticatedIsANewOneRefused) {
  Start({.threads = 2,
         .keep_alive_timeout = 30s,
         .max_connections = 4,
         .max_connections_per_address = 4,
         .max_unauthenticated_connections = 4,
         .max_unauthenticated_connections_per_address = 4});
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_, 5s));
    ASSERT_TRUE(held.back()->Send(Guarded()));
    EXPECT_EQ(held.back()->Read().status, 200);  // kept open, authenticated
  }
  RawConnection fifth(port_, 5s);
  fifth.Send(Get("/ping"));
  EXPECT_EQ(fifth.Read().status, 503);
  EXPECT_EQ(server_->Stats().refused, 1u);
  EXPECT_EQ(server_->Stats().evicted, 0u);
  for (auto& c : held) {
    ASSERT_TRUE(c->Send(Guarded()));
    EXPECT_EQ(c->Read().status, 200) << "none was closed to make room";
  }
  held.pop_back();  // one closes: room for another
  for (int attempt = 0; attempt < 50 && server_->Stats().open > 3; ++attempt)
    std::this_thread::sleep_for(10ms);
  RawConnection again(port_, 5s);
  ASSERT_TRUE(again.Send(Get("/ping")));
  EXPECT_EQ(again.Read().status, 200);
}

TEST_F(HttpServerTest, N1_ANewConnectionOverItsAddressesShareClosesTheIdleLongestWithoutCredentials) {
  Start({.threads = 2, .keep_alive_timeout = 30s, .max_unauthenticated_connections_per_address = 4});
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_, 5s));
    ASSERT_TRUE(held.back()->Send(Get("/ping")));
    EXPECT_EQ(held.back()->Read().status, 200);  // kept open, no credentials
  }
  RawConnection fifth(port_, 5s);
  ASSERT_TRUE(fifth.Send(Get("/ping")));
  EXPECT_EQ(fifth.Read().status, 200);
  EXPECT_TRUE(held.front()->ClosedByPeer()) << "the idle-longest one was closed";
  EXPECT_EQ(server_->Stats().evicted, 1u);
  EXPECT_EQ(server_->Stats().refused, 0u);
  for (std::size_t i = 1; i < held.size(); ++i) {
    ASSERT_TRUE(held[i]->Send(Get("/ping")));
    EXPECT_EQ(held[i]->Read().status, 200) << i;
  }
}

// Security review 2, N6: the server read `gzip, chunked`, two Transfer-Encoding fields and a folded one as
// chunked. Each is now refused with 400 before a byte of the body is read, and the connection closes.
TEST_F(HttpServerTest, N6_ATransferEncodingOtherThanOneChunkedOrAFoldedLineIsRefusedBeforeTheBody) {
  Start({.threads = 2});
  for (const std::string fields :
       {"Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip,\r\n chunked\r\n", "Transfer-Encoding:\r\n chunked\r\n"}) {
    SCOPED_TRACE(fields);
    RawConnection conn(port_, 5s);
    ASSERT_TRUE(
        conn.Send("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + "\r\n5\r\nhello\r\n0\r\n\r\n"));
    const auto answer = conn.Read();
    EXPECT_EQ(answer.status, 400);
    EXPECT_THAT(answer.head, HasSubstr("Connection: close"));
    EXPECT_TRUE(conn.ClosedByPeer());
  }
  EXPECT_EQ(handled_, 0);
  RawConnection chunked(port_, 5s);
  ASSERT_TRUE(chunked.Send(
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
  EXPECT_EQ(chunked.Read().body, "hello");
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrderOnAKeptConnection) {
  Start({.threads = 4});
  RawConnection conn(port_, 5s);
  ASSERT_TRUE(conn.Send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none" + Get("/ping") +
                        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nthree"));
  EXPECT_EQ(conn.Read().body, "one");
  const auto second = conn.Read();
  EXPECT_EQ(second.body, "pong");
  EXPECT_THAT(second.head, HasSubstr("Keep-Alive: timeout=2"));
  EXPECT_EQ(conn.Read().body, "three");
  // HTTP/1.0 without keep-alive: answered, then closed.
  RawConnection old(port_, 5s);
  ASSERT_TRUE(old.Send("GET /ping HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(old.Read().body, "pong");
  EXPECT_TRUE(old.ClosedByPeer());
}

TEST_F(HttpServerTest, StopLetsAnAnswerBeingMadeFinishAndClosesIdleConnections) {
  Start({.threads = 2});
  RawConnection idle(port_, 5s);
  ASSERT_TRUE(idle.Send(Get("/ping")));
  EXPECT_EQ(idle.Read().status, 200);
  RawConnection busy(port_, 5s);
  ASSERT_TRUE(busy.Send("POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"));
  std::this_thread::sleep_for(100ms);  // the handler is running
  std::thread stopper([this] { server_->Stop(); });
  const auto answer = busy.Read();
  stopper.join();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "done");
  EXPECT_THAT(answer.head, HasSubstr("Connection: close"));
  EXPECT_TRUE(idle.ClosedByPeer());
}

}  // namespace
