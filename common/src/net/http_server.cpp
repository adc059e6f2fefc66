#include "cronwheel/net/http_server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "net/http_framing.hpp"

namespace cronwheel::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using detail::Refusal;
using detail::RouteEntry;

namespace {

// Unparsed bytes a connection may hold: a head (header_max_bytes) or a chunk header, plus what one read
// brings. A body is moved out of it as it is parsed.
constexpr std::size_t kReadBufferBytes = std::size_t{64} * 1024;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Descriptors kept for what else the process opens (log files, database connections, clients).
constexpr std::size_t kReservedDescriptors = 256;

}  // namespace

std::size_t RaiseOpenFileLimit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  if (files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
  }
  return files.rlim_cur == RLIM_INFINITY ? SIZE_MAX / 2 : static_cast<std::size_t>(files.rlim_cur);
}

class Session;

struct HttpServer::Impl {
  explicit Impl(const HttpServerSettings& s) : settings(s) {}

  HttpServerSettings settings;
  std::vector<RouteEntry> routes;
  Check head_check;
  Handler error_handler;
  ExceptionHandler exception_handler;
  Handler post_routing;

  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> accepted{0}, refused{0}, requests{0}, timed_out{0};
  std::atomic<int> lingering{0};  // connections reading away a refused body before they close

  // Open connections, by peer address; guarded by mu. Declared before the io_context: a session that a
  // pending handler still holds is destroyed with the io_context and reports its close here.
  std::mutex mu;
  std::condition_variable all_closed;
  std::unordered_map<std::string, std::size_t> per_address;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;

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
  void Closed(Session* session, const std::string& address);
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
// runs on the connection's strand; at most one operation is pending at a time.
class Session final : public std::enable_shared_from_this<Session> {
 public:
  using Strand = asio::strand<asio::io_context::executor_type>;

  Session(HttpServer::Impl& server, tcp::socket socket, std::string address, int port)
      : server_(server),
        strand_(asio::make_strand(server.io)),
        socket_(std::move(socket)),
        deadline_(strand_),
        buffer_(kReadBufferBytes),
        address_(std::move(address)),
        remote_port_(port) {}

  ~Session() {
    if (lingering_) --server_.lingering;
    server_.Closed(this, address_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Start() {
    asio::dispatch(strand_,
                   [self = shared_from_this()] { self->WaitForRequest(self->settings().header_timeout); });
  }

  // From any thread: close if idle (between requests), else once the answer being made is written.
  void Shutdown() {
    asio::post(strand_, [self = shared_from_this()] {
      if (self->idle_) self->Close();
    });
  }
  void ForceClose() {
    asio::post(strand_, [self = shared_from_this()] { self->Close(); });
  }

 private:
  const HttpServerSettings& settings() const { return server_.settings; }

  // One deadline at a time; a deadline that fires after it was disarmed (its completion already queued) is
  // recognised by its generation and ignored.
  void Arm(std::chrono::milliseconds timeout) {
    const auto generation = ++deadline_generation_;
    deadline_.expires_after(timeout);
    deadline_.async_wait(
        asio::bind_executor(strand_, [self = shared_from_this(), generation](const ErrorCode& ec) {
          if (ec || generation != self->deadline_generation_) return;
          ++self->server_.timed_out;
          self->timed_out_ = true;
          ErrorCode ignored;
          self->socket_.cancel(ignored);
        }));
  }
  void Disarm() {
    ++deadline_generation_;
    deadline_.cancel();
  }

  void Close() {
    Disarm();
    ErrorCode ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  // Waits for the first byte of the next request (at most `timeout`), then reads its head.
  void WaitForRequest(std::chrono::milliseconds timeout) {
    idle_ = true;
    if (server_.stopping) return Close();
    if (buffer_.size() > 0) return ReadHead();  // pipelined: already here
    Arm(timeout);
    socket_.async_wait(tcp::socket::wait_read,
                       asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec) {
                         if (ec || self->timed_out_) return self->Close();
                         self->ReadHead();
                       }));
  }

  void ReadHead() {
    idle_ = false;
    parser_.emplace();
    detail::ConfigureParser(*parser_, settings());
    Arm(settings().header_timeout);
    http::async_read_header(
        socket_, buffer_, *parser_,
        asio::bind_executor(
            strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) { self->OnHead(ec); }));
  }

