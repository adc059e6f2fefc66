#pragma once
// The admin's side of XXL-JOB's executor protocol (xxl-job-protocol.md §2): POST /run, /beat, /idleBeat,
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
// Thread-safety: every call may be made from any number of threads at once.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "executor/protocol.hpp"
#include "ringwheel/clock.hpp"

namespace httplib {
class Client;
}

namespace cronwheel::admin {

class ExecutorClient {
 public:
  virtual ~ExecutorClient() = default;
  // `token` empty = send no token header.
  virtual protocol::Envelope Run(const std::string& address, const std::string& token,
                                 const protocol::TriggerParam& param) = 0;
  virtual protocol::Envelope Beat(const std::string& address, const std::string& token) = 0;
  virtual protocol::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) = 0;
  virtual protocol::Envelope Kill(const std::string& address, const std::string& token, int job_id) = 0;
  virtual protocol::Envelope Log(const std::string& address, const std::string& token,
                                 const protocol::LogParam& param) = 0;

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
  };

  HttpExecutorClient(Settings settings, ringwheel::Clock& clock);
  HttpExecutorClient() : HttpExecutorClient(Settings{}, ringwheel::RealClock::Instance()) {}
  ~HttpExecutorClient() override;
  HttpExecutorClient(const HttpExecutorClient&) = delete;
  HttpExecutorClient& operator=(const HttpExecutorClient&) = delete;

  protocol::Envelope Run(const std::string& address, const std::string& token,
                         const protocol::TriggerParam& param) override;
  protocol::Envelope Beat(const std::string& address, const std::string& token) override;
  protocol::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) override;
  protocol::Envelope Kill(const std::string& address, const std::string& token, int job_id) override;
  protocol::Envelope Log(const std::string& address, const std::string& token,
                         const protocol::LogParam& param) override;

 private:
  protocol::Envelope Post(const std::string& address, std::string_view method, const std::string& token,
                          const std::string& body);
  // A pooled connection (`*reused` = true) or a new one.
  std::unique_ptr<httplib::Client> Borrow(const std::string& origin, bool* reused);
  void Return(const std::string& origin, std::unique_ptr<httplib::Client> client);
  std::unique_ptr<httplib::Client> NewClient(const std::string& origin) const;

  struct Idle {
    std::unique_ptr<httplib::Client> client;
    ringwheel::SteadyTime last_used;
  };
  Settings settings_;
  ringwheel::Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<Idle>> idle_;
};

}  // namespace cronwheel::admin
