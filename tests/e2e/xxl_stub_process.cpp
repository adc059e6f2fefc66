#include "xxl_stub_process.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cwtest {

XxlStub::XxlStub(Cluster& cluster, const std::string& name, const Settings& settings)
    : cluster_(cluster), port_(FreeTcpPort()), trace_(cluster.dir() / (name + ".trace")) {
  std::string admin;
  for (int i = 0; i < cluster.admin_count(); ++i)
    admin += fmt::format("{}http://127.0.0.1:{}", i ? "," : "", cluster.admin_port(i));
  ChildProcess::Options o;
  o.program = CRONWHEEL_XXL_STUB_BIN;
  o.args = {"--port",
            std::to_string(port_),
            "--threads",
            std::to_string(settings.threads),
            "--listen-backlog",
            std::to_string(settings.listen_backlog),
            "--keep-alive-timeout-s",
            std::to_string(settings.keep_alive_timeout_s),
            "--keep-alive-max-count",
            std::to_string(settings.keep_alive_max_count),
            "--dedupe",
            settings.dedupe,
            "--admin",
            admin,
            "--access-token",
            cluster.token(),
            "--app-name",
            settings.app_name,
            "--heartbeat-s",
            std::to_string(settings.heartbeat_s),
            "--trace-file",
            trace_.string()};
  o.log_path = (cluster.dir() / (name + ".log")).string();
  process_ = std::make_unique<ChildProcess>(o);
  const auto value = address();
  if (!Eventually(
          [&] {
            return cluster_.Scalar(fmt::format(
                       "SELECT count(*) FROM executor_registry WHERE registry_value = '{}'", value)) > 0;
          },
          std::chrono::seconds(30))) {
    throw std::runtime_error(fmt::format("{} did not register:\n{}", name, process_->LogTail()));
  }
}

XxlStub::~XxlStub() {
  if (process_) process_->Stop(std::chrono::seconds(5));
}

std::string XxlStub::address() const {
  return fmt::format("http://127.0.0.1:{}/", port_);
}

std::vector<XxlStub::Run> XxlStub::Runs() const {
  std::vector<Run> out;
  std::ifstream in(trace_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Run r;
    if (fields >> r.log_id >> r.job_id >> r.received_ms >> r.outcome) out.push_back(r);
  }
  return out;
}

int XxlStub::StopAndCountConnections() {
  process_->Stop(std::chrono::seconds(10));
  const auto output = process_->Output();
  const auto at = output.rfind("connections accepted: ");
  return at == std::string::npos ? -1 : std::stoi(output.substr(at + 22));
}

}  // namespace cwtest
