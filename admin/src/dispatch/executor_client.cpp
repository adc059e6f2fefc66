#include "admin/dispatch/executor_client.hpp"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cronwheel/net/address_allow_list.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/throttled_log.hpp"

namespace cronwheel::admin {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using ErrorCode = boost::system::error_code;
// Transport deadlines (connect, write, read, the wait for a free connection) run on the real steady clock.
using TransportClock = std::chrono::steady_clock;

// New connections to one executor: at most kAttemptsPerWindow attempts started per kAttemptWindow (over all
// of the client's threads), so a pool grows with demand (to 32 connections in 80 ms) but never sends more
// SYNs at once than a listen backlog of 5 takes.
constexpr milliseconds kAttemptWindow{5};
constexpr std::size_t kAttemptsPerWindow = 2;
// A new connection is opened only for a request that has waited this long for a free one (or when there is
// none at all): a burst that the open connections carry away in a few round trips opens no more, so the pool
// follows the concurrency the executor needs rather than growing to the cap whenever a queue forms (a
// thread-per-connection executor gives every open connection one of its threads).
constexpr milliseconds kGrowAfter{2};
// A new connection whose first request has had no answer for this long is taken to wait for a server thread
// of the executor (a thread-per-connection server holds one per open connection, idle ones included).
constexpr milliseconds kFirstRequestStall{20};
// While anything is waiting or in flight, the client's thread looks this often at its deadlines (timeouts,
// waits for a connection, stalled first requests) and at the attempt window.
constexpr milliseconds kTick{5};
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

// An address as the registration guard reads it: IPv6 without its scope ("fe80::1%eth0" is fe80::1).
std::string IpText(const asio::ip::address& a) {
  if (!a.is_v6()) return a.to_string();
  auto v6 = a.to_v6();
  v6.scope_id(0);
  return v6.to_string();
}

}  // namespace

// One of the client's threads and the connections it runs: its share of every executor's connections
// (`settings.max_connections_per_origin` is that share) and of the connection attempts. Everything below runs
// on its thread (`io_`), but Submit, Load, Stats, Total and the destructor.
class HttpExecutorClient::Engine {
 public:
  // One request: built (and its body serialised) on the caller's thread, then handed to the client's thread.
  struct Request {
    std::string origin;  // the pool it goes through: scheme://host[:port]
    std::string host;
    int port = 0;
    bool tls = false;
    std::string path;  // for messages
    http::request<http::string_body> message;
    ExecutorClient::RunDone done;
    TransportClock::time_point give_up;  // the wait for a free connection ends here
    ringwheel::SteadyTime queued{};      // when it started waiting for one
  };

