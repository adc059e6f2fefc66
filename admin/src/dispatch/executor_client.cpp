#include "admin/dispatch/executor_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>

#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {
namespace {

std::pair<time_t, time_t> SecUsec(std::chrono::milliseconds d) {
  return {static_cast<time_t>(d.count() / 1000), static_cast<time_t>((d.count() % 1000) * 1000)};
}

}  // namespace

HttpExecutorClient::HttpExecutorClient(Settings settings, ringwheel::Clock& clock)
    : settings_(settings), clock_(clock) {}
HttpExecutorClient::~HttpExecutorClient() = default;

HttpExecutorClient::Origin& HttpExecutorClient::OriginFor(const std::string& name) {
  std::lock_guard lock(mu_);
  return origins_[name];
}

bool HttpExecutorClient::Acquire(Origin& origin) {
  const auto max = std::max<std::size_t>(settings_.max_connections_per_origin, 1);
  std::unique_lock lock(mu_);
  if (!origin.freed.wait_for(lock, settings_.connect_timeout, [&] { return origin.in_flight < max; }))
    return false;
  ++origin.in_flight;
  return true;
}

void HttpExecutorClient::Release(Origin& origin) {
  {
    std::lock_guard lock(mu_);
    --origin.in_flight;
  }
  origin.freed.notify_one();
}

std::unique_ptr<httplib::Client> HttpExecutorClient::Borrow(Origin& origin, const std::string& name,
                                                            bool* reused) {
  const auto now = clock_.SteadyNow();
  std::vector<std::unique_ptr<httplib::Client>> stale;  // closed outside the lock
  {
    std::lock_guard lock(mu_);
    auto& idle = origin.idle;
    while (!idle.empty()) {
      auto entry = std::move(idle.back());
      idle.pop_back();
      // An executor closes idle keep-alive connections (cronwheel's after 2 s): one idle nearly that long
      // may be closing as we send. Newer ones sit at the back, so the rest are staler still.
      if (now - entry.last_used > settings_.max_idle_age) {
        stale.push_back(std::move(entry.client));
        for (auto& e : idle)
          stale.push_back(std::move(e.client));
        idle.clear();
        break;
      }
      *reused = true;
      return std::move(entry.client);
    }
  }
  *reused = false;
  return NewClient(name);
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

void HttpExecutorClient::Return(Origin& origin, std::unique_ptr<httplib::Client> client) {
  std::lock_guard lock(mu_);
  if (origin.idle.size() < settings_.max_idle_per_origin)
    origin.idle.push_back({std::move(client), clock_.SteadyNow()});
}

xxljob::Envelope HttpExecutorClient::Post(const std::string& address, std::string_view method,
                                          const std::string& token, const std::string& body) {
  std::string error;
  const auto addr = cronwheel::net::ParseHttpAddress(address, &error);
  if (!addr) return xxljob::Envelope::Fail(error);
  const auto path = addr->Path(method);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace(xxljob::kAccessTokenHeader, token);
  auto& origin = OriginFor(addr->origin);
  if (!Acquire(origin)) {
    return xxljob::Envelope::Fail(fmt::format(
        "request to {}{} failed: all {} connections to it (executor_connections) stayed busy for {} ms",
        addr->origin, path, std::max<std::size_t>(settings_.max_connections_per_origin, 1),
        settings_.connect_timeout.count()));
  }
  struct SlotGuard {
    HttpExecutorClient* self;
    Origin& origin;
    ~SlotGuard() { self->Release(origin); }
  } slot{this, origin};
  bool reused = false;
  auto client = Borrow(origin, addr->origin, &reused);
  auto res = client->Post(path, headers, body, "application/json;charset=UTF-8");
  bool resent = false;
  if (!res && reused) {
    // A reused connection the executor closed under us: send once more on a new one. Safe for every call:
    // /run carries the fire's log id, which the executor runs once (a redelivery is answered without a
    // second run); /beat, /idleBeat, /kill and /log have no side effect a second time.
    client = NewClient(addr->origin);
    res = client->Post(path, headers, body, "application/json;charset=UTF-8");
    resent = true;
  }
  if (!res) {
    // The connection is in an unknown state: drop it rather than return it.
    return xxljob::Envelope::Fail(
        fmt::format("request to {}{} failed: {}", addr->origin, path, httplib::to_string(res.error())));
  }
  const int status = res->status;
  std::string response_body = std::move(res->body);
  Return(origin, std::move(client));
  if (status != 200) {
    return xxljob::Envelope::Fail(fmt::format("{}{} answered HTTP {}", addr->origin, path, status));
  }
  auto env = xxljob::ParseEnvelope(response_body, &error);
  if (!env) {
    return xxljob::Envelope::Fail(
        fmt::format("{}{}: response not understood: {}", addr->origin, path, error));
  }
  // The first /run reached the executor after all and is queued or running there: that is a success.
  if (resent && method == "run" && !env->ok() && env->msg &&
      (env->msg->starts_with("repeat trigger") || env->msg->starts_with("repeate trigger"))) {
    return xxljob::Envelope::Success();
  }
  return *env;
}

xxljob::Envelope HttpExecutorClient::Run(const std::string& address, const std::string& token,
                                         const xxljob::TriggerParam& param) {
  return Post(address, "run", token, xxljob::ToJson(param).dump());
}

xxljob::Envelope HttpExecutorClient::Beat(const std::string& address, const std::string& token) {
  return Post(address, "beat", token, "{}");
}

xxljob::Envelope HttpExecutorClient::IdleBeat(const std::string& address, const std::string& token,
                                              int job_id) {
  return Post(address, "idleBeat", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump());
}

xxljob::Envelope HttpExecutorClient::Kill(const std::string& address, const std::string& token, int job_id) {
  return Post(address, "kill", token, xxljob::ToJson(xxljob::JobIdParam{job_id}).dump());
}

xxljob::Envelope HttpExecutorClient::Log(const std::string& address, const std::string& token,
                                         const xxljob::LogParam& param) {
  return Post(address, "log", token, xxljob::ToJson(param).dump());
}

}  // namespace cronwheel::admin
