#include "admin/results/lost_result_monitor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "admin/store/fire_log.hpp"
#include "cronwheel/net/http_address.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {

LostResultMonitor::LostResultMonitor(ringwheel::Clock& clock, PgPool& pool, JobCatalog& catalog,
                                     ExecutorClient& client, std::string global_token,
                                     std::chrono::milliseconds lost_after)
    : clock_(clock),
      pool_(pool),
      catalog_(catalog),
      client_(client),
      global_token_(std::move(global_token)),
      lost_after_(lost_after) {}

int LostResultMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  struct Candidate {
    std::int64_t id;
    std::string address;
    std::string app_name;
    bool manual;
    std::string token;
  };
  auto candidates = WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<Candidate> out;
    for (const auto& r : tx.exec_params(R"sql(
           SELECT o.log_id AS id, o.executor_address, g.app_name, g.address_type, g.access_token
             FROM fire_open o JOIN job_group g ON g.id = o.group_id
            WHERE o.trigger_ms > 0 AND o.trigger_ms <= $1
            ORDER BY o.log_id LIMIT 1000
         )sql",
                                        now - lost_after_.count())) {
      out.push_back({r["id"].as<std::int64_t>(), r["executor_address"].as<std::string>(),
                     r["app_name"].as<std::string>(), r["address_type"].as<std::string>() == "MANUAL",
                     r["access_token"].is_null() ? global_token_ : r["access_token"].as<std::string>()});
    }
    return out;
  });
  if (candidates.empty()) return 0;
  const auto registry = catalog_.Registry();
  std::map<std::string, bool> beat_ok;  // one /beat per manual address per round
  std::vector<std::int64_t> lost;
  for (const auto& c : candidates) {
    bool gone = false;
    const auto address = net::NormalizeAddress(c.address);
    if (c.manual) {
      auto it = beat_ok.find(address);
      if (it == beat_ok.end()) it = beat_ok.emplace(address, client_.Beat(address, c.token).ok()).first;
      gone = !it->second;
    } else {
      const auto r = registry.find(c.app_name);
      gone = r == registry.end() || std::find(r->second.begin(), r->second.end(), address) == r->second.end();
    }
    if (gone) lost.push_back(c.id);
  }
  if (lost.empty()) return 0;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    fire_log::MarkLost(tx, lost, now,
                       "Job result lost, marked as failure: the executor is gone and sent no result");
    tx.commit();
  });
  spdlog::warn("{} fire(s) marked failed: their executors are gone and sent no result", lost.size());
  return static_cast<int>(lost.size());
}

}  // namespace cronwheel::admin
