#include "cronwheel/net/http_server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <stdexcept>

#include "cronwheel/mutex.hpp"
#include "net/http_session.hpp"

namespace cronwheel::net {

using detail::RouteEntry;

namespace {

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
  std::shared_ptr<Session> victim;
  std::shared_ptr<Session> session;
  {
    cronwheel::MutexLock lock(mu);
    const auto admission = quota->Open(address, std::chrono::steady_clock::now());
    if (!admission.admitted) {
      ++refused;
      // Best effort, without waiting: the peer learns why instead of seeing a reset.
      static constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 33\r\n"
          "Connection: close\r\n\r\ntoo many connections: try later\r\n";
      ::send(socket.native_handle(), kBusy.data(), kBusy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      socket.close(addr_ec);
      return;
    }
    if (admission.evicted) {
      ++evicted;
      if (const auto it = sessions.find(*admission.evicted); it != sessions.end()) victim = it->second.lock();
    }
    ++accepted;
    session = std::make_shared<Session>(*this, std::move(socket), admission.id, address, peer.port());
    sessions.emplace(admission.id, session);
  }
  // Outside the lock: the last reference to a session may be dropped here, and its destructor takes it.
  if (victim) victim->ForceClose();
  session->Start();
}

void HttpServer::Impl::Closed(ConnectionQuota::Id id) {
  cronwheel::MutexLock lock(mu);
  sessions.erase(id);
  quota->Close(id);
  if (sessions.empty()) all_closed.notify_all();
}

void HttpServer::Impl::Idle(ConnectionQuota::Id id) {
  cronwheel::MutexLock lock(mu);
  quota->Idle(id, std::chrono::steady_clock::now());
}

void HttpServer::Impl::Busy(ConnectionQuota::Id id) {
  cronwheel::MutexLock lock(mu);
  quota->Busy(id, std::chrono::steady_clock::now());
}

bool HttpServer::Impl::Authenticate(ConnectionQuota::Id id) {
  cronwheel::MutexLock lock(mu);
  return quota->Authenticate(id);
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
  {
    // No connection exists yet; the lock is the quota's rule all the same (uncontended, once).
    const cronwheel::MutexLock lock(s.mu);
    s.quota.emplace(ConnectionLimits{
        .max_connections = s.settings.max_connections,
        .max_authenticated_per_address = s.settings.max_connections_per_address,
        .max_unauthenticated = s.settings.max_unauthenticated_connections,
        .max_unauthenticated_per_address = s.settings.max_unauthenticated_connections_per_address});
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
    cronwheel::MutexLock lock(s.mu);
    for (auto& [raw, weak] : s.sessions)
      if (auto session = weak.lock()) out.push_back(std::move(session));
    return out;
  };
  for (auto& session : sessions())
    session->Shutdown();
  {
    cronwheel::MutexLock lock(s.mu);
    s.all_closed.wait_for(lock.native(), grace,
                          [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.sessions.empty(); });
  }
  for (auto& session : sessions())
    session->ForceClose();
  {
    cronwheel::MutexLock lock(s.mu);
    s.all_closed.wait_for(lock.native(), std::chrono::seconds(5),
                          [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.sessions.empty(); });
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
                      .evicted = impl_->evicted,
                      .requests = impl_->requests,
                      .timed_out = impl_->timed_out};
  cronwheel::MutexLock lock(impl_->mu);
  out.open = impl_->sessions.size();
  return out;
}

}  // namespace cronwheel::net
