#include "admin/auth/familiar_addresses.hpp"

#include <algorithm>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

bool MemoryFamiliarAddresses::Known(std::string_view user, std::string_view address, std::int64_t now_ms) {
  cronwheel::MutexLock lock(mu_);
  const auto it = users_.find(std::string(user));
  if (it == users_.end()) return false;
  return std::any_of(it->second.addresses.begin(), it->second.addresses.end(), [&](const Address& a) {
    return a.address == address && now_ms - a.last_ms < settings_.familiar_for.count();
  });
}

void MemoryFamiliarAddresses::Remember(std::string_view user, std::string_view address, std::int64_t now_ms) {
  if (settings_.per_user == 0 || settings_.max_users == 0) return;
  cronwheel::MutexLock lock(mu_);
  const std::string key(user);
  if (!users_.contains(key) && users_.size() >= settings_.max_users) {
    const auto oldest = std::min_element(users_.begin(), users_.end(), [](const auto& a, const auto& b) {
      return a.second.last_ms < b.second.last_ms;
    });
    users_.erase(oldest);
  }
  auto& u = users_[key];
  std::erase_if(u.addresses, [&](const Address& a) {
    return a.address == address || now_ms - a.last_ms >= settings_.familiar_for.count();
  });
  u.addresses.push_back({std::string(address), now_ms});
  if (u.addresses.size() > settings_.per_user) u.addresses.erase(u.addresses.begin());
  u.last_ms = now_ms;
}

}  // namespace cronwheel::admin
