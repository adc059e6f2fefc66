#include "admin/dispatch/registry_guard.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>

#include <array>
#include <cstring>
#include <memory>

namespace cronwheel::admin {
namespace {

struct IfaddrsFree {
  void operator()(ifaddrs* a) const { freeifaddrs(a); }
};
struct AddrinfoFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

// The text of an interface address (IPv4 or IPv6), or "".
std::string AddressText(const sockaddr* sa) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);  // NOLINT: the socket API's own cast
    if (inet_ntop(AF_INET, &in->sin_addr, text.data(), text.size()) != nullptr) return text.data();
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);  // NOLINT: the socket API's own cast
    if (inet_ntop(AF_INET6, &in6->sin6_addr, text.data(), text.size()) != nullptr) return text.data();
  }
  return {};
}

// What a listen host name resolves to (the addresses the server binds), or nothing.
std::vector<std::string> Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* raw = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &raw) != 0) return {};
  const std::unique_ptr<addrinfo, AddrinfoFree> found(raw);
  std::vector<std::string> out;
  for (const addrinfo* a = found.get(); a != nullptr; a = a->ai_next) {
    if (auto text = AddressText(a->ai_addr); !text.empty()) out.push_back(std::move(text));
  }
  return out;
}

Result<net::AddressAllowList> ParseList(std::string_view setting, const std::vector<std::string>& list) {
  auto parsed = net::AddressAllowList::Parse(list);
  if (!parsed.ok())
    return Error::Invalid(fmt::format("setting {}: {}", setting, std::string(parsed.status().message())));
  return *std::move(parsed);
}

}  // namespace

std::vector<std::string> RegistryGuard::DefaultDeny() {
  return {"169.254.0.0/16", "fe80::/10", "0.0.0.0/8", "::/128"};
}

std::vector<std::string> RegistryGuard::SelfAddresses(const net::HostPort& listen) {
  if (listen.host == "localhost") return {"127.0.0.0/8", "::1"};
  if (net::ParseIpAddress(listen.host)) {
    if (listen.host != "0.0.0.0" && listen.host != "::") return {listen.host};
  } else {
    return Resolve(listen.host);
  }
  // A wildcard listener answers on every address of the host: loopback, the unspecified address (which
  // connects to this host) and each interface's.
  std::vector<std::string> out{"127.0.0.0/8", "::1", "0.0.0.0", "::"};
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return out;
  const std::unique_ptr<ifaddrs, IfaddrsFree> list(raw);
  for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    if (auto text = AddressText(a->ifa_addr); !text.empty()) out.push_back(std::move(text));
  }
  return out;
}

RegistryGuard::RegistryGuard() : RegistryGuard(*Make(Settings{})) {}

Result<RegistryGuard> RegistryGuard::Make(const Settings& settings) {
  auto allow = ParseList("registry_allow", settings.allow);
  if (!allow) return allow.error();
  auto deny = ParseList("registry_deny", settings.deny);
  if (!deny) return deny.error();
  // The admin's own addresses come from its listen setting and its interfaces, never from a user.
  auto self = ParseList("listen", settings.self);
  if (!self) return self.error();
  RegistryGuard g(Empty{});
  g.allow_ = std::move(*allow);
  g.deny_ = std::move(*deny);
  g.self_ = std::move(*self);
  g.allow_all_ = g.allow_.empty();
  g.self_port_ = settings.self_port;
  return g;
}

Result<void> RegistryGuard::CheckAddress(std::string_view address) const {
  const auto a = net::ParseExecutorAddress(address);
  if (!a.ok()) {
    return Error::Invalid(fmt::format("executor address '{}' is refused: {}", address.substr(0, 200),
                                      std::string(a.status().message())));
  }
  const auto ip = net::ParseNumericHost(a->host);
  if (!ip) return {};
  if (auto endpoint = CheckEndpoint(ip->address, a->port); !endpoint) {
    return Error::Forbidden(fmt::format("executor address '{}' is refused: {}", address.substr(0, 200),
                                        endpoint.error().message));
  }
  return {};
}

Result<void> RegistryGuard::CheckEndpoint(std::string_view ip, int port, Peer peer) const {
  const auto parsed = net::ParseNumericHost(ip);
  if (!parsed) return Error::Forbidden(fmt::format("'{}' is not an IP address", ip.substr(0, 64)));
  return CheckEndpoint(parsed->address, port, peer);
}

Result<void> RegistryGuard::CheckSocketAddress(const sockaddr* address, std::size_t length, Peer peer) const {
  const auto ip = net::FromSocketAddress(address, length);
  if (!ip) return Error::Forbidden("the admin connects to IPv4 and IPv6 addresses only");
  std::uint16_t port = 0;
  if (address->sa_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof in);
    port = ntohs(in.sin_port);
  } else {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof in6);
    port = ntohs(in6.sin6_port);
  }
  return CheckEndpoint(*ip, port, peer);
}

Result<void> RegistryGuard::CheckEndpoint(const net::IpBytes& ip, int port, Peer peer) const {
  // An IPv6 address that carries to an IPv4 address is checked as both (registry_guard.hpp).
  const auto embedded = net::EmbeddedIpv4(ip);
  const bool carried = embedded && *embedded != ip;
  const auto text =
      carried ? fmt::format("{} (which reaches the IPv4 address {})", net::IpText(ip), net::IpText(*embedded))
              : net::IpText(ip);
  const auto in = [&](const net::AddressAllowList& list) {
    return list.Allows(ip) || (carried && list.Allows(*embedded));
  };
  if (in(deny_)) {
    return Error::Forbidden(
        fmt::format("{} is in a network the admin does not send to (setting registry_deny)", text));
  }
  if (peer == Peer::kExecutor && !allow_all_ && !allow_.Allows(ip)) {
    return Error::Forbidden(
        fmt::format("{} is not in a network executors may be in (setting registry_allow)", text));
  }
  if (self_port_ != 0 && port == self_port_ && in(self_)) {
    return Error::Forbidden(
        fmt::format("{} port {} is this admin's own address (setting listen)", text, port));
  }
  return {};
}

}  // namespace cronwheel::admin
