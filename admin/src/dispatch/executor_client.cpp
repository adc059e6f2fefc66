#include "admin/dispatch/executor_client.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <poll.h>

#include <algorithm>
#include <charconv>

#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {
namespace {

using std::chrono::milliseconds;

// New connections to one executor: at most kAttemptsPerWindow attempts started per kAttemptWindow, so a pool
// grows with demand (to 32 connections in 80 ms) but never sends more SYNs at once than a listen backlog of
// 5 takes.
constexpr milliseconds kAttemptWindow{5};
constexpr std::size_t kAttemptsPerWindow = 2;
// A new connection whose first request has had no answer for this long is taken to wait for a server thread
// of the executor (a thread-per-connection server holds one per open connection, idle ones included).
constexpr milliseconds kFirstRequestStall{20};

std::pair<time_t, time_t> SecUsec(milliseconds d) {
  return {static_cast<time_t>(d.count() / 1000), static_cast<time_t>((d.count() % 1000) * 1000)};
}

// Whether an idle keep-alive connection can no longer carry a request: readable means end of stream (the
// executor closed it), an error, or bytes nobody asked for; none leaves a connection to write into.
bool Unusable(const httplib::Client& client) {
  if (!client.is_socket_open()) return true;
  pollfd p{.fd = client.socket(), .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) != 0;
}

// The timeout of a "Keep-Alive: timeout=5, max=100" answer header (RFC 2068 §19.7.1.1), if any.
std::optional<milliseconds> KeepAliveHeader(const std::string& value) {
  const auto at = value.find("timeout=");
  if (at == std::string::npos) return std::nullopt;
  const char* begin = value.data() + at + 8;
  int seconds = 0;
  const auto [end, ec] = std::from_chars(begin, value.data() + value.size(), seconds);
  if (ec != std::errc() || end == begin || seconds <= 0) return std::nullopt;
  return milliseconds(std::int64_t{seconds} * 1000);
}

// Failures that happen before the request could reach the executor whole.
bool BeforeTheRequestArrived(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
    case httplib::Error::Write:
      return true;
    default:
      return false;
  }
}

}  // namespace

HttpExecutorClient::HttpExecutorClient(Settings settings, ringwheel::Clock& clock)
    : settings_(settings), clock_(clock), keeper_([this](const std::stop_token& stop) { Keep(stop); }) {}

void HttpExecutorClient::Keep(const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (first_requests_ == 0) {
      first_request_started_.wait(lock, stop, [this] { return first_requests_ > 0; });
      continue;
    }
    first_request_started_.wait_for(lock, stop, kFirstRequestStall / 2, [] { return false; });
    std::vector<std::unique_ptr<httplib::Client>> drop;
    const auto now = clock_.SteadyNow();
    for (auto& [name, origin] : origins_) {
      // One idle connection (the least recently used) closed for each stalled first request.
      while (!origin.idle.empty() && TakeStall(origin, now)) {
        drop.push_back(std::move(origin.idle.front().client));
        origin.idle.erase(origin.idle.begin());
        --origin.open;
        ++origin.stats.yielded;
      }
      origin.stats.open = origin.open;
    }
    if (!drop.empty()) {
      lock.unlock();
      drop.clear();
      lock.lock();
    }
  }
}
HttpExecutorClient::~HttpExecutorClient() = default;

HttpExecutorClient::Origin& HttpExecutorClient::OriginFor(const std::string& name) {
  std::lock_guard lock(mu_);
  return origins_[name];
}

milliseconds HttpExecutorClient::ReuseLimit(Origin& origin, ringwheel::SteadyTime now) const {
  if (origin.keep_alive && now - origin.keep_alive_learned > settings_.keep_alive_memory) {
    origin.keep_alive.reset();  // learn it again: the executor may have been reconfigured
  }
  if (!origin.keep_alive) return settings_.max_idle;
  return std::min(settings_.max_idle, *origin.keep_alive * 3 / 4);
}

bool HttpExecutorClient::TakeStall(Origin& origin, ringwheel::SteadyTime now) {
  for (auto& [started, compensated] : origin.first_requests) {
    if (now - started <= kFirstRequestStall) return false;  // ordered by start: the rest are younger
    if (!compensated) {
      compensated = true;
      return true;
    }
  }
  return false;
}

