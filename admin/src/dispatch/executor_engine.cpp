#include "dispatch/executor_engine.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using ErrorCode = boost::system::error_code;
using TransportClock = HttpExecutorClient::Engine::TransportClock;
using ConnectFailure = ConnectionPolicy::ConnectFailure;

// While anything is waiting or in flight, the client's thread looks this often at its deadlines (timeouts,
// waits for a connection, stalled first requests) and at the policy's hold-off.
constexpr milliseconds kTick{5};

}  // namespace

using Engine = HttpExecutorClient::Engine;

Engine::Engine(Settings settings, const ConnectionPolicy::Settings& policy, std::size_t configured,
               std::size_t max_waiting, ringwheel::Clock& clock)
    : settings_(std::move(settings)),
      policy_settings_(policy),
      configured_connections_(configured),
      max_waiting_(std::max<std::size_t>(max_waiting, 1)),
      clock_(clock),
      work_(asio::make_work_guard(io_)),
      tick_(io_),
      resolver_(io_) {
  thread_ = std::thread([this] { io_.run(); });
}

Engine::~Engine() {
  Stop();
  // Requests handed over while the thread was stopping are failed here rather than never answered.
  io_.restart();
  io_.poll();
}

void Engine::Stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] { Shutdown(); });
  thread_.join();
}

void Engine::SetSiblings(std::vector<Engine*> siblings) {
  siblings_ = std::move(siblings);
}

void Engine::RequestYield(const std::string& origin) {
  asio::post(io_, [this, origin] {
    const auto it = origins_.find(origin);
    if (stopping_ || it == origins_.end()) return;
    YieldIdle(it->second);
  });
}

// Closes the least recently used idle connection of `origin`, if any: its executor thread is freed for a
// stalled first request.
bool Engine::YieldIdle(Origin& origin) {
  if (origin.idle.empty()) return false;
  Close(*origin.idle.front());
  origin.idle.erase(origin.idle.begin());
  origin.policy.OnClosed();
  Count(origin, [](OriginStats& s) { ++s.yielded; });
  return true;
}

void Engine::Submit(std::unique_ptr<Request> request) {
  ++load_;
  asio::post(io_, [this, r = std::move(request)]() mutable { Enqueue(std::move(r)); });
}

HttpExecutorClient::OriginStats Engine::Stats(const std::string& origin) const {
  cronwheel::MutexLock lock(stats_mu_);
  const auto it = stats_.find(origin);
  return it == stats_.end() ? OriginStats{} : it->second;
}

HttpExecutorClient::OriginStats Engine::Total() const {
  OriginStats total;
  cronwheel::MutexLock lock(stats_mu_);
  for (const auto& [name, s] : stats_)
    Add(total, s);
  return total;
}

// Logs what went wrong with a request in detail (users see less, see executor_client.hpp): once per streak
// of failures to this executor, then at most once a minute.
void Engine::Detail(Origin& origin, const Request& r, std::string_view detail) {
  if (const auto n = origin.failures.Failure(clock_.SteadyNow())) {
    spdlog::warn("request to {}{}: {} ({} failure(s) to it in a row)", r.origin, r.path, detail, *n);
  }
}

Engine::Origin& Engine::OriginFor(const std::string& name) {
  auto [it, added] = origins_.try_emplace(name, policy_settings_);
  if (added) {
    it->second.name = name;
    cronwheel::MutexLock lock(stats_mu_);
    it->second.stats = &stats_[name];  // node-based: the address stays valid
  }
  return it->second;
}

void Engine::Enqueue(std::unique_ptr<Request> r) {
  if (stopping_) {
    Finish(*r, {Failure(*r, "not sent: the admin is shutting down"), Delivery::kNotSent});
    return;
  }
  Origin& origin = OriginFor(r->origin);
  if (origin.waiting.size() >= max_waiting_) {
    Finish(*r, {Failure(*r, fmt::format("not sent: {} requests already wait for a connection to it (the "
                                        "admin's queue to one executor is full)",
                                        origin.waiting.size())),
                Delivery::kNotSent});
    return;
  }
  // A fire waits for a free connection until its misfire threshold passes (the caller's send_by_ms); any
  // other request for connect_timeout.
  r->wait_limit = r->send_by_ms > 0 ? std::max(milliseconds(r->send_by_ms - clock_.NowMs()), milliseconds(0))
                                    : settings_.connect_timeout;
  r->give_up = TransportClock::now() + r->wait_limit;
  r->queued = clock_.SteadyNow();
  origin.earliest_give_up = std::min(origin.earliest_give_up, r->give_up);
  origin.queued_at.insert(r->queued);
  // After every request that goes before it or with it: a burst of fires that came from many trigger
  // threads in any order leaves in the order of its instants and jobs, so each job's fires reach a busy
  // executor at the same place of every burst, a period apart (an XXL-JOB executor refuses or discards a
  // fire while the job's previous one runs). Usually that is the back.
  const auto key = [](const Request& q) { return std::pair{q.send_by_ms, q.job_id}; };
  const auto at = std::upper_bound(origin.waiting.begin(), origin.waiting.end(), key(*r),
                                   [&](const auto& k, const auto& q) { return k < key(*q); });
  origin.waiting.insert(at, std::move(r));
  ++pending_;
  Pump(origin);
  Count(origin, [](OriginStats&) {});
  ArmTick();
}

