#include "admin/results/lost_result_monitor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "admin/model/alert_rule.hpp"
#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {

LostResultMonitor::LostResultMonitor(ringwheel::Clock& clock, ResultStore& store, JobCatalog& catalog,
                                     ExecutorClient& client, std::string global_token,
                                     std::chrono::milliseconds lost_after)
    : clock_(clock),
      store_(store),
      catalog_(catalog),
      client_(client),
      global_token_(std::move(global_token)),
      lost_after_(lost_after) {}

int LostResultMonitor::RunOnce() {
  const auto now = clock_.NowMs();
  const auto candidates = store_.RunningSince(now - lost_after_.count(), 1000);
  if (candidates.empty()) return 0;
  const auto registry = catalog_.Registry();
  std::map<std::string, bool> beat_ok;  // one /beat per manual address per round
  std::vector<std::int64_t> lost;
  for (const auto& c : candidates) {
    bool gone = false;
    const auto address = net::NormalizeAddress(c.executor_address);
    if (c.manual_group) {
      auto it = beat_ok.find(address);
      if (it == beat_ok.end()) {
        it =
            beat_ok.emplace(address, client_.Beat(address, c.group_token.value_or(global_token_)).ok()).first;
      }
      gone = !it->second;
    } else {
      const auto r = registry.find(c.app_name);
      gone = r == registry.end() || std::find(r->second.begin(), r->second.end(), address) == r->second.end();
    }
    if (gone) lost.push_back(c.log_id);
  }
  if (lost.empty()) return 0;
  store_.MarkLost(lost, now, std::string(kLostResultMessage));
  spdlog::warn("{} fire(s) marked failed: their executors are gone and sent no result", lost.size());
  return static_cast<int>(lost.size());
}

}  // namespace cronwheel::admin