void HttpExecutorClient::Learn(Origin& origin, milliseconds keep_alive, ringwheel::SteadyTime now) {
  if (!origin.keep_alive || keep_alive < *origin.keep_alive) origin.keep_alive = keep_alive;
  origin.keep_alive_learned = now;
  origin.stats.keep_alive = origin.keep_alive;
}

HttpExecutorClient::Lease HttpExecutorClient::Acquire(Origin& origin, const std::string& name) {
  const auto cap = std::max<std::size_t>(settings_.max_connections_per_origin, 1);
  std::vector<std::unique_ptr<httplib::Client>> drop;  // closed after the lock is released
  std::unique_lock lock(mu_);
  const auto give_up = std::chrono::steady_clock::now() + settings_.connect_timeout;
  for (;;) {
    const auto now = clock_.SteadyNow();
    const auto limit = ReuseLimit(origin, now);
    // The least recently used sit at the front: close those idle past the limit.
    auto stale = origin.idle.begin();
    while (stale != origin.idle.end() && now - stale->last_used > limit) {
      drop.push_back(std::move(stale->client));
      ++stale;
    }
    const auto retired = static_cast<std::size_t>(stale - origin.idle.begin());
    origin.idle.erase(origin.idle.begin(), stale);
    origin.open -= retired;
    origin.stats.retired += retired;
    while (!origin.idle.empty()) {
      Connection c = std::move(origin.idle.back());
      origin.idle.pop_back();
      if (!Unusable(*c.client)) {
        ++origin.stats.reused;
        origin.stats.open = origin.open;
        return {std::move(c.client), false};
      }
      // The executor closed it while it sat idle: nothing was written to it. Its idle time bounds the
      // executor's keep-alive (a connection younger than the minimum: the executor restarted, say).
      --origin.open;
      ++origin.stats.found_closed;
      const auto idle = std::chrono::duration_cast<milliseconds>(now - c.last_used);
      if (idle >= settings_.min_keep_alive_observation) Learn(origin, idle, now);
      drop.push_back(std::move(c.client));
    }
    // Connection attempts: at most kAttemptsPerWindow started within kAttemptWindow.
    while (!origin.attempts.empty() && now - origin.attempts.front() >= kAttemptWindow)
      origin.attempts.pop_front();
    if (origin.open < cap && origin.attempts.size() < kAttemptsPerWindow) {
      origin.attempts.push_back(now);
      origin.first_requests.emplace(now, false);
      ++first_requests_;
      first_request_started_.notify_one();
      ++origin.open;
      ++origin.stats.opened;
      origin.stats.open = origin.open;
      origin.stats.most_open = std::max(origin.stats.most_open, origin.open);
      lock.unlock();
      drop.clear();
      return {NewClient(name), true, now};
    }
    // Wait for a connection to come back, a slot to free, or the attempt window to move on.
    auto wake = give_up;
    if (origin.open < cap && !origin.attempts.empty()) {
      wake =
          std::min(wake, std::chrono::steady_clock::now() + (origin.attempts.front() + kAttemptWindow - now));
    }
    origin.changed.wait_until(lock, wake);
    if (std::chrono::steady_clock::now() >= give_up) return {};
  }
}

void HttpExecutorClient::Release(Origin& origin, Lease lease, bool reusable) {
  std::unique_ptr<httplib::Client> drop;
  {
    std::lock_guard lock(mu_);
    if (lease.fresh) {
      origin.first_requests.erase(origin.first_requests.find(lease.started));
      --first_requests_;
    }
    // A new connection still waiting for its first answer may be queued behind this one at the executor:
    // close this one rather than pool it (once per stalled request), so the executor's thread goes to it.
    const bool yield = reusable && TakeStall(origin, clock_.SteadyNow());
    if (yield) ++origin.stats.yielded;
    if (reusable && !yield && lease.client->is_socket_open()) {
      origin.idle.push_back({std::move(lease.client), clock_.SteadyNow()});
    } else {
      drop = std::move(lease.client);
      --origin.open;
    }
    origin.stats.open = origin.open;
  }
  // A pooled connection or a free connection slot: either lets a waiter go on.
  origin.changed.notify_one();
}

std::unique_ptr<httplib::Client> HttpExecutorClient::NewClient(const std::string& origin) const {
  auto c = std::make_unique<httplib::Client>(origin);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  const auto [cs, cu] = SecUsec(settings_.connect_timeout);
  c->set_connection_timeout(cs, cu);
  const auto [rs, ru] = SecUsec(settings_.read_timeout);
  c->set_read_timeout(rs, ru);
  c->set_write_timeout(rs, ru);
  c->enable_server_certificate_verification(true);
  return c;
}