  void OnHead(const ErrorCode& ec) {
    Disarm();
    keep_alive_ = false;
    request_ = std::make_unique<Request>();
    request_->remote_addr = address_;
    request_->remote_port = remote_port_;
    if (ec) {
      if (timed_out_ || ec == http::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
        // Nothing (whole) arrived in time, or the peer went away: 408 is owed to nobody who could read it.
        if (timed_out_ && buffer_.size() > 0) {
          return Refuse({408, "the request's head did not arrive in time"}, /*with_request=*/false);
        }
        return Close();
      }
      return Refuse(detail::ParseFailure(ec, settings(), settings().payload_max_bytes), false);
    }
    ++server_.requests;
    ++served_;
    if (auto refusal = detail::FillRequest(parser_->get(), settings(), *request_)) {
      return Refuse(*refusal, true);
    }
    keep_alive_ = parser_->get().keep_alive() && served_ < settings().keep_alive_max_count;
    if (server_.head_check && !Check(server_.head_check)) return Respond(true);
    auto match = detail::FindRoute(server_.routes, *request_);
    if (match.route == nullptr) {
      if (!match.allow.empty()) response_.set_header("Allow", match.allow);
      return Refuse(match.refusal, true);
    }
    route_ = match.route;
    const auto content_length = parser_->content_length();
    if (auto refusal = detail::CheckBodyFraming(
            *route_, *request_, content_length ? std::optional(*content_length) : std::nullopt,
            parser_->chunked(), settings())) {
      return Refuse(*refusal, true);
    }
    if (route_->options.check_head && !Check(route_->options.check_head)) return Respond(true);
    if (route_->options.admit) {
      server_.RunHandler([self = shared_from_this()] {
        const bool admitted = self->RunCheck(self->route_->options.admit);
        asio::post(self->strand_, [self, admitted] {
          if (!admitted) return self->Respond(true);
          self->ReadBody();
        });
      });
      return;
    }
    ReadBody();
  }

  // Runs a head check on this thread; false when it refused (response_ holds its answer).
  bool Check(const HttpServer::Check& check) { return RunCheck(check); }
  bool RunCheck(const HttpServer::Check& check) {
    try {
      return check(*request_, response_);
    } catch (...) {
      Excepted(std::current_exception());
      return false;
    }
  }

