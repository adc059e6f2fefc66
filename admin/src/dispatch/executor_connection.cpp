// One connection's steps (connect, TLS, write, read, the answer) of HttpExecutorClient::Engine; the queues,
// pools and deadlines are in executor_engine.cpp.
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>

#include "cronwheel/net/ip_address.hpp"
#include "dispatch/executor_engine.hpp"

namespace cronwheel::admin {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using ErrorCode = boost::system::error_code;
using TransportClock = HttpExecutorClient::Engine::TransportClock;
using ConnectFailure = ConnectionPolicy::ConnectFailure;

// The largest answer read: a /log answer carries at most the executor's byte cap of lines.
constexpr std::uint64_t kMaxAnswerBytes = std::uint64_t{64} << 20;

// The timeout of a "Keep-Alive: timeout=5, max=100" answer header (RFC 2068 §19.7.1.1), if any.
std::optional<milliseconds> KeepAliveHeader(std::string_view value) {
  const auto at = value.find("timeout=");
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = value.data() + at + 8;
  int seconds = 0;
  const auto [end, ec] = std::from_chars(begin, value.data() + value.size(), seconds);
  if (ec != std::errc() || end == begin || seconds <= 0) return std::nullopt;
  return milliseconds(std::int64_t{seconds} * 1000);
}

// Why no connection could be made, in words a user can act on (issue 21: the socket's own text, for any
// address a registration named, is for the admin's log).
std::string Unreachable(const ErrorCode& e) {
  if (e == asio::error::connection_refused) return "connection refused";
  if (e == asio::error::timed_out) return "timed out";
  if (e == asio::error::host_not_found || e == asio::error::host_not_found_try_again ||
      e == asio::error::no_data || e == asio::error::no_recovery) {
    return "its host name did not resolve";
  }
  if (e == asio::error::network_unreachable || e == asio::error::host_unreachable) return "no route to it";
  return "the connection failed";
}

// Why no answer came after the request was written, in the same spirit.
std::string NoAnswer(const ErrorCode& e) {
  if (e == http::error::end_of_stream || e == asio::error::eof || e == asio::error::connection_reset ||
      e == asio::error::broken_pipe || e == asio::error::connection_aborted) {
    return "the connection closed without an answer";
  }
  if (&e.category() == &http::make_error_code(http::error::end_of_stream).category()) {
    return "the answer was not an executor's";
  }
  return "the connection failed";
}

// What a failed connection attempt tells the connection policy.
ConnectFailure FailureKind(const ErrorCode& e) {
  if (e == asio::error::connection_refused) return ConnectFailure::kRefused;
  if (e == asio::error::timed_out) return ConnectFailure::kTimedOut;
  return ConnectFailure::kOther;
}

}  // namespace

using Engine = HttpExecutorClient::Engine;

void Engine::Open(Origin& origin, std::unique_ptr<Request> r, ringwheel::SteadyTime now) {
  auto c = std::make_shared<Conn>();
  c->place = origin.policy.OnAttempt(now);
  Count(origin, [&](OriginStats& s) {
    ++s.opened;
    s.most_open = std::max(s.most_open, origin.policy.open());
  });
  c->origin = &origin;
  c->request = std::move(r);
  c->attempted = now;
  if (c->request->tls) {
    c->tls.emplace(io_, TlsContext());
  } else {
    c->plain.emplace(io_);
  }
  c->deadline = TransportClock::now() + settings_.connect_timeout;
  AddBusy(origin, c);
  ErrorCode ec;
  const auto ip = asio::ip::make_address(c->request->host, ec);
  if (!ec) {
    // An IP literal: checked like a resolved name, on the endpoint connected to (make_address reads a zone
    // id too, "::ffff:127.0.0.5%1": issue 44, F6).
    ConnectAllowed(c, {tcp::endpoint(ip, static_cast<std::uint16_t>(c->request->port))});
    return;
  }
  resolver_.async_resolve(c->request->host, std::to_string(c->request->port),
                          [this, c](const ErrorCode& e, const tcp::resolver::results_type& found) {
                            if (c->closed) return;
                            if (e) {
                              Connected(c, e);
                              return;
                            }
                            std::vector<tcp::endpoint> endpoints;
                            for (const auto& entry : found)
                              endpoints.push_back(entry.endpoint());
                            ConnectAllowed(c, std::move(endpoints));
                          });
}

// Connects to the first of `endpoints` that answers among those the registration guard allows, now: the one
// way a connection to an executor is made (for a name, DNS rebinding: what it resolves to can change after
// its registration was checked).
void Engine::ConnectAllowed(const ConnPtr& c, std::vector<tcp::endpoint> endpoints) {
  std::string refused;
  std::erase_if(endpoints, [&](const tcp::endpoint& endpoint) {
    const auto ok = settings_.guard->CheckSocketAddress(endpoint.data(), endpoint.size());
    if (!ok && refused.empty()) refused = ok.error().message;
    return !ok;
  });
  if (endpoints.empty()) {
    const auto& host = c->request->host;
    Fail(c, Delivery::kInvalid,
         net::ParseNumericHost(host)
             ? fmt::format("refused: {}", refused)
             : fmt::format("refused: {} resolves to no address the admin sends to: {}", host, refused));
    return;
  }
  asio::async_connect(c->Socket(), endpoints,
                      [this, c](const ErrorCode& e, const tcp::endpoint&) { Connected(c, e); });
}

ssl::context& Engine::TlsContext() {
  if (!tls_) {
    tls_.emplace(ssl::context::tls_client);
    tls_->set_default_verify_paths();
    tls_->set_verify_mode(ssl::verify_peer);
  }
  return *tls_;
}

