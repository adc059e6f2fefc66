#include "admin/dispatch/executor_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <utility>

#include "admin/dispatch/run_batcher.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/ip_address.hpp"
#include "dispatch/executor_engine.hpp"

namespace cronwheel::admin {

namespace http = boost::beast::http;

namespace {

// The settings with a guard: without one of the caller's, the default guard (registry_guard.hpp), so that no
// client connects anywhere unchecked.
HttpExecutorClient::Settings Guarded(HttpExecutorClient::Settings settings) {
  if (!settings.guard) settings.guard = std::make_shared<const RegistryGuard>();
  return settings;
}

}  // namespace

HttpExecutorClient::HttpExecutorClient(const Settings& given, ringwheel::Clock& clock)
    : batcher_(std::make_unique<RunBatcher>(
          RunBatcher::Settings{}, [this](const std::string& address, const std::string& token,
                                         std::string body, std::int64_t send_by_ms, RunDone done) {
            Post(address, "runs", token, std::move(body), send_by_ms, std::move(done));
          })) {
  const Settings settings = Guarded(given);
  guard_ = settings.guard;
  // Each thread runs its share of every executor's connections: no more threads than connections, and the
  // shares add up to executor_connections exactly.
  const auto cap = std::max<std::size_t>(settings.max_connections_per_origin, 1);
  const auto n = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(settings.threads, 1)), 1, cap);
  for (std::size_t i = 0; i < n; ++i) {
    ConnectionPolicy::Settings policy{
        .max_open = cap / n + (i < cap % n ? 1 : 0),
        .initial_window = std::max<std::size_t>(ConnectionPolicy::Settings{}.initial_window / n, 1),
        .max_idle = settings.max_idle,
        .min_keep_alive_observation = settings.min_keep_alive_observation,
        .keep_alive_memory = settings.keep_alive_memory,
    };
    engines_.push_back(std::make_unique<Engine>(
        settings, policy, cap, std::max<std::size_t>(settings.max_waiting_per_origin / n, 1), clock));
  }
  for (const auto& e : engines_) {
    std::vector<Engine*> others;
    for (const auto& o : engines_) {
      if (o != e) others.push_back(o.get());
    }
    e->SetSiblings(std::move(others));
  }
}

HttpExecutorClient::~HttpExecutorClient() {
  for (const auto& e : engines_)
    e->Stop();
}

void HttpExecutorClient::Post(const std::string& address, const char* method, const std::string& token,
                              std::string body, std::int64_t send_by_ms, RunDone done, int job_id) {
  const auto addr = cronwheel::net::ParseHttpAddress(address);
  if (!addr.ok()) {
    done({xxljob::Envelope::Fail(addr.status()), Delivery::kInvalid});
    return;
  }
  // An IP address (in any form a resolver reads, zone id and all) is refused before anything happens; the
  // engine checks the address it connects to again, a name's on what it resolves to.
  if (cronwheel::net::ParseNumericHost(addr->host)) {
    if (auto allowed = guard_->CheckEndpoint(addr->host, addr->port); !allowed) {
      done({xxljob::Envelope::Fail(fmt::format("request to {}{} refused: {}", addr->origin,
                                               addr->Path(method), allowed.error().message)),
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
  r->send_by_ms = send_by_ms;
  r->job_id = job_id;
  // A job's fires all go through one thread, where they queue in order (Engine::Origin::waiting). Other
  // requests go through the least loaded thread: a burst is spread over all of them, a lone request (a
  // probe, a test) always goes through the first and so finds its pooled connections.
  Engine* to = engines_.front().get();
  if (job_id > 0) {
    to = engines_[static_cast<std::size_t>(job_id) % engines_.size()].get();
  } else {
    for (const auto& e : engines_) {
      if (e->Load() < to->Load()) to = e.get();
    }
  }
  to->Submit(std::move(r));
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
  Post(address, method, token, std::move(body), 0,
       [&answered](RunReply r) { answered.set_value(std::move(r)); });
  return reply.get();
}

void HttpExecutorClient::RunAsync(const std::string& address, const std::string& token,
                                  const xxljob::TriggerParam& param, std::int64_t send_by_ms, RunDone done) {
  if (param.run_at_ms > 0) {
    batcher_->Add(address, token, param, send_by_ms, std::move(done));
    return;
  }
  Post(address, "run", token, xxljob::ToJson(param).dump(), send_by_ms, std::move(done), param.job_id);
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

xxljob::Envelope HttpExecutorClient::Drain(const std::string& address, const std::string& token) {
  return PostAndWait(address, "drain", token, "{}").envelope;
}

xxljob::Envelope HttpExecutorClient::KillFires(const std::string& address, const std::string& token,
                                               const xxljob::CancelParam& param) {
  return PostAndWait(address, "killFires", token, xxljob::ToJson(param).dump()).envelope;
}

xxljob::Envelope HttpExecutorClient::Cancel(const std::string& address, const std::string& token,
                                            const xxljob::CancelParam& param) {
  return PostAndWait(address, "cancel", token, xxljob::ToJson(param).dump()).envelope;
}

void HttpExecutorClient::AcceptedAsync(const std::string& address, const std::string& token,
                                       const xxljob::CancelParam& param, RunDone done) {
  Post(address, "accepted", token, xxljob::ToJson(param).dump(), 0, std::move(done));
}

HttpExecutorClient::OriginStats HttpExecutorClient::Stats(const std::string& address) const {
  const auto addr = cronwheel::net::ParseHttpAddress(address);
  if (!addr.ok()) return {};
  OriginStats total;
  for (const auto& e : engines_)
    Add(total, e->Stats(addr->origin));
  return total;
}

HttpExecutorClient::BatchCounts HttpExecutorClient::BatchStats() const {
  const auto s = batcher_->stats();
  return {s.batches, s.runs};
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
  total.evidence += share.evidence;
  total.open += share.open;
  total.most_open += share.most_open;  // an upper bound: the threads' peaks need not coincide
  total.waiting += share.waiting;
  if (share.keep_alive && (!total.keep_alive || *share.keep_alive < *total.keep_alive)) {
    total.keep_alive = share.keep_alive;
  }
}

}  // namespace cronwheel::admin