  void ReadBody() {
    if (parser_->is_done()) return Handle();
    parser_->body_limit(detail::BodyLimit(*route_, *request_, settings()));
    body_limit_ = detail::BodyLimit(*route_, *request_, settings());
    const auto expect = request_->get_header_value("Expect");
    if (!expect.empty() && request_->version == "HTTP/1.1") {
      if (Lower(expect) != "100-continue") {
        return Refuse({417, fmt::format("the expectation '{}' is not supported", expect.substr(0, 100))},
                      true);
      }
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      Arm(settings().write_timeout);
      asio::async_write(
          socket_, asio::buffer(kContinue.data(), kContinue.size()),
          asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
            self->Disarm();
            if (ec) return self->Close();
            self->ReadBodyBytes();
          }));
      return;
    }
    ReadBodyBytes();
  }

  void ReadBodyBytes() {
    Arm(settings().body_timeout);
    http::async_read(
        socket_, buffer_, *parser_,
        asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
          self->Disarm();
          if (ec) {
            if (self->timed_out_) {
              return self->Refuse({408, "the request's body did not arrive in time"}, true);
            }
            if (ec == http::error::end_of_stream || ec == asio::error::eof ||
                ec == asio::error::connection_reset) {
              return self->Close();
            }
            return self->Refuse(detail::ParseFailure(ec, self->settings(), self->body_limit_), true);
          }
          self->Handle();
        }));
  }

  void Handle() {
    request_->body = std::move(parser_->get().body());
    server_.RunHandler([self = shared_from_this()] {
      try {
        self->route_->handler(*self->request_, self->response_);
      } catch (...) {
        self->Excepted(std::current_exception());
      }
      asio::post(self->strand_, [self] { self->Respond(false); });
    });
  }

  void Excepted(const std::exception_ptr& error) {
    response_ = Response{};
    if (server_.exception_handler) {
      try {
        server_.exception_handler(*request_, response_, error);
        return;
      } catch (...) {
        response_ = Response{};
      }
    }
    std::string what = "unknown error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    response_.status = 500;
    response_.set_content("internal error: " + what + "\n", "text/plain; charset=utf-8");
  }

  // The server's own answer: the error handler may rewrite it. `with_request`: the head was read, so the
  // request's method and path are known.
  void Refuse(const Refusal& refusal, bool with_request) {
    if (refusal.close) keep_alive_ = false;
    response_.status = refusal.status;
    response_.set_content(refusal.message + "\n", "text/plain; charset=utf-8");
    if (server_.error_handler) {
      auto run = [self = shared_from_this(), with_request] {
        try {
          self->server_.error_handler(*self->request_, self->response_);
        } catch (...) {
          self->Excepted(std::current_exception());
        }
        asio::post(self->strand_, [self, with_request] { self->Respond(true, with_request); });
      };
      server_.RunHandler(std::move(run));
      return;
    }
    Respond(true, with_request);
  }

  // Writes response_. `body_unread`: the request's body (if any) was not read, so the connection closes.
  void Respond(bool body_unread, bool with_request = true) {
    if (body_unread && parser_ && !parser_->is_done()) keep_alive_ = false;
    if (!with_request) keep_alive_ = false;
    if (server_.stopping) keep_alive_ = false;
    if (with_request && server_.post_routing) {
      try {
        server_.post_routing(*request_, response_);
      } catch (...) {
        spdlog::warn("http server: the post-routing handler threw");
      }
    }
    const unsigned version = request_ && request_->version == "HTTP/1.0" ? 10 : 11;
    const bool head_only = request_ && request_->method == "HEAD";
    if (response_.get_header_value("Connection") == "close") keep_alive_ = false;
    message_.emplace();
    auto& m = *message_;
    m.version(version);
    m.result(static_cast<unsigned>(response_.status));
    for (const auto& [name, value] : response_.headers) {
      if (Lower(name) == "connection" || Lower(name) == "content-length" || Lower(name) == "keep-alive")
        continue;
      m.insert(name, value);
    }
    m.keep_alive(keep_alive_);
    if (keep_alive_) {
      m.set(http::field::keep_alive, fmt::format("timeout={}, max={}", settings().keep_alive_timeout.count(),
                                                 settings().keep_alive_max_count - served_));
    }
    const bool no_body = response_.status == 204 || response_.status == 304 || response_.status < 200;
    if (!no_body) m.content_length(response_.body.size());
    if (!head_only && !no_body) m.body() = std::move(response_.body);
    Arm(settings().write_timeout);
    http::async_write(
        socket_, m,
        asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
          self->Disarm();
          self->Written(ec);
        }));
  }

  void Written(const ErrorCode& ec) {
    message_.reset();
    response_ = Response{};
    request_.reset();
    route_ = nullptr;
    if (!ec && !timed_out_ && !keep_alive_ && parser_ && !parser_->is_done()) return Linger();
    if (ec || !keep_alive_ || timed_out_) return Close();
    parser_.reset();
    WaitForRequest(settings().keep_alive_timeout);
  }

  // After an answer to a request whose body was left unread: stop sending, and read and drop what the peer
  // still sends (at most kLingerBytes, for at most kLingerTime) before closing. Closing at once with unread
  // bytes in the socket makes the kernel send a reset, which can destroy the answer before the peer reads
  // it (the "lingering close" of RFC 9112 §9.6).
  // At most kMaxLingering connections linger at once (a flood of refused bodies is closed at once).
  void Linger() {
    if (server_.lingering.fetch_add(1) >= kMaxLingering) {
      --server_.lingering;
      return Close();
    }
    lingering_ = true;
    ErrorCode ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    Arm(kLingerTime);
    LingerRead();
  }
  void LingerRead() {
    socket_.async_read_some(
        asio::buffer(linger_),
        asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t n) {
          self->lingered_ += n;
          if (ec || self->timed_out_ || self->lingered_ >= kLingerBytes) return self->Close();
          self->LingerRead();
        }));
  }
  static constexpr std::chrono::milliseconds kLingerTime{2000};
  static constexpr std::size_t kLingerBytes = std::size_t{8} << 20;
  static constexpr int kMaxLingering = 64;

  HttpServer::Impl& server_;
  Strand strand_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  beast::flat_buffer buffer_;
  std::optional<detail::RequestParser> parser_;
  std::unique_ptr<Request> request_;
  const RouteEntry* route_ = nullptr;
  Response response_;
  std::optional<http::response<http::string_body>> message_;
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
};

