#include "admin/schedule/partitions.hpp"

#include <algorithm>

namespace cronwheel::admin {

std::vector<std::string> LiveNodes(std::span<const NodeBeat> nodes, std::int64_t now_ms,
                                   std::int64_t grace_ms) {
  std::vector<std::string> live;
  for (const auto& n : nodes) {
    if (n.lease_until_ms >= now_ms && n.heartbeat_ms >= now_ms - grace_ms) live.push_back(n.node_id);
  }
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  return live;
}

std::vector<int> AssignedPartitions(int total, std::span<const std::string> live, std::string_view self) {
  std::vector<std::string> members(live.begin(), live.end());
  const auto pos = std::lower_bound(members.begin(), members.end(), self);
  if (pos == members.end() || *pos != self) members.insert(pos, std::string(self));
  const auto rank =
      static_cast<int>(std::lower_bound(members.begin(), members.end(), self) - members.begin());
  const auto n = static_cast<int>(members.size());
  std::vector<int> mine;
  for (int p = rank; p < total; p += n)
    mine.push_back(p);
  return mine;
}

}  // namespace cronwheel::admin
