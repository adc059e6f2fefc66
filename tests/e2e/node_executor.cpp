#include "node_executor.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace cwtest {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
constexpr const char* kSetup = "scripts/setup --web";
}  // namespace

fs::path NodeProgramDir() {
  return fs::path(CRONWHEEL_SOURCE_DIR) / "tests/e2e/xxl_job_node";
}

std::string MissingPrerequisite(const std::string& node) {
  if (node.empty()) return fmt::format("node is not in PATH; run {} (it installs nodejs and npm)", kSetup);
  const auto manifest = NodeProgramDir() / "node_modules/xxl-job/package.json";
  if (!fs::exists(manifest)) {
    return fmt::format("the npm package xxl-job is not installed ({} is missing); run {} (npm ci in {})",
                       manifest.string(), kSetup, NodeProgramDir().string());
  }
  if (ReadWholeFile(manifest).find(R"("version": "0.1.7")") == std::string::npos) {
    return fmt::format("{} is not xxl-job 0.1.7 (package-lock.json's); run rm -rf {}/node_modules && {}",
                       manifest.string(), NodeProgramDir().string(), kSetup);
  }
  return "";
}

NodeExecutor StartNodeExecutor(Cluster& c, const std::string& node, const std::string& app_name,
                               const fs::path& trace, const std::vector<std::string>& extra_args) {
  const int port = FreeTcpPort();
  ChildProcess::Options o;
  o.program = node;
  o.args = {(NodeProgramDir() / "executor.mjs").string(),
            "--app-name",
            app_name,
            "--admin",
            fmt::format("http://127.0.0.1:{}", c.admin_port(0)),
            "--access-token",
            c.token(),
            "--port",
            std::to_string(port),
            "--trace-file",
            trace.string(),
            "--max-run-s",
            "300"};
  o.args.insert(o.args.end(), extra_args.begin(), extra_args.end());
  o.log_path = (c.dir() / "xxl-job-node.log").string();
  // The package registers "<baseUrl>/job"; the admin keeps addresses with a trailing '/'.
  NodeExecutor out{.process = std::make_unique<ChildProcess>(o),
                   .address = fmt::format("http://127.0.0.1:{}/job/", port)};
  out.registered = Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM executor_registry WHERE registry_key = '{}' AND"
                                    " registry_value = '{}'",
                                    app_name, out.address)) > 0;
      },
      30s);
  if (!out.registered) {
    out.why = fmt::format("the Node executor did not register as {}:\n{}\nregistered: {}", out.address,
                          out.process->LogTail(), c.Scalar("SELECT count(*) FROM executor_registry"));
    return out;
  }
  std::this_thread::sleep_for(1500ms);  // the admin reads the registry every second
  return out;
}

}  // namespace cwtest