std::unique_ptr<Engine::Request> Engine::PopWaiting(Origin& origin) {
  auto r = std::move(origin.waiting.front());
  origin.waiting.pop_front();
  origin.queued_at.erase(origin.queued_at.find(r->queued));
  --pending_;
  return r;
}

// Fails the waiting requests whose wait is over (their waits end in any order: a fire's at its misfire
// threshold, another request's connect_timeout after it came). Scans the queue only once the earliest end
// has passed.
void Engine::ExpireWaiting(Origin& origin) {
  const auto real_now = TransportClock::now();
  if (origin.waiting.empty() || real_now < origin.earliest_give_up) return;
  std::vector<std::unique_ptr<Request>> expired;
  std::deque<std::unique_ptr<Request>> kept;
  auto earliest = TransportClock::time_point::max();
  for (auto& r : origin.waiting) {
    if (real_now >= r->give_up) {
      origin.queued_at.erase(origin.queued_at.find(r->queued));
      expired.push_back(std::move(r));
    } else {
      earliest = std::min(earliest, r->give_up);
      kept.push_back(std::move(r));
    }
  }
  origin.waiting = std::move(kept);
  origin.earliest_give_up = earliest;
  pending_ -= expired.size();
  Count(origin, [](OriginStats&) {});
  for (auto& r : expired) {
    Finish(*r, {Failure(*r, fmt::format("not sent: all {} connections to it (executor_connections) stayed "
                                        "busy for {} ms{}",
                                        configured_connections_, r->wait_limit.count(),
                                        r->send_by_ms > 0 ? ", until the fire's misfire threshold" : "")),
                Delivery::kNotSent});
  }
}

// Starts the waiting requests on idle connections or new ones, as far as the policy allows.
void Engine::Pump(Origin& origin) {
  while (!origin.waiting.empty()) {
    const auto now = clock_.SteadyNow();
    RetireStale(origin, now);
    if (auto c = TakeIdle(origin, now)) {
      c->request = PopWaiting(origin);
      AddBusy(origin, c);
      Write(c);
      continue;
    }
    if (!origin.policy.MayOpen(now, *origin.queued_at.begin())) {
      // Nothing can start now: those whose wait is over fail, the rest wait for the tick or an answer. (A
      // request whose wait was over when it came, a fire recovered after its threshold say, is still sent
      // if a connection is free at once.)
      ExpireWaiting(origin);
      return;
    }
    Open(origin, PopWaiting(origin), now);
  }
}

// The least recently used idle connections sit at the front: closes those idle past the reuse limit.
void Engine::RetireStale(Origin& origin, ringwheel::SteadyTime now) {
  const auto limit = origin.policy.ReuseLimit(now);
  std::size_t retired = 0;
  while (retired < origin.idle.size() && now - origin.idle[retired]->last_used > limit) {
    Close(*origin.idle[retired]);
    origin.policy.OnClosed();
    ++retired;
  }
  if (retired == 0) return;
  origin.idle.erase(origin.idle.begin(), origin.idle.begin() + static_cast<std::ptrdiff_t>(retired));
  Count(origin, [&](OriginStats& s) { s.retired += retired; });
}

// The most recently used idle connection the executor still holds open, if any. Before use a connection is
// checked: readable means end of stream (the executor closed it), an error, or bytes nobody asked for.
Engine::ConnPtr Engine::TakeIdle(Origin& origin, ringwheel::SteadyTime now) {
  while (!origin.idle.empty()) {
    ConnPtr c = std::move(origin.idle.back());
    origin.idle.pop_back();
    if (c->Socket().is_open() && !Readable(*c)) {
      Count(origin, [](OriginStats& s) { ++s.reused; });
      return c;
    }
    // The executor closed it while it sat idle: nothing was written to it. Its idle time bounds the
    // executor's keep-alive.
    Close(*c);
    origin.policy.OnClosed();
    origin.policy.FoundClosedAfterIdle(std::chrono::duration_cast<milliseconds>(now - c->last_used), now);
    Count(origin, [](OriginStats& s) { ++s.found_closed; });
  }
  return nullptr;
}

void Engine::AddBusy(Origin& origin, const ConnPtr& c) {
  c->busy_at = origin.busy.size();
  origin.busy.push_back(c);
  ++pending_;
}

void Engine::RemoveBusy(Origin& origin, Conn& c) {
  auto& busy = origin.busy;
  busy.back()->busy_at = c.busy_at;
  std::swap(busy[c.busy_at], busy.back());
  busy.pop_back();
  --pending_;
}

bool Engine::Readable(Conn& c) {
  return !Silent(c.Id());
}

