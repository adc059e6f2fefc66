#include "registry_heartbeat.hpp"

#include <spdlog/spdlog.h>

#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

RegistryHeartbeat::RegistryHeartbeat(Settings settings, AdminClient& admin, ringwheel::Clock& clock)
    : settings_(std::move(settings)), admin_(admin), clock_(clock) {}

RegistryHeartbeat::~RegistryHeartbeat() {
  Stop();
}

void RegistryHeartbeat::Start() {
  if (!admin_.HasAdmins() || task_) {
    if (!admin_.HasAdmins()) spdlog::warn("registry: no admin address is configured; not registering");
    return;
  }
  task_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Settings{
          .name = "registry heartbeat",
          .interval = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.interval)},
      clock_, [this] { Beat(); });
}

void RegistryHeartbeat::Stop() {
  if (!task_) return;
  task_.reset();
  xxljob::RegistryParam p;
  p.registry_key = settings_.app_name;
  p.registry_value = settings_.address;
  try {
    const auto reply = admin_.Call("registryRemove", xxljob::ToJson(p));
    if (reply.ok) {
      spdlog::info("registry: removed {} {} from {}", p.registry_key, p.registry_value, reply.detail);
    } else {
      spdlog::warn("registry: registryRemove failed: {}", reply.detail);
    }
  } catch (const std::exception& e) {
    spdlog::warn("registry: registryRemove failed: {}", e.what());
  }
}

void RegistryHeartbeat::Beat() {
  xxljob::RegistryParam p;
  p.registry_key = settings_.app_name;
  p.registry_value = settings_.address;
  // cronwheel's extensions (XXL-JOB admins ignore them): fires may be sent ahead of their instant, and the
  // admin measures this executor's clock offset from clockMs with every heartbeat.
  p.run_at = true;
  p.clock_ms = clock_.NowMs();
  AdminReply reply;
  try {
    reply = admin_.Call("registry", xxljob::ToJson(p));
  } catch (const std::exception& e) {
    reply.detail = e.what();
  }
  if (reply.ok) {
    if (failing_ || !registered_once_) {
      spdlog::info("registry: registered {} at {} with {}", p.registry_key, p.registry_value, reply.detail);
    }
    failing_ = false;
    registered_once_ = true;
  } else {
    spdlog::warn("registry: no admin accepted the heartbeat: {}", reply.detail);
    failing_ = true;
  }
}

}  // namespace cronwheel::executor