// --- Impl: accepting --------------------------------------------------------------------------------------

void HttpServer::Impl::Accept() {
  acceptor->async_accept(asio::make_strand(io), [this](const ErrorCode& ec, tcp::socket socket) {
    OnAccepted(ec, std::move(socket));
  });
}

void HttpServer::Impl::OnAccepted(const ErrorCode& ec, tcp::socket socket) {
  if (stopping || !acceptor || !acceptor->is_open()) return;
  if (ec) {
    // Out of descriptors (EMFILE) or a connection reset before it was accepted: try again shortly rather
    // than spinning.
    spdlog::warn("http server: accept failed: {}", ec.message());
    accept_retry.expires_after(std::chrono::milliseconds(50));
    accept_retry.async_wait([this](const ErrorCode& wait) {
      if (!wait && !stopping) Accept();
    });
    return;
  }
  Accept();
  ErrorCode addr_ec;
  const auto peer = socket.remote_endpoint(addr_ec);
  if (addr_ec) return;
  const std::string address = peer.address().is_v6() && peer.address().to_v6().is_v4_mapped()
                                  ? peer.address().to_v6().to_v4().to_string()
                                  : peer.address().to_string();
  socket.set_option(tcp::no_delay(true), addr_ec);
  {
    std::lock_guard lock(mu);
    auto& from_address = per_address[address];
    if (sessions.size() >= settings.max_connections || from_address >= settings.max_connections_per_address) {
      if (from_address == 0) per_address.erase(address);
      ++refused;
      // Best effort, without waiting: the peer learns why instead of seeing a reset.
      static constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 33\r\n"
          "Connection: close\r\n\r\ntoo many connections: try later\r\n";
      ::send(socket.native_handle(), kBusy.data(), kBusy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      socket.close(addr_ec);
      return;
    }
    ++from_address;
  }
  ++accepted;
  auto session = std::make_shared<Session>(*this, std::move(socket), address, peer.port());
  {
    std::lock_guard lock(mu);
    sessions.emplace(session.get(), session);
  }
  session->Start();
}

void HttpServer::Impl::Closed(Session* session, const std::string& address) {
  std::lock_guard lock(mu);
  sessions.erase(session);
  if (auto it = per_address.find(address); it != per_address.end() && --it->second == 0)
    per_address.erase(it);
  if (sessions.empty()) all_closed.notify_all();
}

// --- HttpServer -------------------------------------------------------------------------------------------

HttpServer::HttpServer(const HttpServerSettings& settings) : impl_(std::make_unique<Impl>(settings)) {}

HttpServer::~HttpServer() {
  Stop();
}

void HttpServer::Route(std::string method, const std::string& pattern, Handler handler,
                       RouteOptions options) {
  RouteEntry entry{.method = std::move(method),
                   .pattern_text = pattern,
                   .pattern = std::regex(pattern),
                   .handler = std::move(handler),
                   .options = std::move(options)};
  impl_->routes.push_back(std::move(entry));
}
void HttpServer::Get(const std::string& p, Handler h, RouteOptions o) {
  Route("GET", p, std::move(h), std::move(o));
}
void HttpServer::Post(const std::string& p, Handler h, RouteOptions o) {
  Route("POST", p, std::move(h), std::move(o));
}
void HttpServer::Put(const std::string& p, Handler h, RouteOptions o) {
  Route("PUT", p, std::move(h), std::move(o));
}
void HttpServer::Delete(const std::string& p, Handler h, RouteOptions o) {
  Route("DELETE", p, std::move(h), std::move(o));
}
void HttpServer::Patch(const std::string& p, Handler h, RouteOptions o) {
  Route("PATCH", p, std::move(h), std::move(o));
}

void HttpServer::SetHeadCheck(Check check) {
  impl_->head_check = std::move(check);
}
void HttpServer::SetErrorHandler(Handler handler) {
  impl_->error_handler = std::move(handler);
}
void HttpServer::SetExceptionHandler(ExceptionHandler handler) {
  impl_->exception_handler = std::move(handler);
}
void HttpServer::SetPostRoutingHandler(Handler handler) {
  impl_->post_routing = std::move(handler);
}

int HttpServer::Start(const std::string& host, int port) {
  auto& s = *impl_;
  if (s.started) throw std::logic_error("HttpServer::Start called twice");
  s.started = true;
  // Every connection is a descriptor: the soft limit (often 1,024) is raised to the hard one, and the
  // connection limit kept below what is left for the process's own files and database connections.
  const auto files = RaiseOpenFileLimit();
  if (files > 0 && s.settings.max_connections + kReservedDescriptors > files) {
    const auto fit = files > kReservedDescriptors ? files - kReservedDescriptors : 16;
    spdlog::warn("http server: max_connections {} does not fit the open-file limit {}: using {}",
                 s.settings.max_connections, files, fit);
    s.settings.max_connections = fit;
  }
  const auto fail = [&](const std::string& why) {
    return std::runtime_error(
        fmt::format("cannot listen on {}:{}: {}; choose another host:port", host, port, why));
  };
  ErrorCode ec;
  tcp::resolver resolver(s.io);
  const auto endpoints = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) throw fail(ec ? ec.message() : "the host does not resolve");
  const tcp::endpoint endpoint = *endpoints.begin();
  s.acceptor.emplace(s.io);
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) {
    s.acceptor->listen(
        s.settings.backlog > 0 ? s.settings.backlog : asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    s.acceptor.reset();
    throw fail(ec == asio::error::address_in_use ? "the address is in use" : ec.message());
  }
  s.port = s.acceptor->local_endpoint().port();
  if (s.settings.threads > 0)
    s.pool = std::make_unique<asio::thread_pool>(static_cast<std::size_t>(s.settings.threads));
  s.work.emplace(s.io.get_executor());
  s.Accept();
  for (int i = 0; i < std::max(1, s.settings.io_threads); ++i) {
    s.io_threads.emplace_back([impl = impl_.get()] { impl->io.run(); });
  }
  return s.port;
}