// The handler of one asynchronous step of a busy connection: nothing once the client has closed it (a
// timeout or the shutdown failed its request already); on an error, the request fails with `delivery` and
// `what(error)` (users' words; the error's own text goes to the log); else `next`.
template <class What, class Next>
auto Engine::Step(const ConnPtr& c, Delivery delivery, What what, Next next) {
  return [this, c, delivery, what, next](const ErrorCode& e, auto&&... /*bytes*/) {
    if (c->closed) return;
    if (e) {
      const std::string text = what(e);
      Detail(*c->origin, *c->request, fmt::format("{} ({})", text, e.message()));
      Fail(c, delivery, text);
      return;
    }
    next(c);
  };
}

void Engine::Connected(const ConnPtr& c, const ErrorCode& e) {
  if (c->closed) return;
  if (e) {
    const auto text = fmt::format("not sent: the executor could not be reached ({})", Unreachable(e));
    Detail(*c->origin, *c->request, fmt::format("cannot connect: {}", e.message()));
    Fail(c, Delivery::kNotSent, text, FailureKind(e));
    return;
  }
  const auto now = clock_.SteadyNow();
  c->origin->policy.OnConnected(now, now - c->attempted, c->place);
  ErrorCode ignored;
  c->Socket().set_option(tcp::no_delay(true), ignored);
  if (c->tls) {
    Handshake(c);
  } else {
    Write(c);
  }
}

// The executor's certificate must be valid for the host the address names (SNI sends that host too).
void Engine::Handshake(const ConnPtr& c) {
  const auto& host = c->request->host;
  // SSL_set_tlsext_host_name, without the macro's C cast.
  if (SSL_ctrl(c->tls->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(host.c_str())) != 1) {
    Fail(c, Delivery::kNotSent, "not sent: TLS: the host name could not be set (SNI)");
    return;
  }
  c->tls->set_verify_callback(ssl::host_name_verification(host));
  c->tls->async_handshake(ssl::stream_base::client,
                          Step(
                              c, Delivery::kNotSent,
                              [](const ErrorCode&) {
                                return std::string(
                                    "not sent: the TLS handshake failed (is it an https executor with a "
                                    "certificate this host trusts?)");
                              },
                              [this](const ConnPtr& k) { Write(k); }));
}

void Engine::Write(const ConnPtr& c) {
  c->phase = Conn::Phase::kWriting;
  c->deadline = TransportClock::now() + settings_.read_timeout;
  // An HTTP server acts on a request only once it has read all of it: one not written whole was not sent.
  c->WithStream([&](auto& stream) {
    http::async_write(
        stream, c->request->message,
        Step(
            c, Delivery::kNotSent,
            [](const ErrorCode&) {
              return std::string("not sent: the connection closed while the request was written");
            },
            [this](const ConnPtr& k) { Read(k); }));
  });
}

void Engine::Read(const ConnPtr& c) {
  if (c->fresh) c->origin->policy.FirstWritten(c->Id(), clock_.SteadyNow());
  c->phase = Conn::Phase::kReading;
  c->deadline = TransportClock::now() + settings_.read_timeout;
  c->parser.emplace();
  c->parser->body_limit(kMaxAnswerBytes);
  c->WithStream([&](auto& stream) {
    http::async_read(stream, c->buffer, *c->parser,
                     Step(
                         c, Delivery::kUnknown,
                         [](const ErrorCode& e) {
                           return fmt::format(
                               "failed after it was sent ({}): the executor may have received it",
                               NoAnswer(e));
                         },
                         [this](const ConnPtr& k) { Answered(k); }));
  });
}

void Engine::Answered(const ConnPtr& c) {
  Origin& origin = *c->origin;
  auto answer = c->parser->release();
  c->parser.reset();
  const auto now = clock_.SteadyNow();
  const auto keep_alive_header = answer[http::field::keep_alive];
  if (const auto keep_alive =
          KeepAliveHeader(std::string_view(keep_alive_header.data(), keep_alive_header.size()))) {
    origin.policy.LearnKeepAlive(*keep_alive, now);
  }
  origin.policy.OnAnswered(now, c->fresh, now - c->attempted, answer.keep_alive());
  origin.policy.FirstOver(c->Id());
  c->fresh = false;
  // Bytes beyond the answer were never asked for: such a connection is not reused.
  const bool reusable = answer.keep_alive() && c->buffer.size() == 0;
  auto r = std::move(c->request);
  RemoveBusy(origin, *c);
  Release(origin, c, reusable, now);
  Pump(origin);
  // Anything but XXL-JOB's envelope: the user learns that much, the log what it was (see the header).
  const auto not_an_executor = [&](const std::string& detail) {
    Detail(origin, *r, detail);
    Finish(*r, {xxljob::Envelope::Fail(fmt::format(
                    "{}{} answered, but not as an XXL-JOB executor (is it the executor's address?)",
                    r->origin, r->path)),
                Delivery::kAnswered});
  };
  const unsigned status = answer.result_int();
  if (status != 200) {
    not_an_executor(fmt::format("answered HTTP {}", status));
    return;
  }
  auto envelope = xxljob::ParseEnvelope(answer.body());
  if (!envelope.ok()) {
    not_an_executor("response not understood: " + std::string(envelope.status().message()));
    return;
  }
  origin.failures.Success();
  Finish(*r, {std::move(*envelope), Delivery::kAnswered});
}

}  // namespace cronwheel::admin
