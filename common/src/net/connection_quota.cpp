#include "cronwheel/net/connection_quota.hpp"

#include <algorithm>

namespace cronwheel::net {

ConnectionQuota::ConnectionQuota(ConnectionLimits limits) : limits_(limits) {
  // A cap of 0 would refuse everything without making room: at least one of each.
  limits_.max_connections = std::max<std::size_t>(limits_.max_connections, 1);
  limits_.max_unauthenticated = std::max<std::size_t>(limits_.max_unauthenticated, 1);
  limits_.max_unauthenticated_per_address = std::max<std::size_t>(limits_.max_unauthenticated_per_address, 1);
}

void ConnectionQuota::Rank(const std::string& address, std::size_t before, std::size_t after) {
  if (before > 0) by_unauthenticated_.erase({before, address});
  if (after > 0) by_unauthenticated_.emplace(after, address);
}

void ConnectionQuota::Forget(std::map<std::string, Address>::iterator at) {
  if (at->second.authenticated == 0 && at->second.unauthenticated.empty()) addresses_.erase(at);
}

ConnectionQuota::Admission ConnectionQuota::Open(const std::string& address, Time now) {
  Admission out;
  const auto here = addresses_.find(address);
  const std::size_t unauthenticated_here = here == addresses_.end() ? 0 : here->second.unauthenticated.size();
  std::optional<Id> victim;
  if (unauthenticated_here >= limits_.max_unauthenticated_per_address) {
    // Over its own address's share: that address pays, with its idle-longest connection.
    victim = std::get<Id>(*here->second.unauthenticated.begin());
  } else if (unauthenticated_ >= limits_.max_unauthenticated ||
             connections_.size() >= limits_.max_connections) {
    if (by_unauthenticated_.empty()) return out;  // every open connection is authenticated: refused
    const auto& heaviest = by_unauthenticated_.rbegin()->second;
    victim = std::get<Id>(*addresses_.at(heaviest).unauthenticated.begin());
  }
  if (victim) {
    Close(*victim);
    out.evicted = victim;
  }
  out.admitted = true;
  out.id = next_id_++;
  Connection c{.address = address, .authenticated = false, .key = {false, now, out.id}};
  auto& slot = addresses_[address];
  const auto before = slot.unauthenticated.size();
  slot.unauthenticated.insert(c.key);
  Rank(address, before, before + 1);
  ++unauthenticated_;
  connections_.emplace(out.id, std::move(c));
  return out;
}

void ConnectionQuota::SetState(Id id, bool busy, Time now) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  auto& c = it->second;
  const EvictionKey key{busy, now, id};
  if (!c.authenticated) {
    auto& set = addresses_.at(c.address).unauthenticated;
    set.erase(c.key);
    set.insert(key);
  }
  c.key = key;
}

void ConnectionQuota::Idle(Id id, Time now) {
  SetState(id, false, now);
}

void ConnectionQuota::Busy(Id id, Time now) {
  SetState(id, true, now);
}

bool ConnectionQuota::Authenticate(Id id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  auto& c = it->second;
  if (c.authenticated) return true;
  auto& slot = addresses_.at(c.address);
  if (slot.authenticated >= limits_.max_authenticated_per_address) return false;
  const auto before = slot.unauthenticated.size();
  slot.unauthenticated.erase(c.key);
  Rank(c.address, before, before - 1);
  --unauthenticated_;
  ++slot.authenticated;
  c.authenticated = true;
  return true;
}

void ConnectionQuota::Close(Id id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const auto& c = it->second;
  const auto slot = addresses_.find(c.address);
  if (c.authenticated) {
    --slot->second.authenticated;
  } else {
    const auto before = slot->second.unauthenticated.size();
    slot->second.unauthenticated.erase(c.key);
    Rank(c.address, before, before - 1);
    --unauthenticated_;
  }
  Forget(slot);
  connections_.erase(it);
}

ConnectionQuota::Counts ConnectionQuota::CountsOf(const std::string& address) const {
  const auto it = addresses_.find(address);
  if (it == addresses_.end()) return {};
  return {.authenticated = it->second.authenticated, .unauthenticated = it->second.unauthenticated.size()};
}

ConnectionQuota::Counts ConnectionQuota::Total() const {
  return {.authenticated = connections_.size() - unauthenticated_, .unauthenticated = unauthenticated_};
}

}  // namespace cronwheel::net