  // `attempts`: connection attempts it may start per kAttemptWindow to one executor; `configured`: the
  // client's whole executor_connections (for messages).
  Engine(Settings settings, std::size_t attempts, std::size_t configured, ringwheel::Clock& clock)
      : settings_(std::move(settings)),
        attempts_per_window_(attempts),
        configured_connections_(configured),
        clock_(clock),
        work_(asio::make_work_guard(io_)),
        tick_(io_),
        resolver_(io_) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Engine() {
    asio::post(io_, [this] { Shutdown(); });
    thread_.join();
    // Requests handed over while the thread was stopping are failed here rather than never answered.
    io_.restart();
    io_.poll();
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Any thread.
  void Submit(std::unique_ptr<Request> request) {
    ++load_;
    asio::post(io_, [this, r = std::move(request)]() mutable { Enqueue(std::move(r)); });
  }
  [[nodiscard]] bool OnOwnThread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Requests handed to it and not finished yet.
  [[nodiscard]] std::size_t Load() const { return load_.load(std::memory_order_relaxed); }
  [[nodiscard]] OriginStats Stats(const std::string& origin) const {
    std::lock_guard lock(stats_mu_);
    const auto it = stats_.find(origin);
    return it == stats_.end() ? OriginStats{} : it->second;
  }
  [[nodiscard]] OriginStats Total() const {
    OriginStats total;
    std::lock_guard lock(stats_mu_);
    for (const auto& [name, s] : stats_)
      Add(total, s);
    return total;
  }

 private:
  struct Origin;
  struct Conn {
    enum class Phase { kConnecting, kWriting, kReading, kIdle };
    Origin* origin = nullptr;
    std::optional<tcp::socket> plain;
    std::optional<ssl::stream<tcp::socket>> tls;
    Phase phase = Phase::kConnecting;
    bool fresh = true;         // its first request has not been answered yet
    bool awaited = false;      // fresh, written, and in origin->first_requests (at `first_request`)
    bool compensated = false;  // an idle connection was closed for it (a stall counts once)
    bool closed = false;       // closed by the client: handlers still pending return at once
    ringwheel::SteadyTime last_used{};
    std::multimap<ringwheel::SteadyTime, Conn*>::iterator first_request;  // valid while `awaited`
    TransportClock::time_point deadline{};
    std::size_t busy_at = 0;  // index in origin->busy while busy
    std::unique_ptr<Request> request;
    boost::beast::flat_buffer buffer;
    std::optional<http::response_parser<http::string_body>> parser;

    tcp::socket& Socket() { return tls ? tls->next_layer() : *plain; }
    // Calls f with the stream requests go through (the TLS stream or the socket).
    template <class F>
    void WithStream(F&& f) {
      if (tls) {
        std::forward<F>(f)(*tls);
      } else {
        std::forward<F>(f)(*plain);
      }
    }
  };
  using ConnPtr = std::shared_ptr<Conn>;
  struct Origin {
    std::string name;
    std::vector<ConnPtr> idle;  // least recently used first
    std::vector<ConnPtr> busy;  // connecting or carrying a request
    std::deque<std::unique_ptr<Request>> waiting;
    std::size_t open = 0;                        // idle + busy
    std::deque<ringwheel::SteadyTime> attempts;  // when the recent connection attempts started
    // New connections whose first request is written and its answer awaited, by when it was written.
    std::multimap<ringwheel::SteadyTime, Conn*> first_requests;
    std::optional<milliseconds> keep_alive;
    ringwheel::SteadyTime keep_alive_learned{};
    OriginStats* stats = nullptr;  // its entry in stats_, written under stats_mu_
    ThrottledLog failures;         // what failed, in detail, for the admin's log
  };

  // Logs what went wrong with a request in detail (users see less, see the header): once per streak of
  // failures to this executor, then at most once a minute.
  void Detail(Origin& origin, const Request& r, std::string_view detail) {
    if (const auto n = origin.failures.Failure(clock_.SteadyNow())) {
      spdlog::warn("request to {}{}: {} ({} failure(s) to it in a row)", r.origin, r.path, detail, *n);
    }
  }

  template <class F>
  void Count(Origin& o, F&& f) {
    std::lock_guard lock(stats_mu_);
    std::forward<F>(f)(*o.stats);
    o.stats->open = o.open;
    o.stats->waiting = o.waiting.size();
  }

  Origin& OriginFor(const std::string& name) {
    auto [it, added] = origins_.try_emplace(name);
    if (added) {
      it->second.name = name;
      std::lock_guard lock(stats_mu_);
      it->second.stats = &stats_[name];  // node-based: the address stays valid
    }
    return it->second;
  }

  void Enqueue(std::unique_ptr<Request> r) {
    if (stopping_) {
      Complete(*r, Failure(*r, "not sent: the admin is shutting down"), Delivery::kNotSent);
      return;
    }
    Origin& origin = OriginFor(r->origin);
    r->give_up = TransportClock::now() + settings_.connect_timeout;
    r->queued = clock_.SteadyNow();
    origin.waiting.push_back(std::move(r));
    ++pending_;
    Pump(origin);
    Count(origin, [](OriginStats&) {});
    ArmTick();
  }

  std::unique_ptr<Request> PopWaiting(Origin& origin) {
    auto r = std::move(origin.waiting.front());
    origin.waiting.pop_front();
    --pending_;
    return r;
  }

  // Starts the waiting requests on idle connections or new ones, as far as the pool allows.
  void Pump(Origin& origin) {
    const auto cap = std::max<std::size_t>(settings_.max_connections_per_origin, 1);
    while (!origin.waiting.empty()) {
      const auto now = clock_.SteadyNow();
      RetireStale(origin, now);
      if (auto c = TakeIdle(origin, now)) {
        c->fresh = false;
        c->request = PopWaiting(origin);
        AddBusy(origin, c);
        Write(c);
        continue;
      }
      while (!origin.attempts.empty() && now - origin.attempts.front() >= kAttemptWindow)
        origin.attempts.pop_front();
      // The tick comes back to these.
      if (origin.open >= cap || origin.attempts.size() >= attempts_per_window_) return;
      if (origin.open > 0 && now - origin.waiting.front()->queued < kGrowAfter) return;
      Open(origin, PopWaiting(origin), now);
    }
  }

  // Call with the origin's state: the reuse limit of its connections now.
  milliseconds ReuseLimit(Origin& origin, ringwheel::SteadyTime now) const {
    if (origin.keep_alive && now - origin.keep_alive_learned > settings_.keep_alive_memory) {
      origin.keep_alive.reset();  // learn it again: the executor may have been reconfigured
    }
    if (!origin.keep_alive) return settings_.max_idle;
    return std::min(settings_.max_idle, *origin.keep_alive * 3 / 4);
  }

  void Learn(Origin& origin, milliseconds keep_alive, ringwheel::SteadyTime now) {
    if (!origin.keep_alive || keep_alive < *origin.keep_alive) origin.keep_alive = keep_alive;
    origin.keep_alive_learned = now;
    Count(origin, [&](OriginStats& s) { s.keep_alive = origin.keep_alive; });
  }

  // The least recently used idle connections sit at the front: closes those idle past the limit.
  void RetireStale(Origin& origin, ringwheel::SteadyTime now) {
    const auto limit = ReuseLimit(origin, now);
    std::size_t retired = 0;
    while (retired < origin.idle.size() && now - origin.idle[retired]->last_used > limit) {
      Close(*origin.idle[retired]);
      ++retired;
    }
    if (retired == 0) return;
    origin.idle.erase(origin.idle.begin(), origin.idle.begin() + static_cast<std::ptrdiff_t>(retired));
    origin.open -= retired;
    Count(origin, [&](OriginStats& s) { s.retired += retired; });
  }

  // Whether an idle keep-alive connection can no longer carry a request: readable means end of stream (the
  // executor closed it), an error, or bytes nobody asked for; none leaves a connection to write into.
  static bool Unusable(Conn& c) { return !c.Socket().is_open() || Readable(c); }

  // The most recently used idle connection the executor still holds open, if any.
  ConnPtr TakeIdle(Origin& origin, ringwheel::SteadyTime now) {
    while (!origin.idle.empty()) {
      ConnPtr c = std::move(origin.idle.back());
      origin.idle.pop_back();
      if (!Unusable(*c)) {
        Count(origin, [](OriginStats& s) { ++s.reused; });
        return c;
      }
      // The executor closed it while it sat idle: nothing was written to it. Its idle time bounds the
      // executor's keep-alive (a connection younger than the minimum: the executor restarted, say).
      Close(*c);
      --origin.open;
      Count(origin, [](OriginStats& s) { ++s.found_closed; });
      const auto idle = std::chrono::duration_cast<milliseconds>(now - c->last_used);
      if (idle >= settings_.min_keep_alive_observation) Learn(origin, idle, now);
    }
    return nullptr;
  }

  void AddBusy(Origin& origin, const ConnPtr& c) {
    c->busy_at = origin.busy.size();
    origin.busy.push_back(c);
    ++pending_;
  }
  void RemoveBusy(Origin& origin, Conn& c) {
    auto& busy = origin.busy;
    busy.back()->busy_at = c.busy_at;
    std::swap(busy[c.busy_at], busy.back());
    busy.pop_back();
    --pending_;
  }

  // Marks the oldest first request stalled past kFirstRequestStall that no closed connection has made up
  // for yet; false when there is none. An answer already waiting in the socket is no stall (the client's
  // own thread was late, not the executor): only a connection with nothing to read counts.
  static bool TakeStall(Origin& origin, ringwheel::SteadyTime now) {
    for (auto& [written, c] : origin.first_requests) {
      if (now - written <= kFirstRequestStall) return false;  // ordered by time: the rest are younger
      if (!c->compensated && !Readable(*c)) {
        c->compensated = true;
        return true;
      }
    }
    return false;
  }
  static bool Readable(Conn& c) {
    pollfd p{.fd = c.Socket().native_handle(), .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, 0) != 0;
  }
  // A fresh connection's first request is written: from now on its answer is awaited.
  static void AwaitFirst(Origin& origin, Conn& c, ringwheel::SteadyTime now) {
    c.first_request = origin.first_requests.emplace(now, &c);
    c.awaited = true;
  }
  static void FirstAnswered(Origin& origin, Conn& c) {
    if (c.awaited) origin.first_requests.erase(c.first_request);
    c.awaited = false;
    c.fresh = false;
  }

  void Open(Origin& origin, std::unique_ptr<Request> r, ringwheel::SteadyTime now) {
    origin.attempts.push_back(now);
    ++origin.open;
    Count(origin, [&](OriginStats& s) {
      ++s.opened;
      s.most_open = std::max(s.most_open, origin.open);
    });
    auto c = std::make_shared<Conn>();
    c->origin = &origin;
    c->request = std::move(r);
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
      c->Socket().async_connect(tcp::endpoint(ip, static_cast<std::uint16_t>(c->request->port)),
                                [this, c](const ErrorCode& e) { Connected(c, e); });
      return;
    }
    resolver_.async_resolve(c->request->host, std::to_string(c->request->port),
                            [this, c](const ErrorCode& e, const tcp::resolver::results_type& found) {
                              if (c->closed) return;
                              if (e) {
                                Connected(c, e);
                                return;
                              }
                              Resolved(c, found);
                            });
  }

