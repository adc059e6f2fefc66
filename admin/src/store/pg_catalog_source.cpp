#include "admin/store/pg_catalog_source.hpp"

#include <fmt/format.h>

#include <charconv>

#include "store/pg_util.hpp"
#include "store/rows.hpp"

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

std::vector<Job> PgCatalogSource::LoadJobs(std::span<const int> ids) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<Job> out;
    for (const auto& r : tx.exec_params(
             fmt::format("SELECT {} FROM job WHERE id = ANY($1::int[])", kJobColumns), PgArray<int>(ids))) {
      out.push_back(JobFromRow(r));
    }
    return out;
  });
}

std::optional<JobGroup> PgCatalogSource::LoadGroup(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobGroup> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1", kGroupColumns), id);
    if (rows.empty()) return std::nullopt;
    return GroupFromRow(rows[0]);
  });
}

RegistrySnapshot PgCatalogSource::LoadRegistry(std::int64_t since_ms) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    RegistrySnapshot out;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT registry_key, registry_value, run_at, clock_offset_ms, clock_error_ms FROM executor_registry
            WHERE registry_group = 'EXECUTOR' AND updated_ms >= $1
         )sql",
                                        since_ms)) {
      auto address = r["registry_value"].as<std::string>();
      if (r["run_at"].as<bool>() && !r["clock_offset_ms"].is_null()) {
        out.run_at[address] = {r["clock_offset_ms"].as<std::int64_t>(),
                               r["clock_error_ms"].as<std::int64_t>()};
      }
      out.apps[r["registry_key"].as<std::string>()].push_back(std::move(address));
    }
    return out;
  });
}

void PgCatalogSource::ListenForChanges(const std::function<void()>& on_listening,
                                       const std::function<void(std::string_view table, int id)>& on_change,
                                       const std::stop_token& stop) {
  pqxx::connection conn(pool_.dsn());
  ChangeReceiver receiver(conn, [&](const std::string& payload) {
    const auto colon = payload.find(':');
    if (colon == std::string::npos) return;
    int id = 0;
    const auto* begin = payload.data() + colon + 1;
    if (std::from_chars(begin, payload.data() + payload.size(), id).ec != std::errc{}) return;
    on_change(std::string_view(payload.data(), colon), id);
  });
  conn.get_notifs();  // the LISTEN is issued now
  on_listening();
  while (!stop.stop_requested())
    conn.await_notification(0, 250'000);
}

}  // namespace cronwheel::admin