// Whether the socket `id` (Conn::Id()) has nothing to read: no answer, no end of stream, no error.
bool Engine::Silent(std::uintptr_t id) {
  pollfd p{.fd = static_cast<int>(id), .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 0;
}

// Gives an answered connection back: pooled if it is still open and `reusable`, else closed. A new
// connection still waiting for its first answer may be queued behind this one at the executor: then this
// one is closed rather than pooled (once per stalled request), so the executor's thread goes to it.
void Engine::Release(Origin& origin, const ConnPtr& c, bool reusable, ringwheel::SteadyTime now) {
  const bool yield = reusable && origin.policy.TakeStall(now, Silent);
  if (reusable && !yield && c->Socket().is_open()) {
    c->phase = Conn::Phase::kIdle;
    c->last_used = now;
    origin.idle.push_back(c);
    Count(origin, [](OriginStats&) {});
    return;
  }
  Close(*c);
  origin.policy.OnClosed();
  Count(origin, [&](OriginStats& s) { s.yielded += yield ? 1 : 0; });
}

// A busy connection failed: closed, never reused; the pool goes on without it. `why`: what a failed
// connection attempt tells the policy.
void Engine::Fail(const ConnPtr& c, Delivery delivery, const std::string& what, ConnectFailure why) {
  Origin& origin = *c->origin;
  auto r = std::move(c->request);
  const auto now = clock_.SteadyNow();
  origin.policy.FirstOver(c->Id());
  if (c->phase == Conn::Phase::kConnecting) {
    origin.policy.OnConnectFailed(now, why, c->place);
  } else {
    origin.policy.OnLost(now, c->fresh, c->place);
  }
  Close(*c);
  RemoveBusy(origin, *c);
  Count(origin, [](OriginStats&) {});
  Pump(origin);
  Finish(*r, {Failure(*r, what), delivery, why == ConnectFailure::kRefused});
}

void Engine::Close(Conn& c) {
  c.closed = true;
  ErrorCode ignored;
  c.Socket().shutdown(tcp::socket::shutdown_both, ignored);
  c.Socket().close(ignored);
}

// "request to <origin><path> not sent: ..." / "... failed after it was sent ...".
xxljob::Envelope Engine::Failure(const Request& r, std::string_view what) {
  return xxljob::Envelope::Fail(fmt::format("request to {}{} {}", r.origin, r.path, what));
}

void Engine::Finish(Request& r, RunReply reply) {
  --load_;
  auto done = std::move(r.done);
  if (!done) return;
  try {
    done(std::move(reply));
  } catch (const std::exception& e) {
    spdlog::error("the handler of an answer from {}{} threw: {}", r.origin, r.path, e.what());
  }
}

void Engine::ArmTick() {
  if (ticking_ || pending_ == 0) return;
  ticking_ = true;
  tick_.expires_after(kTick);
  tick_.async_wait([this](const ErrorCode& e) {
    ticking_ = false;
    if (!e) Tick();
  });
}

// The deadlines: timeouts, waits for a free connection, stalled first requests; then the pools go on (a
// hold-off may have ended, the kGrowAfter wait passed).
void Engine::Tick() {
  const auto real_now = TransportClock::now();
  const auto now = clock_.SteadyNow();
  for (auto& [name, origin] : origins_) {
    std::vector<ConnPtr> late;
    for (const auto& c : origin.busy) {
      if (real_now >= c->deadline) late.push_back(c);
    }
    for (const auto& c : late)
      TimedOut(c);
    // One idle connection closed for each stalled first request: this thread's least recently used one, or
    // one of the other threads' (the executor's threads may be held by their connections).
    while (origin.policy.TakeStall(now, Silent)) {
      if (YieldIdle(origin)) continue;
      for (Engine* sibling : siblings_)
        sibling->RequestYield(name);
    }
    Pump(origin);
  }
  ArmTick();
}

void Engine::TimedOut(const ConnPtr& c) {
  switch (c->phase) {
    case Conn::Phase::kConnecting:
      Fail(c, Delivery::kNotSent,
           fmt::format("not sent: the executor could not be reached (no connection within {} ms)",
                       settings_.connect_timeout.count()),
           ConnectFailure::kTimedOut);
      return;
    case Conn::Phase::kWriting:
      Fail(c, Delivery::kNotSent,
           fmt::format("not sent: not written within {} ms", settings_.read_timeout.count()));
      return;
    case Conn::Phase::kReading:
      Fail(c, Delivery::kUnknown,
           fmt::format("failed after it was sent (no answer within {} ms): the executor may have received it",
                       settings_.read_timeout.count()));
      return;
    case Conn::Phase::kIdle:
      return;
  }
}

void Engine::Shutdown() {
  stopping_ = true;
  for (auto& [name, origin] : origins_) {
    while (!origin.waiting.empty()) {
      auto r = PopWaiting(origin);
      Finish(*r, {Failure(*r, "not sent: the admin is shutting down"), Delivery::kNotSent});
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

}  // namespace cronwheel::admin
