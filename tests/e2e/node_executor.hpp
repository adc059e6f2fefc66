#pragma once
// The npm package xxl-job (a third-party XXL-JOB executor in Node.js) run by tests/e2e/xxl_job_node/
// executor.mjs for the e2e tests (xxl_job_node_e2e_test.cpp, output_archive_e2e_test.cpp): whether it can
// run here, and starting it for a cluster's admin.
//
// Thread-safety: one test thread.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "cwtest/process.hpp"

namespace cwtest {

// tests/e2e/xxl_job_node: executor.mjs, and node_modules once `npm ci` ran there.
std::filesystem::path NodeProgramDir();

// What is missing to run the package with `node` (FindInPath("node")), or "" when nothing is: the message
// names the setup command (scripts/setup --web).
std::string MissingPrerequisite(const std::string& node);

// The Node executor for the admin of a cluster, once it has registered.
struct NodeExecutor {
  std::unique_ptr<ChildProcess> process;
  std::string address;  // as registered: http://127.0.0.1:<port>/job/
  bool registered = false;
  std::string why;  // when it did not register
};

// Starts executor.mjs for admin 0 of `c` as `app_name`, tracing to `trace`, with `extra_args` (e.g.
// --log-storage local --work-dir DIR), and waits (30 s at most) until it has registered and the admin has
// read the registry.
NodeExecutor StartNodeExecutor(Cluster& c, const std::string& node, const std::string& app_name,
                               const std::filesystem::path& trace,
                               const std::vector<std::string>& extra_args = {});

}  // namespace cwtest
