#pragma once
// A TCP proxy on loopback that can cut its connections right after forwarding a chosen message: how a test
// loses the acknowledgement of a PostgreSQL COMMIT the server has received (and so carries out), as a
// primary that dies or fails over mid-COMMIT does (docs/architecture.md, "When the primary dies").
//
//   cwtest::TcpProxy proxy("127.0.0.1", 5432);             // listens on 127.0.0.1:<proxy.port()>
//   proxy.CutAfter(cwtest::TcpProxy::kPgCommit);            // the next COMMIT: forwarded, then both sides
//   closed
//   ... a libpq connection to 127.0.0.1:<proxy.port()> (sslmode=disable) commits, and gets EOF ...
//   proxy.cuts();                                            // 1
//
// The bytes reach the server before the FIN that follows them (TCP delivers in order), and PostgreSQL
// executes each message it has read before it notices the end of the stream, so the transaction commits; the
// client sees its connection closed without an answer (libpqxx: pqxx::in_doubt_error).
//
// One thread moves the bytes of every connection (poll(2)); it stops in the destructor, closing everything.
// Thread-safety: every member may be called from any thread.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace cwtest {

class TcpProxy final {
 public:
  // The frontend message a simple-query COMMIT is ('Q', length 11, "COMMIT\0"), as libpq sends it for
  // libpqxx's transaction commit.
  static constexpr std::string_view kPgCommit{
      "Q\0\0\0\x0b"
      "COMMIT\0",
      12};

  // Forwards every connection made to 127.0.0.1:port() to upstream_host:upstream_port.
  TcpProxy(std::string upstream_host, int upstream_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  [[nodiscard]] int port() const { return port_; }
  // Arms one cut: the next client-to-server chunk holding `needle` (looked for within each read and across
  // two consecutive reads) is forwarded up to and including the needle, then that connection's two sockets
  // are closed. Anything after the needle in the same read is dropped.
  void CutAfter(std::string_view needle);
  // Connections cut so far.
  [[nodiscard]] int cuts() const { return cuts_.load(); }

 private:
  void Run(const std::stop_token& stop);

  std::string upstream_host_;
  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::optional<std::string> needle_;  // guarded by mu_
  std::atomic<int> cuts_{0};
  std::jthread thread_;
};

}  // namespace cwtest
