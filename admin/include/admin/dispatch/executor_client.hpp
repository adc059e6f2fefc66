#pragma once
// The admin's side of XXL-JOB's executor protocol (docs/xxl-job-protocol.md §1-§2): POST /run, /beat, /idleBeat,
// /kill and /log to an executor address, with the access-token header and a timeout. Transport failures
// are folded into the envelope as XXL-JOB's client does (code 500 with a message naming the address), so
// callers handle one shape.
//
// HttpExecutorClient reuses connections: per executor origin it keeps a stack of idle keep-alive
// connections (TCP_NODELAY), so a steady trigger rate costs no connection set-up. A connection idle longer
// than `max_idle_age` is not reused (the executor may be closing it: cronwheel's closes idle ones after
// 2 s), and a transport failure on a reused connection is retried once on a new one. An address with or
// without a trailing '/' or a path prefix works (`http://h:9999`, `http://h:9999/`, `http://h/exec/`).
//
// It also bounds the requests in flight to one origin (`max_connections_per_origin`). An executor's HTTP
// server (cpp-httplib, a fixed thread pool) gives each open keep-alive connection a thread of its own for as
// long as the connection stays open, so more connections than it has threads queue whole connections
// behind busy ones (an early fire-lag run, on a machine at load average 14, saw a p99 of ~0.75 s from the
// scheduled instant to the executor at 2,000 fires/s with 200 trigger threads against the executor's 64
// server threads). A request beyond the bound waits for a free slot for at most `connect_timeout`, then
// fails with a message naming the origin, the bound and the wait. Keep admins x max_connections_per_origin
// <= the executor's server threads. The wait is a real-time condition-variable wait (not the injected
// clock: it is a transport timeout, like connect_timeout itself).
//
// Thread-safety: every call may be made from any number of threads at once.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace httplib {
class Client;
}

namespace cronwheel::admin {

class ExecutorClient {
 public:
  virtual ~ExecutorClient() = default;
  // `token` empty = send no token header.
  virtual xxljob::Envelope Run(const std::string& address, const std::string& token,
                               const xxljob::TriggerParam& param) = 0;
  virtual xxljob::Envelope Beat(const std::string& address, const std::string& token) = 0;
  virtual xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Log(const std::string& address, const std::string& token,
                               const xxljob::LogParam& param) = 0;

 protected:
  ExecutorClient() = default;
  ExecutorClient(const ExecutorClient&) = default;
  ExecutorClient& operator=(const ExecutorClient&) = default;
};

class HttpExecutorClient final : public ExecutorClient {
 public:
  struct Settings {
    std::chrono::milliseconds connect_timeout{3000};  // XXL-JOB: 3 s
    std::chrono::milliseconds read_timeout{3000};     // XXL-JOB: xxl.job.timeout = 3 s
    std::size_t max_idle_per_origin = 256;            // idle keep-alive connections kept per executor
    std::chrono::milliseconds max_idle_age{1000};     // older idle connections are closed, not reused
    std::size_t max_connections_per_origin = 32;      // requests in flight to one executor (0 is taken as 1)
  };

  HttpExecutorClient(Settings settings, ringwheel::Clock& clock);
  HttpExecutorClient() : HttpExecutorClient(Settings{}, ringwheel::RealClock::Instance()) {}
  ~HttpExecutorClient() override;
  HttpExecutorClient(const HttpExecutorClient&) = delete;
  HttpExecutorClient& operator=(const HttpExecutorClient&) = delete;

  xxljob::Envelope Run(const std::string& address, const std::string& token,
                       const xxljob::TriggerParam& param) override;
  xxljob::Envelope Beat(const std::string& address, const std::string& token) override;
  xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Log(const std::string& address, const std::string& token,
                       const xxljob::LogParam& param) override;

 private:
  xxljob::Envelope Post(const std::string& address, std::string_view method, const std::string& token,
                        const std::string& body);
  struct Idle {
    std::unique_ptr<httplib::Client> client;
    ringwheel::SteadyTime last_used;
  };
  struct Origin {
    std::vector<Idle> idle;  // most recently used last
    std::size_t in_flight = 0;
    std::condition_variable freed;
  };
  // Waits (at most connect_timeout, real time) for one of the origin's max_connections_per_origin slots;
  // false on timeout. A slot is given back by Release.
  bool Acquire(Origin& origin);
  void Release(Origin& origin);
  // A pooled connection (`*reused` = true) or a new one. Call while holding a slot.
  std::unique_ptr<httplib::Client> Borrow(Origin& origin, const std::string& name, bool* reused);
  void Return(Origin& origin, std::unique_ptr<httplib::Client> client);
  std::unique_ptr<httplib::Client> NewClient(const std::string& origin) const;
  Origin& OriginFor(const std::string& name);

  Settings settings_;
  ringwheel::Clock& clock_;
  std::mutex mu_;
  // std::unordered_map keeps references to its elements valid across rehashing; entries are never erased.
  std::unordered_map<std::string, Origin> origins_;
};

}  // namespace cronwheel::admin
