#include "admin/auth/login_throttle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "cronwheel/mutex.hpp"

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
  auto* throttle = std::exchange(throttle_, nullptr);
  throttle->Finish(*this, failed, now_ms);
  if (succeeded && !user_.empty()) throttle->familiar_.Remember(user_, address_, now_ms);
}

// --- LoginThrottle -----------------------------------------------------------------------------------------

LoginThrottle::LoginThrottle(Settings settings, FamiliarAddresses* familiar)
    : settings_(settings),
      own_familiar_(familiar != nullptr ? nullptr
                                        : std::make_unique<MemoryFamiliarAddresses>(
                                              FamiliarSettings{.familiar_for = settings.familiar_for,
                                                               .per_user = settings.familiar_per_user,
                                                               .max_users = settings.max_users})),
      familiar_(familiar != nullptr ? *familiar : *own_familiar_) {}

LoginThrottle::Admission LoginThrottle::BeginLogin(std::string_view username, std::string_view address,
                                                   std::int64_t now_ms) {
  auto user = LowerPrefix(username);
  std::string at(address);
  // Asked before the lock: the store may be a database.
  std::vector<std::string> keys;
  if (familiar_.Known(user, at, now_ms)) {
    keys.push_back(fmt::format("familiar:{}|{}", user, at));
  } else {
    keys.push_back("client:" + at);
    keys.push_back("user:" + user);
  }
  return Admit(std::move(keys), std::move(user), std::move(at), now_ms);
}

LoginThrottle::Admission LoginThrottle::Begin(const std::string& key, std::int64_t now_ms) {
  return Admit({key}, "", "", now_ms);
}

bool LoginThrottle::Familiar(std::string_view username, std::string_view address, std::int64_t now_ms) {
  return familiar_.Known(LowerPrefix(username), address, now_ms);
}

std::size_t LoginThrottle::KeyCount() {
  cronwheel::MutexLock lock(mu_);
  return keys_.size();
}

LoginThrottle::Admission LoginThrottle::Admit(std::vector<std::string> keys, std::string user,
                                              std::string address, std::int64_t now_ms) {
  cronwheel::MutexLock lock(mu_);
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

void LoginThrottle::Finish(const Ticket& ticket, bool failed, std::int64_t now_ms) {
  cronwheel::MutexLock lock(mu_);
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

}  // namespace cronwheel::admin
