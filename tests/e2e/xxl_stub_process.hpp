#pragma once
// An xxl-stub process (tests/support/xxl_stub: an XXL-JOB-protocol executor that behaves like the ones users
// run, not like cronwheel's) for end-to-end tests: started on a free loopback port, registered with the
// cluster's admins under the cluster's app name, and read back through its run trace, one line per /run it
// received. Its settings default to the hard case the tests need: cpp-httplib's listen backlog of 5, 8 server
// threads, a 2 s keep-alive timeout and no log-id de-duplication.
//
// Thread-safety: one test thread.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "cwtest/process.hpp"

namespace cwtest {

class XxlStub {
 public:
  struct Settings {
    int threads = 8;
    int listen_backlog = 5;
    int keep_alive_timeout_s = 2;
    int keep_alive_max_count = 100;  // answers per connection before the stub closes it (cpp-httplib's 5)
    std::string dedupe = "none";     // "none" or "running" (XXL-JOB's Java executor)
    int heartbeat_s = 2;
    std::string app_name = "e2e-app";  // the group it registers in
  };
  // One line of the trace: a /run the stub received.
  struct Run {
    std::int64_t log_id = 0;
    int job_id = 0;
    std::int64_t received_ms = 0;
    std::string outcome;  // accepted, duplicate, refused, invalid
  };

  // Starts stub `name` (its files under the cluster's folder), registered with every admin of the cluster
  // (callbacks go to the first that answers), and waits until the registry lists it.
  XxlStub(Cluster& cluster, const std::string& name, const Settings& settings);
  ~XxlStub();
  XxlStub(const XxlStub&) = delete;
  XxlStub& operator=(const XxlStub&) = delete;

  [[nodiscard]] std::string address() const;
  [[nodiscard]] ChildProcess& process() { return *process_; }
  // Every /run in the trace so far (the stub flushes it every 100 ms and at exit).
  [[nodiscard]] std::vector<Run> Runs() const;
  // Stops it with SIGTERM (it deregisters and flushes its trace); returns "connections accepted: N".
  int StopAndCountConnections();

 private:
  Cluster& cluster_;
  int port_ = 0;
  std::filesystem::path trace_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace cwtest