ExecutorClient::RunReply HttpExecutorClient::Post(const std::string& address, std::string_view method,
                                                  const std::string& token, const std::string& body) {
  std::string error;
  const auto addr = cronwheel::net::ParseHttpAddress(address, &error);
  if (!addr) return {xxljob::Envelope::Fail(error), Delivery::kInvalid};
  const auto path = addr->Path(method);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace(xxljob::kAccessTokenHeader, token);
  auto& origin = OriginFor(addr->origin);
  auto lease = Acquire(origin, addr->origin);
  if (!lease.client) {
    return {
        xxljob::Envelope::Fail(fmt::format(
            "request to {}{} not sent: all {} connections to it (executor_connections) stayed busy for {} ms",
            addr->origin, path, std::max<std::size_t>(settings_.max_connections_per_origin, 1),
            settings_.connect_timeout.count())),
        Delivery::kNotSent};
  }
  auto res = lease.client->Post(path, headers, body, "application/json;charset=UTF-8");
  if (!res) {
    const auto e = res.error();
    Release(origin, std::move(lease), false);  // its state is unknown: never reused
    if (BeforeTheRequestArrived(e)) {
      return {xxljob::Envelope::Fail(
                  fmt::format("request to {}{} not sent: {}", addr->origin, path, httplib::to_string(e))),
              Delivery::kNotSent};
    }
    return {xxljob::Envelope::Fail(fmt::format(
                "request to {}{} failed after it was sent ({}): the executor may have received it",
                addr->origin, path, httplib::to_string(e))),
            Delivery::kUnknown};
  }
  const int status = res->status;
  std::string response_body = std::move(res->body);
  if (const auto keep_alive = KeepAliveHeader(res->get_header_value("Keep-Alive"))) {
    std::lock_guard lock(mu_);
    Learn(origin, *keep_alive, clock_.SteadyNow());
  }
  Release(origin, std::move(lease), true);
  if (status != 200) {
    return {xxljob::Envelope::Fail(fmt::format("{}{} answered HTTP {}", addr->origin, path, status)),
            Delivery::kAnswered};
  }
  auto env = xxljob::ParseEnvelope(response_body, &error);
  if (!env) {
    return {
        xxljob::Envelope::Fail(fmt::format("{}{}: response not understood: {}", addr->origin, path, error)),
        Delivery::kAnswered};
  }
  return {std::move(*env), Delivery::kAnswered};
}

HttpExecutorClient::OriginStats HttpExecutorClient::Stats(const std::string& address) {
  const auto addr = cronwheel::net::ParseHttpAddress(address, nullptr);
  if (!addr) return {};
  std::lock_guard lock(mu_);
  const auto it = origins_.find(addr->origin);
  return it == origins_.end() ? OriginStats{} : it->second.stats;
}

HttpExecutorClient::OriginStats HttpExecutorClient::TotalStats() const {
  OriginStats total;
  std::lock_guard lock(mu_);
  for (const auto& [name, origin] : origins_) {
    total.opened += origin.stats.opened;
    total.reused += origin.stats.reused;
    total.found_closed += origin.stats.found_closed;
    total.retired += origin.stats.retired;
    total.yielded += origin.stats.yielded;
    total.open += origin.open;
  }
  return total;
}

ExecutorClient::RunReply HttpExecutorClient::Run(const std::string& address, const std::string& token,
                                                 const xxljob::TriggerParam& param) {
  return Post(address, "run", token, xxljob::ToJson(param).dump());
}

xxljob::Envelope HttpExecutorClient::Beat(const std::string& address, const std::string& token) {
  return Post(address, "beat", token, "{}").envelope;
}

xxljob::Envelope HttpExecutorClient::IdleBeat(const std::string& address, const std::string& token,
                                              int job_id) {
  return Post(address, "idleBeat", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump()).envelope;
}

xxljob::Envelope HttpExecutorClient::Kill(const std::string& address, const std::string& token, int job_id) {
  return Post(address, "kill", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump()).envelope;
}

xxljob::Envelope HttpExecutorClient::Log(const std::string& address, const std::string& token,
                                         const xxljob::LogParam& param) {
  return Post(address, "log", token, xxljob::ToJson(param).dump()).envelope;
}

}  // namespace cronwheel::admin
