#pragma once
// The admin's side of XXL-JOB's executor protocol (xxl-job-protocol.md §2): POST /run, /beat, /idleBeat,
// /kill and /log to an executor address, with the access-token header and a timeout. Transport failures
// are folded into the envelope as XXL-JOB's client does (code 500 with a message naming the address), so
// callers handle one shape.
//
// HttpExecutorClient reuses connections: per executor origin it keeps a stack of idle keep-alive
// connections (TCP_NODELAY), so a steady trigger rate costs no connection set-up. An address with or
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
  };

  explicit HttpExecutorClient(Settings settings);
  HttpExecutorClient() : HttpExecutorClient(Settings{}) {}
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
  std::unique_ptr<httplib::Client> Borrow(const std::string& origin);
  void Return(const std::string& origin, std::unique_ptr<httplib::Client> client);

  Settings settings_;
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<httplib::Client>>> idle_;
};

}  // namespace cronwheel::admin