  // A host name resolved: connects to the addresses the registration guard allows, now (DNS rebinding: what
  // a name resolves to can change after its registration was checked).
  void Resolved(const ConnPtr& c, const tcp::resolver::results_type& found) {
    std::vector<tcp::endpoint> allowed;
    std::string refused;
    for (const auto& entry : found) {
      const auto& endpoint = entry.endpoint();
      if (settings_.guard) {
        if (auto why = settings_.guard->CheckEndpoint(IpText(endpoint.address()), endpoint.port())) {
          if (refused.empty()) refused = std::move(*why);
          continue;
        }
      }
      allowed.push_back(endpoint);
    }
    if (allowed.empty()) {
      Fail(c, Delivery::kInvalid,
           fmt::format("refused: {} resolves to no address the admin sends to: {}", c->request->host,
                       refused));
      return;
    }
    asio::async_connect(c->Socket(), allowed,
                        [this, c](const ErrorCode& e, const tcp::endpoint&) { Connected(c, e); });
  }

  ssl::context& TlsContext() {
    if (!tls_) {
      tls_.emplace(ssl::context::tls_client);
      tls_->set_default_verify_paths();
      tls_->set_verify_mode(ssl::verify_peer);
    }
    return *tls_;
  }

  // The handler of one asynchronous step of a busy connection: nothing once the client has closed it (a
  // timeout or the shutdown failed its request already); on an error, the request fails with `delivery`
  // and `what(error)` (users' words; the error's own text goes to the log); else `next`.
  template <class What, class Next>
  auto Step(const ConnPtr& c, Delivery delivery, What what, Next next) {
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

  void Connected(const ConnPtr& c, const ErrorCode& e) {
    if (c->closed) return;
    const auto& r = *c->request;
    if (e) {
      const auto text = fmt::format("not sent: the executor could not be reached ({})", Unreachable(e));
      Detail(*c->origin, r, fmt::format("cannot connect: {}", e.message()));
      Fail(c, Delivery::kNotSent, text);
      return;
    }
    ErrorCode ignored;
    c->Socket().set_option(tcp::no_delay(true), ignored);
    if (!c->tls) {
      Write(c);
      return;
    }
    // The executor's certificate must be valid for the host the address names (SNI sends that host too).
    // (SSL_set_tlsext_host_name, without the macro's C cast.)
    if (SSL_ctrl(c->tls->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(r.host.c_str())) != 1) {
      Fail(c, Delivery::kNotSent, "not sent: TLS: the host name could not be set (SNI)");
      return;
    }
    c->tls->set_verify_callback(ssl::host_name_verification(r.host));
    c->tls->async_handshake(
        ssl::stream_base::client,
        Step(
            c, Delivery::kNotSent,
            [](const ErrorCode&) {
              return std::string(
                  "not sent: the TLS handshake failed (is it an https executor with a certificate "
                  "this host trusts?)");
            },
            [this](const ConnPtr& k) { Write(k); }));
  }

  void Write(const ConnPtr& c) {
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

  void Read(const ConnPtr& c) {
    if (c->fresh) AwaitFirst(*c->origin, *c, clock_.SteadyNow());
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

  void Answered(const ConnPtr& c) {
    Origin& origin = *c->origin;
    auto answer = c->parser->release();
    c->parser.reset();
    const auto now = clock_.SteadyNow();
    const auto keep_alive_header = answer[http::field::keep_alive];
    if (const auto keep_alive =
            KeepAliveHeader(std::string_view(keep_alive_header.data(), keep_alive_header.size()))) {
      Learn(origin, *keep_alive, now);
    }
    // Bytes beyond the answer were never asked for: such a connection is not reused.
    const bool reusable = answer.keep_alive() && c->buffer.size() == 0;
    auto r = std::move(c->request);
    RemoveBusy(origin, *c);
    Release(origin, c, reusable, now);
    Pump(origin);
    // Anything but XXL-JOB's envelope: the user learns that much, the log what it was (see the header).
    const auto not_an_executor = [&](const std::string& detail) {
      Detail(origin, *r, detail);
      Complete(*r,
               xxljob::Envelope::Fail(fmt::format(
                   "{}{} answered, but not as an XXL-JOB executor (is it the executor's address?)", r->origin,
                   r->path)),
               Delivery::kAnswered);
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

  // Gives an answered connection back: pooled if it is still open and `reusable`, else closed.
  void Release(Origin& origin, const ConnPtr& c, bool reusable, ringwheel::SteadyTime now) {
    FirstAnswered(origin, *c);
    // A new connection still waiting for its first answer may be queued behind this one at the executor:
    // close this one rather than pool it (once per stalled request), so the executor's thread goes to it.
    const bool yield = reusable && TakeStall(origin, now);
    if (reusable && !yield && c->Socket().is_open()) {
      c->phase = Conn::Phase::kIdle;
      c->last_used = now;
      origin.idle.push_back(c);
      Count(origin, [](OriginStats&) {});
      return;
    }
    Close(*c);
    --origin.open;
    Count(origin, [&](OriginStats& s) { s.yielded += yield ? 1 : 0; });
  }

  // A busy connection failed: closed, never reused; the pool goes on without it.
  void Fail(const ConnPtr& c, Delivery delivery, const std::string& what) {
    Origin& origin = *c->origin;
    auto r = std::move(c->request);
    FirstAnswered(origin, *c);
    Close(*c);
    RemoveBusy(origin, *c);
    --origin.open;
    Count(origin, [](OriginStats&) {});
    Pump(origin);
    Complete(*r, Failure(*r, what), delivery);
  }

  static void Close(Conn& c) {
    c.closed = true;
    ErrorCode ignored;
    c.Socket().shutdown(tcp::socket::shutdown_both, ignored);
    c.Socket().close(ignored);
  }

  // "request to <origin><path> not sent: ..." / "... failed after it was sent ...".
  static xxljob::Envelope Failure(const Request& r, std::string_view what) {
    return xxljob::Envelope::Fail(fmt::format("request to {}{} {}", r.origin, r.path, what));
  }
  void Complete(Request& r, xxljob::Envelope envelope, Delivery delivery) {
    Finish(r, {std::move(envelope), delivery});
  }
  void Finish(Request& r, RunReply reply) {
    --load_;
    auto done = std::move(r.done);
    if (!done) return;
    try {
      done(std::move(reply));
    } catch (const std::exception& e) {
      spdlog::error("the handler of an answer from {}{} threw: {}", r.origin, r.path, e.what());
    }
  }

  void ArmTick() {
    if (ticking_ || pending_ == 0) return;
    ticking_ = true;
    tick_.expires_after(kTick);
    tick_.async_wait([this](const ErrorCode& e) {
      ticking_ = false;
      if (!e) Tick();
    });
  }

  // The deadlines: timeouts, waits for a free connection, stalled first requests; then the pools go on
  // (the attempt window may have moved).
  void Tick() {
    const auto real_now = TransportClock::now();
    const auto now = clock_.SteadyNow();
    for (auto& [name, origin] : origins_) {
      std::vector<ConnPtr> late;
      for (const auto& c : origin.busy) {
        if (real_now >= c->deadline) late.push_back(c);
      }
      for (const auto& c : late)
        TimedOut(c);
      while (!origin.waiting.empty() && real_now >= origin.waiting.front()->give_up) {
        auto r = PopWaiting(origin);
        Count(origin, [](OriginStats&) {});
        Complete(
            *r,
            Failure(*r, fmt::format("not sent: all {} connections to it (executor_connections) stayed busy "
                                    "for {} ms",
                                    configured_connections_, settings_.connect_timeout.count())),
            Delivery::kNotSent);
      }
      // One idle connection (the least recently used) closed for each stalled first request.
      while (!origin.idle.empty() && TakeStall(origin, now)) {
        Close(*origin.idle.front());
        origin.idle.erase(origin.idle.begin());
        --origin.open;
        Count(origin, [](OriginStats& s) { ++s.yielded; });
      }
      Pump(origin);
    }
    ArmTick();
  }

  void TimedOut(const ConnPtr& c) {
    switch (c->phase) {
      case Conn::Phase::kConnecting:
        Fail(c, Delivery::kNotSent,
             fmt::format("not sent: the executor could not be reached (no connection within {} ms)",
                         settings_.connect_timeout.count()));
        return;
      case Conn::Phase::kWriting:
        Fail(c, Delivery::kNotSent,
             fmt::format("not sent: not written within {} ms", settings_.read_timeout.count()));
        return;
      case Conn::Phase::kReading:
        Fail(c, Delivery::kUnknown,
             fmt::format(
                 "failed after it was sent (no answer within {} ms): the executor may have received it",
                 settings_.read_timeout.count()));
        return;
      case Conn::Phase::kIdle:
        return;
    }
  }

  void Shutdown() {
    stopping_ = true;
    for (auto& [name, origin] : origins_) {
      while (!origin.waiting.empty()) {
        auto r = PopWaiting(origin);
        Complete(*r, Failure(*r, "not sent: the admin is shutting down"), Delivery::kNotSent);
      }
      const auto busy = origin.busy;
      for (const auto& c : busy) {
        const bool sent = c->phase == Conn::Phase::kReading;
        Fail(c, sent ? Delivery::kUnknown : Delivery::kNotSent,
             sent ? "failed after it was sent (the admin is shutting down): the executor may have received it"
                  : "not sent: the admin is shutting down");
      }
      for (const auto& c : origin.idle)
        Close(*c);
      origin.idle.clear();
    }
    resolver_.cancel();
    tick_.cancel();
    work_.reset();
  }

  Settings settings_;
  std::size_t attempts_per_window_;
  std::size_t configured_connections_;
  ringwheel::Clock& clock_;
  std::atomic<std::size_t> load_{0};
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer tick_;
  tcp::resolver resolver_;
  std::optional<ssl::context> tls_;  // made on the first https origin
  bool ticking_ = false;
  bool stopping_ = false;
  std::size_t pending_ = 0;  // requests waiting or in flight, over all origins (the tick runs while any is)
  // std::unordered_map keeps references to its elements valid across rehashing; entries are never erased.
  std::unordered_map<std::string, Origin> origins_;
  mutable std::mutex stats_mu_;
  std::unordered_map<std::string, OriginStats> stats_;
  std::thread thread_;  // last: started once everything above exists
};

HttpExecutorClient::HttpExecutorClient(const Settings& settings, ringwheel::Clock& clock)
    : guard_(settings.guard) {
  // Each thread runs its share of every executor's connections: no more threads than connections, and the
  // shares add up to executor_connections exactly.
  const auto cap = std::max<std::size_t>(settings.max_connections_per_origin, 1);
  const auto n = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(settings.threads, 1)), 1, cap);
  const auto attempts = std::max<std::size_t>(kAttemptsPerWindow / n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    Settings share = settings;
    share.max_connections_per_origin = cap / n + (i < cap % n ? 1 : 0);
    engines_.push_back(std::make_unique<Engine>(std::move(share), attempts, cap, clock));
  }
}

HttpExecutorClient::~HttpExecutorClient() = default;

void HttpExecutorClient::Post(const std::string& address, const char* method, const std::string& token,
                              std::string body, RunDone done) {
  const auto addr = cronwheel::net::ParseHttpAddress(address);
  if (!addr.ok()) {
    done({xxljob::Envelope::Fail(addr.status()), Delivery::kInvalid});
    return;
  }
  if (guard_ && cronwheel::net::ParseIpAddress(addr->host)) {
    if (auto why = guard_->CheckEndpoint(addr->host, addr->port)) {
      done({xxljob::Envelope::Fail(
                fmt::format("request to {}{} refused: {}", addr->origin, addr->Path(method), *why)),
            Delivery::kInvalid});
      return;
    }
  }
  auto r = std::make_unique<Engine::Request>();
  r->origin = addr->origin;
  r->host = addr->host;
  r->port = addr->port;
  r->tls = addr->origin.starts_with("https://");
  r->path = addr->Path(method);
  auto& m = r->message;
  m.method(http::verb::post);
  m.target(r->path);
  m.version(11);
  m.set(http::field::host, addr->origin.substr(addr->origin.find("://") + 3));
  m.set(http::field::user_agent, "cronwheel-admin");
  m.set(http::field::content_type, "application/json;charset=UTF-8");
  if (!token.empty()) m.set(xxljob::kAccessTokenHeader, token);
  m.body() = std::move(body);
  m.prepare_payload();
  r->done = std::move(done);
  // The least loaded thread: a burst is spread over all of them, a lone request (a probe, a test) always
  // goes through the first and so finds its pooled connections.
  Engine* least = engines_.front().get();
  for (const auto& e : engines_) {
    if (e->Load() < least->Load()) least = e.get();
  }
  least->Submit(std::move(r));
}

ExecutorClient::RunReply HttpExecutorClient::PostAndWait(const std::string& address, const char* method,
                                                         const std::string& token, std::string body) {
  if (std::any_of(engines_.begin(), engines_.end(), [](const auto& e) { return e->OnOwnThread(); })) {
    return {xxljob::Envelope::Fail(fmt::format("request to {} {} not sent: a waiting call was made on the "
                                               "executor client's own thread",
                                               address, method)),
            Delivery::kNotSent};
  }
  std::promise<RunReply> answered;
  auto reply = answered.get_future();
  Post(address, method, token, std::move(body),
       [&answered](RunReply r) { answered.set_value(std::move(r)); });
  return reply.get();
}

void HttpExecutorClient::RunAsync(const std::string& address, const std::string& token,
                                  const xxljob::TriggerParam& param, RunDone done) {
  Post(address, "run", token, xxljob::ToJson(param).dump(), std::move(done));
}

ExecutorClient::RunReply HttpExecutorClient::Run(const std::string& address, const std::string& token,
                                                 const xxljob::TriggerParam& param) {
  return PostAndWait(address, "run", token, xxljob::ToJson(param).dump());
}

xxljob::Envelope HttpExecutorClient::Beat(const std::string& address, const std::string& token) {
  return PostAndWait(address, "beat", token, "{}").envelope;
}

xxljob::Envelope HttpExecutorClient::IdleBeat(const std::string& address, const std::string& token,
                                              int job_id) {
  return PostAndWait(address, "idleBeat", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump()).envelope;
}

xxljob::Envelope HttpExecutorClient::Kill(const std::string& address, const std::string& token, int job_id) {
  return PostAndWait(address, "kill", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump()).envelope;
}

xxljob::Envelope HttpExecutorClient::Log(const std::string& address, const std::string& token,
                                         const xxljob::LogParam& param) {
  return PostAndWait(address, "log", token, xxljob::ToJson(param).dump()).envelope;
}

HttpExecutorClient::OriginStats HttpExecutorClient::Stats(const std::string& address) const {
  const auto addr = cronwheel::net::ParseHttpAddress(address);
  if (!addr.ok()) return {};
  OriginStats total;
  for (const auto& e : engines_)
    Add(total, e->Stats(addr->origin));
  return total;
}

HttpExecutorClient::OriginStats HttpExecutorClient::TotalStats() const {
  OriginStats total;
  for (const auto& e : engines_)
    Add(total, e->Total());
  total.most_open = 0;
  total.keep_alive.reset();
  return total;
}

void HttpExecutorClient::Add(OriginStats& total, const OriginStats& share) {
  total.opened += share.opened;
  total.reused += share.reused;
  total.found_closed += share.found_closed;
  total.retired += share.retired;
  total.yielded += share.yielded;
  total.open += share.open;
  total.most_open += share.most_open;  // an upper bound: the threads' peaks need not coincide
  total.waiting += share.waiting;
  if (share.keep_alive && (!total.keep_alive || *share.keep_alive < *total.keep_alive)) {
    total.keep_alive = share.keep_alive;
  }
}

}  // namespace cronwheel::admin
