#pragma once
// The inside of cronwheel::net::HttpServer (cronwheel/net/http_server.hpp): its state (HttpServer::Impl:
// routes, the connection quota, the I/O context and threads) and one connection (Session). Private to
// common/src/net: http_server.cpp accepts connections and runs the server, http_session.cpp serves one.
//
// Thread-safety: Impl's counters are atomics and its connection tables are guarded by `mu`; a Session runs
// on its own strand (see below).

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <condition_variable>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/connection_quota.hpp"
#include "cronwheel/net/http_server.hpp"
#include "net/http_framing.hpp"

namespace cronwheel::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

class Session;

struct HttpServer::Impl {
  explicit Impl(const HttpServerSettings& s) : settings(s) {}

  HttpServerSettings settings;
  std::vector<detail::RouteEntry> routes;
  Check head_check;
  Handler error_handler;
  ExceptionHandler exception_handler;
  Handler post_routing;

  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> accepted{0}, refused{0}, evicted{0}, requests{0}, timed_out{0};
  std::atomic<int> lingering{0};  // connections reading away a refused body before they close

  // Open connections and their quota; guarded by mu. Declared before the io_context: a session that a
  // pending handler still holds is destroyed with the io_context and reports its close here. `sessions`
  // holds every session not yet destroyed, evicted ones too (Stop waits for them).
  cronwheel::Mutex mu;
  std::condition_variable all_closed;
  // Made by Start, once max_connections fits the open-file limit.
  std::optional<ConnectionQuota> quota ABSL_GUARDED_BY(mu);
  std::unordered_map<ConnectionQuota::Id, std::weak_ptr<Session>> sessions ABSL_GUARDED_BY(mu);

  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  asio::steady_timer accept_retry{io};
  std::unique_ptr<asio::thread_pool> pool;  // handlers; nullptr: on the I/O threads
  std::vector<std::thread> io_threads;
  int port = 0;
  bool started = false;
  bool stopped = false;

  void Accept();
  void OnAccepted(const ErrorCode& ec, tcp::socket socket);
  // What a session tells the quota (each takes `mu`).
  void Closed(ConnectionQuota::Id id);
  void Idle(ConnectionQuota::Id id);
  void Busy(ConnectionQuota::Id id);
  bool Authenticate(ConnectionQuota::Id id);
  // Runs `fn` on a handler thread (or inline when there are none).
  template <class Fn>
  void RunHandler(Fn&& fn) {
    if (pool) {
      asio::post(*pool, std::forward<Fn>(fn));
    } else {
      fn();
    }
  }
};

// One connection: reads a request's head, asks the head checks and the route, reads the body, runs the
// handler, writes the answer, and again while the connection is kept. Everything but the handler and admit
// runs on the connection's strand; at most one operation is pending at a time. Tells the server's quota
// when it waits for a request (Idle), has a whole head (Busy), and when a request passed a credential
// check (Authenticate).
class Session final : public std::enable_shared_from_this<Session> {
 public:
  using Strand = asio::strand<asio::io_context::executor_type>;

  Session(HttpServer::Impl& server, tcp::socket socket, ConnectionQuota::Id id, std::string address,
          int port);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Start();
  // From any thread: close if idle (between requests), else once the answer being made is written.
  void Shutdown();
  // From any thread: close now, whatever it is doing (Stop's last step; a connection evicted by the quota).
  void ForceClose();

 private:
  const HttpServerSettings& settings() const { return server_.settings; }

  void Arm(std::chrono::milliseconds timeout);
  void Disarm();
  void Close();
  void WaitForRequest(std::chrono::milliseconds timeout);
  void ReadHead();
  void ReadHeadBytes();
  void OnHead(const ErrorCode& ec);
  void Checked(bool passed);
  bool RunCheck(const HttpServer::Check& check);
  void ReadBody();
  void ReadBodyBytes();
  void Handle();
  void Excepted(const std::exception_ptr& error);
  void Refuse(const detail::Refusal& refusal, bool with_request);
  void Respond(bool body_unread, bool with_request = true);
  void Written(const ErrorCode& ec);
  void Linger();
  void LingerRead();

  static constexpr std::chrono::milliseconds kLingerTime{2000};
  static constexpr std::size_t kLingerBytes = std::size_t{8} << 20;
  static constexpr int kMaxLingering = 64;

  HttpServer::Impl& server_;
  Strand strand_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  beast::flat_buffer buffer_;
  std::optional<detail::RequestParser> parser_;
  detail::HeadScan scan_;
  std::unique_ptr<Request> request_;
  const detail::RouteEntry* route_ = nullptr;
  Response response_;
  std::optional<boost::beast::http::response<boost::beast::http::string_body>> message_;
  ConnectionQuota::Id id_;
  std::string address_;
  int remote_port_ = 0;
  std::size_t served_ = 0;
  std::uint64_t body_limit_ = 0;
  std::uint64_t deadline_generation_ = 0;
  std::array<char, 4096> linger_{};
  std::size_t lingered_ = 0;
  bool lingering_ = false;
  bool keep_alive_ = false;
  bool timed_out_ = false;
  bool idle_ = true;
  bool authenticated_ = false;  // the quota counts it as authenticated
  bool closed_ = false;
};

}  // namespace cronwheel::net
