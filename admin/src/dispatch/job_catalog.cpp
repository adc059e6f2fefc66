#include "admin/dispatch/job_catalog.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "cronwheel/net/http_address.hpp"
#include "cronwheel/throttled_log.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {
namespace {

class ChangeReceiver final : public pqxx::notification_receiver {
 public:
  ChangeReceiver(pqxx::connection_base& conn, std::function<void(const std::string&)> on_change)
      : pqxx::notification_receiver(conn, "cronwheel_changes"), on_change_(std::move(on_change)) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override { on_change_(payload); }

 private:
  std::function<void(const std::string&)> on_change_;
};

}  // namespace

JobCatalog::JobCatalog(Settings settings, ringwheel::Clock& clock, PgPool& pool)
    : settings_(settings), clock_(clock), pool_(pool) {
  if (settings_.listen) listener_ = std::jthread([this](const std::stop_token& st) { ListenLoop(st); });
  registry_task_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Settings{.name = "reading the executor registry", .interval = settings_.registry_refresh},
      clock_, [this] { RefreshRegistry(); });
}

JobCatalog::~JobCatalog() {
  listener_.request_stop();
  registry_task_.reset();
}

std::shared_ptr<const Job> JobCatalog::GetJob(int id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = jobs_.find(id); it != jobs_.end()) return it->second;
  }
  const int ids[] = {id};
  Prefetch(ids);
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::shared_ptr<const JobGroup> JobCatalog::GetGroup(int id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = groups_.find(id); it != groups_.end()) return it->second;
  }
  auto group = WithConnection(pool_, [&](pqxx::connection& conn) -> std::shared_ptr<const JobGroup> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1", kGroupColumns), id);
    if (rows.empty()) return nullptr;
    return std::make_shared<const JobGroup>(GroupFromRow(rows[0]));
  });
  if (group) {
    std::lock_guard lock(mu_);
    groups_[id] = group;
  }
  return group;
}

void JobCatalog::Prefetch(std::span<const int> job_ids) {
  std::vector<int> missing;
  {
    std::lock_guard lock(mu_);
    for (int id : job_ids) {
      if (!jobs_.contains(id)) missing.push_back(id);
    }
  }
  if (missing.empty()) return;
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  auto loaded = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<std::shared_ptr<const Job>> out;
    for (const auto& r :
         tx.exec_params(fmt::format("SELECT {} FROM job WHERE id = ANY($1::int[])", kJobColumns),
                        PgArray<int>(missing))) {
      out.push_back(std::make_shared<const Job>(JobFromRow(r)));
    }
    return out;
  });
  std::lock_guard lock(mu_);
  for (auto& j : loaded)
    jobs_[j->id] = std::move(j);
}

std::vector<std::string> JobCatalog::Addresses(const JobGroup& group) {
  std::vector<std::string> out;
  if (group.address_type == AddressType::kManual) {
    for (const auto& a : group.addresses)
      out.push_back(net::NormalizeAddress(a));
  } else {
    std::lock_guard lock(mu_);
    if (auto it = registry_.find(group.app_name); it != registry_.end()) out = it->second;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<std::string, std::vector<std::string>> JobCatalog::Registry() {
  std::lock_guard lock(mu_);
  return registry_;
}

void JobCatalog::RefreshRegistry() {
  const auto since = clock_.NowMs() - settings_.dead_after.count();
  auto fresh = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT registry_key, registry_value FROM executor_registry
            WHERE registry_group = 'EXECUTOR' AND updated_ms >= $1
            ORDER BY registry_key, registry_value
         )sql",
                                        since)) {
      out[r["registry_key"].as<std::string>()].push_back(net::NormalizeAddress(r["registry_value"].c_str()));
    }
    for (auto& [key, list] : out) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return out;
  });
  std::lock_guard lock(mu_);
  registry_.swap(fresh);
}

void JobCatalog::InvalidateJob(int id) {
  std::lock_guard lock(mu_);
  jobs_.erase(id);
}

void JobCatalog::InvalidateGroup(int id) {
  std::lock_guard lock(mu_);
  groups_.erase(id);
}

void JobCatalog::Clear() {
  std::lock_guard lock(mu_);
  jobs_.clear();
  groups_.clear();
}

void JobCatalog::OnNotification(const std::string& payload) {
  const auto colon = payload.find(':');
  if (colon == std::string::npos) return;
  int id = 0;
  const auto* begin = payload.data() + colon + 1;
  if (std::from_chars(begin, payload.data() + payload.size(), id).ec != std::errc{}) return;
  const std::string_view table(payload.data(), colon);
  if (table == "job") {
    InvalidateJob(id);
  } else if (table == "job_group") {
    InvalidateGroup(id);
  }
}

void JobCatalog::ListenLoop(const std::stop_token& stop) {
  ThrottledLog failures;
  while (!stop.stop_requested()) {
    try {
      pqxx::connection conn(pool_.dsn());
      ChangeReceiver receiver(conn, [this](const std::string& p) { OnNotification(p); });
      conn.get_notifs();  // the LISTEN is issued now
      Clear();            // anything cached before the LISTEN may be stale
      failures.Success();
      while (!stop.stop_requested())
        conn.await_notification(0, 250'000);
    } catch (const std::exception& e) {
      Clear();
      if (const auto n = failures.Failure(clock_.SteadyNow())) {
        spdlog::warn("change listener lost its connection ({} time(s) in a row), retrying: {}", *n, e.what());
      }
      clock_.WaitFor(std::chrono::seconds(1), stop);
    }
  }
}

}  // namespace cronwheel::admin
