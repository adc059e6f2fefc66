#include "admin/auth/login_throttle.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace cronwheel::admin {
namespace {

std::string LowerPrefix(std::string_view s) {
  std::string out(s.substr(0, 100));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

// --- Ticket ------------------------------------------------------------------------------------------------

LoginThrottle::Ticket::Ticket(Ticket&& other) noexcept
    : throttle_(std::exchange(other.throttle_, nullptr)),
      keys_(std::move(other.keys_)),
      user_(std::move(other.user_)),
      address_(std::move(other.address_)) {}

LoginThrottle::Ticket& LoginThrottle::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release(false, false, 0);
    throttle_ = std::exchange(other.throttle_, nullptr);
    keys_ = std::move(other.keys_);
    user_ = std::move(other.user_);
    address_ = std::move(other.address_);
  }
  return *this;
}

LoginThrottle::Ticket::~Ticket() {
  Release(false, false, 0);
}

void LoginThrottle::Ticket::Failed(std::int64_t now_ms) {
  Release(true, false, now_ms);
}

void LoginThrottle::Ticket::Succeeded(std::int64_t now_ms) {
  Release(false, true, now_ms);
}

void LoginThrottle::Ticket::Release(bool failed, bool succeeded, std::int64_t now_ms) {
  if (throttle_ == nullptr) return;
  throttle_->Finish(*this, failed, succeeded, now_ms);
  throttle_ = nullptr;
}

// --- LoginThrottle -----------------------------------------------------------------------------------------

LoginThrottle::Admission LoginThrottle::BeginLogin(std::string_view username, std::string_view address,
                                                   std::int64_t now_ms) {
  return Admit({"client:" + std::string(address)}, LowerPrefix(username), std::string(address), now_ms);
}

LoginThrottle::Admission LoginThrottle::Begin(const std::string& key, std::int64_t now_ms) {
  return Admit({key}, "", "", now_ms);
}

bool LoginThrottle::Familiar(std::string_view username, std::string_view address, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  return FamiliarLocked(LowerPrefix(username), address, now_ms);
}

std::size_t LoginThrottle::KeyCount() {
  std::lock_guard lock(mu_);
  return keys_.size();
}

LoginThrottle::Admission LoginThrottle::Admit(std::vector<std::string> keys, std::string user,
                                              std::string address, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  // A login from an address the user does not know is also held to the user name's key.
  if (!user.empty() && !FamiliarLocked(user, address, now_ms)) keys.push_back("user:" + user);
  std::int64_t wait = 0;
  for (const auto& key : keys) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) continue;
    auto& s = it->second;
    if (Forgotten(s, now_ms)) {
      s.failures = 0;
      s.wait_until_ms = 0;
      if (s.in_flight == 0) {
        keys_.erase(it);
        continue;
      }
    }
    if (now_ms < s.wait_until_ms) {
      wait = std::max(wait, s.wait_until_ms - now_ms);
    } else if (s.in_flight > 0 && s.failures + s.in_flight >= settings_.max_failures) {
      wait = std::max<std::int64_t>(wait, settings_.busy_wait.count());
    }
  }
  if (wait > 0) return Admission{.ticket = std::nullopt, .retry_after = std::chrono::milliseconds(wait)};
  for (const auto& key : keys)
    ++Slot(key, now_ms).in_flight;
  return Admission{.ticket = Ticket(this, std::move(keys), std::move(user), std::move(address)),
                   .retry_after = std::chrono::milliseconds(0)};
}

void LoginThrottle::Finish(const Ticket& ticket, bool failed, bool succeeded, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (const auto& key : ticket.keys_) {
    const auto it = keys_.find(key);
    if (it == keys_.end()) continue;  // cannot happen: a key with an attempt in flight is never evicted
    auto& s = it->second;
    --s.in_flight;
    if (failed) {
      if (Forgotten(s, now_ms)) s = KeyState{.failures = 0, .in_flight = s.in_flight};
      ++s.failures;
      s.last_failure_ms = now_ms;
      if (s.failures >= settings_.max_failures) s.wait_until_ms = now_ms + WaitAfter(s.failures);
    }
    if (s.in_flight == 0 && s.failures == 0) keys_.erase(it);
  }
  if (succeeded && !ticket.user_.empty()) RememberLocked(ticket.user_, ticket.address_, now_ms);
}

bool LoginThrottle::Forgotten(const KeyState& s, std::int64_t now_ms) const {
  return now_ms >= std::max(s.last_failure_ms, s.wait_until_ms) + settings_.forget_after.count();
}

std::int64_t LoginThrottle::WaitAfter(int failures) const {
  const int doublings = failures - settings_.max_failures;
  const auto cap = settings_.max_wait.count();
  std::int64_t wait = settings_.first_wait.count();
  for (int i = 0; i < doublings && wait < cap; ++i)
    wait *= 2;
  return std::min(wait, cap);
}

LoginThrottle::KeyState& LoginThrottle::Slot(const std::string& key, std::int64_t now_ms) {
  if (const auto it = keys_.find(key); it != keys_.end()) return it->second;
  if (keys_.size() >= settings_.max_keys) {
    // Keys whose failures are forgotten first; then the one with the oldest failure. Never a key with an
    // attempt in flight: its ticket will come back to it.
    std::erase_if(keys_,
                  [&](const auto& kv) { return kv.second.in_flight == 0 && Forgotten(kv.second, now_ms); });
    if (keys_.size() >= settings_.max_keys) {
      auto oldest = keys_.end();
      for (auto it = keys_.begin(); it != keys_.end(); ++it) {
        if (it->second.in_flight == 0 &&
            (oldest == keys_.end() || it->second.last_failure_ms < oldest->second.last_failure_ms)) {
          oldest = it;
        }
      }
      if (oldest != keys_.end()) keys_.erase(oldest);
    }
  }
  return keys_[key];
}

bool LoginThrottle::FamiliarLocked(const std::string& user, std::string_view address,
                                   std::int64_t now_ms) const {
  const auto it = familiar_.find(user);
  if (it == familiar_.end()) return false;
  return std::any_of(it->second.addresses.begin(), it->second.addresses.end(), [&](const FamiliarAddress& a) {
    return a.address == address && now_ms - a.last_ms < settings_.familiar_for.count();
  });
}

void LoginThrottle::RememberLocked(const std::string& user, const std::string& address, std::int64_t now_ms) {
  if (settings_.familiar_per_user == 0 || settings_.max_users == 0) return;
  if (!familiar_.contains(user) && familiar_.size() >= settings_.max_users) {
    const auto oldest =
        std::min_element(familiar_.begin(), familiar_.end(),
                         [](const auto& a, const auto& b) { return a.second.last_ms < b.second.last_ms; });
    familiar_.erase(oldest);
  }
  auto& u = familiar_[user];
  std::erase_if(u.addresses, [&](const FamiliarAddress& a) { return a.address == address; });
  u.addresses.push_back({address, now_ms});
  if (u.addresses.size() > settings_.familiar_per_user) u.addresses.erase(u.addresses.begin());
  u.last_ms = now_ms;
}

}  // namespace cronwheel::admin
