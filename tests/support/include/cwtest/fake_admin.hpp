#pragma once
// A protocol-faithful fake of an XXL-JOB admin's executor-facing API (docs/xxl-job-protocol.md §3), for
// end-to-end tests of executors: an HTTP server on 127.0.0.1 answering POST <base_path>/api/registry,
// /api/registryRemove and /api/callback the way a dialect-A admin (XXL-JOB 2.4-3.2) does:
//  * the body of every answer is {"code":...,"msg":...,"content":null} (Jackson keeps the nulls);
//  * with a token configured, a missing or different XXL-JOB-ACCESS-TOKEN header is
//    code 500 "The access token is wrong.";
//  * a registry body needs non-blank registryGroup/registryKey/registryValue, else 500 "Illegal Argument.";
//  * a callback body is the dialect A/B array of {logId, logDateTim, handleCode, handleMsg}; the dialect-C
//    {"callbackList": [...]} is accepted too; anything else is code 500 naming the problem.
// Everything accepted is recorded, and the records survive Stop()/Start() (an admin restart on the same
// port), so a test can count what arrived across an outage.
//
// Thread-safety: all members may be called from any thread. Waits are real-time with a bound.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "xxljob/protocol.hpp"

namespace httplib {
class Server;
}

namespace cwtest {

class FakeAdmin final {
 public:
  struct Options {
    std::string access_token;  // empty: not checked
    std::string base_path;     // "" or e.g. "/xxl-job-admin"
  };
  explicit FakeAdmin(Options options);
  ~FakeAdmin();
  FakeAdmin(const FakeAdmin&) = delete;
  FakeAdmin& operator=(const FakeAdmin&) = delete;

  // Serves on 127.0.0.1:`port` (0 = any free port; later Start()s reuse the first port when given 0).
  // Throws std::runtime_error when it cannot bind.
  void Start(int port = 0);
  // Stops serving (connections are refused until the next Start()).
  void Stop();

  [[nodiscard]] int port() const { return port_; }
  // "http://127.0.0.1:<port><base_path>", what an executor is configured with.
  [[nodiscard]] std::string address() const;

  [[nodiscard]] std::vector<cronwheel::xxljob::RegistryParam> registries() const;
  [[nodiscard]] std::vector<cronwheel::xxljob::RegistryParam> removes() const;
  [[nodiscard]] std::vector<cronwheel::xxljob::HandleCallbackParam> callbacks() const;
  [[nodiscard]] std::vector<std::string> callback_bodies() const;  // raw, as received
  [[nodiscard]] int refused() const;                               // calls answered with code 500

  bool WaitRegistries(std::size_t n, std::chrono::milliseconds timeout) const;
  bool WaitRemoves(std::size_t n, std::chrono::milliseconds timeout) const;
  bool WaitCallbacks(std::size_t n, std::chrono::milliseconds timeout) const;
  // The first callback for `log_id`, waiting for it.
  std::optional<cronwheel::xxljob::HandleCallbackParam> WaitCallbackFor(
      std::int64_t log_id, std::chrono::milliseconds timeout) const;

 private:
  std::string Handle(const std::string& path, const std::string& token, const std::string& body);

  Options options_;
  int port_ = 0;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<cronwheel::xxljob::RegistryParam> registries_;
  std::vector<cronwheel::xxljob::RegistryParam> removes_;
  std::vector<cronwheel::xxljob::HandleCallbackParam> callbacks_;
  std::vector<std::string> callback_bodies_;
  int refused_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::jthread thread_;
};

}  // namespace cwtest
