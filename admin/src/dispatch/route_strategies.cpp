#include "admin/dispatch/route_strategies.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <set>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::int64_t kCountLimit = 1'000'000;
constexpr int kVirtualNodes = 100;

std::int64_t Uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

}  // namespace

std::uint32_t XxlHash(std::string_view key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(key.data(), key.size(), digest, &len, EVP_md5(), nullptr);
  return static_cast<std::uint32_t>(digest[3]) << 24 | static_cast<std::uint32_t>(digest[2]) << 16 |
         static_cast<std::uint32_t>(digest[1]) << 8 | static_cast<std::uint32_t>(digest[0]);
}

RouteResult RandomRouter::Route(const RouteRequest& r) {
  cronwheel::MutexLock lock(mu_);
  const auto i = Uniform(rng_, 0, static_cast<std::int64_t>(r.addresses.size()) - 1);
  return {r.addresses[static_cast<std::size_t>(i)], ""};
}

bool ExpiringStateRouter::ExpireLocked(std::int64_t now_ms) {
  if (cleared_ms_ < 0) cleared_ms_ = now_ms;
  if (now_ms - cleared_ms_ < kDayMs) return false;
  cleared_ms_ = now_ms;
  return true;
}

RouteResult RoundRouter::Route(const RouteRequest& r) {
  cronwheel::MutexLock lock(mu_);
  if (ExpireLocked(r.now_ms)) counters_.clear();
  auto [it, fresh] = counters_.try_emplace(r.job_id, 0);
  if (fresh || it->second > kCountLimit) {
    it->second = Uniform(rng_, 0, 99);
  } else {
    ++it->second;
  }
  const auto i = static_cast<std::size_t>(it->second) % r.addresses.size();
  return {r.addresses[i], ""};
}

RouteResult ConsistentHashRouter::Route(const RouteRequest& r) {
  std::map<std::uint32_t, const std::string*> ring;
  for (const auto& a : r.addresses) {
    for (int i = 0; i < kVirtualNodes; ++i)
      ring[XxlHash(fmt::format("SHARD-{}-NODE-{}", a, i))] = &a;
  }
  const auto job_hash = XxlHash(std::to_string(r.job_id));
  auto it = ring.lower_bound(job_hash);
  if (it == ring.end()) it = ring.begin();
  return {*it->second, ""};
}

RouteResult LeastFrequentlyUsedRouter::Route(const RouteRequest& r) {
  cronwheel::MutexLock lock(mu_);
  if (ExpireLocked(r.now_ms)) counts_.clear();
  auto& counts = counts_[r.job_id];
  const auto size = static_cast<std::int64_t>(r.addresses.size());
  for (const auto& a : r.addresses) {
    auto [it, fresh] = counts.try_emplace(a, 0);
    if (fresh || it->second > kCountLimit) it->second = Uniform(rng_, 0, size - 1);
  }
  const std::set<std::string> present(r.addresses.begin(), r.addresses.end());
  std::erase_if(counts, [&](const auto& kv) { return !present.contains(kv.first); });
  const std::string* best = nullptr;
  std::int64_t best_count = 0;
  for (const auto& a : r.addresses) {
    const auto c = counts[a];
    if (best == nullptr || c < best_count) {
      best = &a;
      best_count = c;
    }
  }
  ++counts[*best];
  return {*best, ""};
}

RouteResult LeastRecentlyUsedRouter::Route(const RouteRequest& r) {
  cronwheel::MutexLock lock(mu_);
  if (ExpireLocked(r.now_ms)) order_.clear();
  auto& order = order_[r.job_id];
  const std::set<std::string> present(r.addresses.begin(), r.addresses.end());
  order.remove_if([&](const std::string& a) { return !present.contains(a); });
  for (const auto& a : r.addresses) {
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  }
  std::string eldest = order.front();
  order.pop_front();
  order.push_back(eldest);
  return {eldest, ""};
}

RouteResult ProbingRouter::Route(const RouteRequest& r) {
  std::string message;
  const char* what = probe_ == Probe::kBeat ? "Heartbeat" : "Idle check";
  for (const auto& a : r.addresses) {
    const auto e = probe_ == Probe::kBeat ? client_.Beat(a, r.token) : client_.IdleBeat(a, r.token, r.job_id);
    message += fmt::format("{}: address {}, code {}, msg {}\n", what, a, e.code, e.msg.value_or(""));
    if (e.ok()) return {a, message};
  }
  message += fmt::format("{} failed on every address", what);
  return {std::nullopt, message};
}

RouterSet::RouterSet(ExecutorClient& client)
    : failover_(client, ProbingRouter::Probe::kBeat), busyover_(client, ProbingRouter::Probe::kIdleBeat) {}

Router& RouterSet::For(RouteStrategy strategy) {
  switch (strategy) {
    case RouteStrategy::kLast:
      return last_;
    case RouteStrategy::kRandom:
      return random_;
    case RouteStrategy::kRound:
      return round_;
    case RouteStrategy::kConsistentHash:
      return hash_;
    case RouteStrategy::kLeastFrequentlyUsed:
      return lfu_;
    case RouteStrategy::kLeastRecentlyUsed:
      return lru_;
    case RouteStrategy::kFailover:
      return failover_;
    case RouteStrategy::kBusyover:
      return busyover_;
    case RouteStrategy::kFirst:
    case RouteStrategy::kShardingBroadcast:
      return first_;
  }
  return first_;
}

}  // namespace cronwheel::admin