void HttpServer::Stop(std::chrono::milliseconds grace) {
  auto& s = *impl_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  s.stopping = true;
  asio::post(s.io, [&s] {
    ErrorCode ignored;
    if (s.acceptor) s.acceptor->close(ignored);
    s.accept_retry.cancel();
  });
  const auto sessions = [&s] {
    std::vector<std::shared_ptr<Session>> out;
    std::lock_guard lock(s.mu);
    for (auto& [raw, weak] : s.sessions)
      if (auto session = weak.lock()) out.push_back(std::move(session));
    return out;
  };
  for (auto& session : sessions())
    session->Shutdown();
  {
    std::unique_lock lock(s.mu);
    s.all_closed.wait_for(lock, grace, [&s] { return s.sessions.empty(); });
  }
  for (auto& session : sessions())
    session->ForceClose();
  {
    std::unique_lock lock(s.mu);
    s.all_closed.wait_for(lock, std::chrono::seconds(5), [&s] { return s.sessions.empty(); });
  }
  s.work.reset();
  if (s.pool) s.pool->join();
  s.io.stop();
  for (auto& t : s.io_threads)
    if (t.joinable()) t.join();
  s.io_threads.clear();
}

int HttpServer::port() const {
  return impl_->port;
}

const HttpServerSettings& HttpServer::settings() const {
  return impl_->settings;
}

HttpServerStats HttpServer::Stats() const {
  HttpServerStats out{.accepted = impl_->accepted,
                      .refused = impl_->refused,
                      .requests = impl_->requests,
                      .timed_out = impl_->timed_out};
  std::lock_guard lock(impl_->mu);
  out.open = impl_->sessions.size();
  return out;
}

}  // namespace cronwheel::net
