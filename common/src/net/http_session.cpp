#include "net/http_session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace cronwheel::net {

namespace http = boost::beast::http;
using detail::Refusal;

namespace {

// Unparsed bytes a connection may hold: a head (header_max_bytes) or a chunk header, plus what one read
// brings. A body is moved out of it as it is parsed.
constexpr std::size_t kReadBufferBytes = std::size_t{64} * 1024;
// What one read of a head asks for at most.
constexpr std::size_t kHeadReadBytes = std::size_t{16} * 1024;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

Session::Session(HttpServer::Impl& server, tcp::socket socket, ConnectionQuota::Id id, std::string address,
                 int port)
    : server_(server),
      strand_(asio::make_strand(server.io)),
      socket_(std::move(socket)),
      deadline_(strand_),
      buffer_(kReadBufferBytes),
      id_(id),
      address_(std::move(address)),
      remote_port_(port) {}

Session::~Session() {
  if (lingering_) --server_.lingering;
  server_.Closed(id_);
}

void Session::Start() {
  asio::dispatch(strand_,
                 [self = shared_from_this()] { self->WaitForRequest(self->settings().header_timeout); });
}

void Session::Shutdown() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->idle_) self->Close();
  });
}

void Session::ForceClose() {
  asio::post(strand_, [self = shared_from_this()] { self->Close(); });
}

// One deadline at a time; a deadline that fires after it was disarmed (its completion already queued) is
// recognised by its generation and ignored.
void Session::Arm(std::chrono::milliseconds timeout) {
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

void Session::Disarm() {
  ++deadline_generation_;
  deadline_.cancel();
}

void Session::Close() {
  closed_ = true;
  Disarm();
  ErrorCode ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

// Waits for the first byte of the next request (at most `timeout`), then reads its head.
void Session::WaitForRequest(std::chrono::milliseconds timeout) {
  if (!idle_) server_.Idle(id_);
  idle_ = true;
  if (server_.stopping || closed_) return Close();
  if (buffer_.size() > 0) return ReadHead();  // pipelined: already here
  Arm(timeout);
  socket_.async_wait(tcp::socket::wait_read,
                     asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec) {
                       if (ec || self->timed_out_ || self->closed_) return self->Close();
                       self->ReadHead();
                     }));
}

void Session::ReadHead() {
  // Still "idle" for the quota until the whole head is here: a peer that sends a head slowly holds no
  // request yet.
  idle_ = false;
  parser_.emplace();
  detail::ConfigureParser(*parser_, settings());
  scan_ = {};
  Arm(settings().header_timeout);
  ReadHeadBytes();
}

// Reads until the head is whole (its closing empty line) or over its limit, then parses it at once. The head
// is looked at before Beast parses it: Beast joins a folded line (obs-fold) into its field's value, which a
// server must refuse or replace (RFC 9112 §5.2) and which this one refuses (detail::CheckMessageFraming).
void Session::ReadHeadBytes() {
  const auto data = buffer_.data();
  scan_ = detail::ScanHead(std::string_view(static_cast<const char*>(data.data()), data.size()), scan_);
  const std::size_t limit = std::min(settings().header_max_bytes, buffer_.max_size());
  if (scan_.end == 0 && buffer_.size() < limit) {
    const auto room = std::min(kHeadReadBytes, buffer_.max_size() - buffer_.size());
    socket_.async_read_some(
        buffer_.prepare(room),
        asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t n) {
          self->buffer_.commit(n);
          if (ec) {
            self->Disarm();
            return self->OnHead(ec);
          }
          self->ReadHeadBytes();
        }));
    return;
  }
  Disarm();
  ErrorCode ec;
  // The whole head, or as much as its limit allows: the parser refuses what is over it (431).
  const auto used = parser_->put(asio::buffer(data.data(), scan_.end > 0 ? scan_.end : data.size()), ec);
  buffer_.consume(used);
  if (!ec && !parser_->is_header_done()) ec = http::error::header_limit;
  OnHead(ec);
}

