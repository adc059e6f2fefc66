#include "registry_heartbeat.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

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
          .interval = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.interval),
          .jitter = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.interval) / 10},
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
  // cronwheel's extensions (XXL-JOB admins ignore them): fires may be sent ahead of their instant, and this
  // executor's clock as last measured (see the header).
  p.run_at = true;
  const auto sent_ms = clock_.NowMs();
  if (const auto best = clocks_.Best(sent_ms)) {
    p.clock_offset_ms = best->offset_ms;
    p.clock_error_ms = best->error_ms;
  }
  AdminReply reply;
  try {
    reply = admin_.Call("registry", xxljob::ToJson(p));
  } catch (const std::exception& e) {
    reply.detail = e.what();
  }
  const auto answered_ms = clock_.NowMs();
  const bool first_measurement = reply.ok && !measured_ && Measure(reply, sent_ms, answered_ms);
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
  if (reply.ok && !first_measurement) Measure(reply, sent_ms, answered_ms);
  if (first_measurement) Beat();  // the admin learns the clock now, not a heartbeat later
}

bool RegistryHeartbeat::Measure(const AdminReply& reply, std::int64_t sent_ms, std::int64_t answered_ms) {
  if (!reply.content.is_object()) return false;  // an XXL-JOB admin
  const auto it = reply.content.find(xxljob::kRegistryClockField);
  if (it == reply.content.end() || !it->is_number_integer()) return false;
  const auto admin_ms = it->get<std::int64_t>();
  const auto round_trip = std::max<std::int64_t>(answered_ms - sent_ms, 0);
  clocks_.Add({.offset_ms = sent_ms + round_trip / 2 - admin_ms,
               .error_ms = (round_trip + 1) / 2 + 1,
               .at_ms = answered_ms});
  measured_ = true;
  return true;
}

}  // namespace cronwheel::executor