void Session::OnHead(const ErrorCode& ec) {
  keep_alive_ = false;
  request_ = std::make_unique<Request>();
  request_->remote_addr = address_;
  request_->remote_port = remote_port_;
  if (ec) {
    if (timed_out_ || closed_ || ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
      // Nothing (whole) arrived in time, or the peer went away: 408 is owed to nobody who could read it.
      if (timed_out_ && !closed_ && buffer_.size() > 0) {
        return Refuse({408, "the request's head did not arrive in time"}, /*with_request=*/false);
      }
      return Close();
    }
    return Refuse(detail::ParseFailure(ec, settings(), settings().payload_max_bytes), false);
  }
  server_.Busy(id_);
  ++server_.requests;
  ++served_;
  if (auto refusal = detail::FillRequest(parser_->get(), settings(), *request_))
    return Refuse(*refusal, true);
  if (auto refusal = detail::CheckMessageFraming(*request_, scan_.obs_fold)) return Refuse(*refusal, true);
  keep_alive_ = parser_->get().keep_alive() && served_ < settings().keep_alive_max_count;
  if (server_.head_check && !RunCheck(server_.head_check)) return Respond(true);
  auto match = detail::FindRoute(server_.routes, *request_);
  if (match.route == nullptr) {
    if (!match.allow.empty()) response_.set_header("Allow", match.allow);
    return Refuse(match.refusal, true);
  }
  route_ = match.route;
  const auto content_length = parser_->content_length();
  if (auto refusal = detail::CheckBodyFraming(*route_, *request_,
                                              content_length ? std::optional(*content_length) : std::nullopt,
                                              parser_->chunked(), settings())) {
    return Refuse(*refusal, true);
  }
  if (route_->options.check_head) {
    const bool passed = RunCheck(route_->options.check_head);
    if (!passed || !route_->options.admit) return Checked(passed);
  }
  if (route_->options.admit) {
    server_.RunHandler([self = shared_from_this()] {
      const bool admitted = self->RunCheck(self->route_->options.admit);
      asio::post(self->strand_, [self, admitted] { self->Checked(admitted); });
    });
    return;
  }
  ReadBody();
}

// The route's checks are done: the connection counts as authenticated from now on if they found
// credentials (even when they refused the request for another reason, such as a role).
void Session::Checked(bool passed) {
  if (request_->authenticated && !authenticated_) authenticated_ = server_.Authenticate(id_);
  if (!passed) return Respond(true);
  ReadBody();
}

// Runs a check on this thread; false when it refused (response_ holds its answer).
bool Session::RunCheck(const HttpServer::Check& check) {
  try {
    return check(*request_, response_);
  } catch (...) {
    Excepted(std::current_exception());
    return false;
  }
}

void Session::ReadBody() {
  if (closed_) return Close();
  if (parser_->is_done()) return Handle();
  parser_->body_limit(detail::BodyLimit(*route_, *request_, settings()));
  body_limit_ = detail::BodyLimit(*route_, *request_, settings());
  const auto expect = request_->get_header_value("Expect");
  if (!expect.empty() && request_->version == "HTTP/1.1") {
    if (Lower(expect) != "100-continue") {
      return Refuse({417, fmt::format("the expectation '{}' is not supported", expect.substr(0, 100))}, true);
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

void Session::ReadBodyBytes() {
  Arm(settings().body_timeout);
  http::async_read(
      socket_, buffer_, *parser_,
      asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
        self->Disarm();
        if (ec) {
          if (self->closed_) return self->Close();
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

void Session::Handle() {
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

void Session::Excepted(const std::exception_ptr& error) {
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
void Session::Refuse(const Refusal& refusal, bool with_request) {
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
void Session::Respond(bool body_unread, bool with_request) {
  if (closed_) return Close();  // closed meanwhile (evicted, or the server stopping): nobody to answer
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
      socket_, m, asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t) {
        self->Disarm();
        self->Written(ec);
      }));
}

void Session::Written(const ErrorCode& ec) {
  message_.reset();
  response_ = Response{};
  request_.reset();
  route_ = nullptr;
  if (!ec && !timed_out_ && !closed_ && !keep_alive_ && parser_ && !parser_->is_done()) return Linger();
  if (ec || !keep_alive_ || timed_out_ || closed_) return Close();
  parser_.reset();
  WaitForRequest(settings().keep_alive_timeout);
}

// After an answer to a request whose body was left unread: stop sending, and read and drop what the peer
// still sends (at most kLingerBytes, for at most kLingerTime) before closing. Closing at once with unread
// bytes in the socket makes the kernel send a reset, which can destroy the answer before the peer reads
// it (the "lingering close" of RFC 9112 §9.6).
// At most kMaxLingering connections linger at once (a flood of refused bodies is closed at once).
void Session::Linger() {
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

void Session::LingerRead() {
  socket_.async_read_some(
      asio::buffer(linger_),
      asio::bind_executor(strand_, [self = shared_from_this()](const ErrorCode& ec, std::size_t n) {
        self->lingered_ += n;
        if (ec || self->timed_out_ || self->closed_ || self->lingered_ >= kLingerBytes) return self->Close();
        self->LingerRead();
      }));
}

}  // namespace cronwheel::net
