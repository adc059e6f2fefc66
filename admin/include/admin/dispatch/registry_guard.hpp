#pragma once
// Which executor addresses the admin sends requests to (issue 21: registration was an SSRF). Any holder of
// a group's or the global access token can register an address, and the admin then POSTs /run, with the
// token header and the job's data, to it; without a guard that reached loopback services, the cloud
// metadata service (169.254.169.254) and the admin itself. The guard is checked twice:
//  1. at registration (`CheckAddress`, /api/registry): an address whose host is an IP literal in a refused
//     network is not stored; the executor gets XXL-JOB's code-500 envelope with the reason. A host name is
//     not resolved there (it could resolve differently later anyway);
//  2. when the admin connects (`CheckEndpoint`, HttpExecutorClient): every address a host name resolves to
//     is checked, and only allowed ones are connected to (DNS rebinding: a name that resolved to a public
//     address at registration and to 169.254.169.254 later); a configured group address is checked the
//     same way. Nothing allowed = not sent, and the fire fails saying why.
// An address is refused when it is in a network of `deny` (setting registry_deny; default the link-local
// networks 169.254.0.0/16 and fe80::/10, where cloud metadata services answer, and the unspecified
// 0.0.0.0/8 and ::/128, which connect to this host), when `allow` (setting registry_allow) is not empty
// and it is in none of its networks, or when it is the admin's own listen address and port (`self`,
// `self_port`: requests to itself). deny wins over allow. Loopback and private networks are allowed by
// default: the demo and the tests run everything on 127.0.0.1. An IPv4 address written as IPv6
// (::ffff:169.254.169.254) is checked as the IPv4 address it is.
//
// Thread-safety: immutable after Make; every member may be called from any thread. Complexity: a check is
// O(networks).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/result.hpp"
#include "cronwheel/net/address_allow_list.hpp"
#include "cronwheel/net/http_address.hpp"

namespace cronwheel::admin {

class RegistryGuard final {
 public:
  struct Settings {
    std::vector<std::string> allow;                 // registry_allow; empty = any address not denied
    std::vector<std::string> deny = DefaultDeny();  // registry_deny
    std::vector<std::string> self;                  // the admin's own addresses (IPs, CIDR)
    int self_port = 0;                              // the admin's listen port; 0 = no self check
  };
  // The default of registry_deny: 169.254.0.0/16, fe80::/10, 0.0.0.0/8, ::/128.
  static std::vector<std::string> DefaultDeny();
  // The addresses of this host the admin is reachable on when it listens on `listen`: the listen host if
  // it is an IP address; every loopback and interface address for a wildcard (0.0.0.0, ::); loopback for
  // "localhost"; what another host name resolves to. Reads the host's interfaces (getifaddrs) for a
  // wildcard.
  static std::vector<std::string> SelfAddresses(const net::HostPort& listen);

  // The guard, or Error::Invalid naming the setting and the entry when an entry of allow or deny does not
  // parse: "setting registry_deny: '10.0.0.0/33' is not valid (the prefix length must be 0..32): use an
  // IPv4 or IPv6 address or address/prefix, e.g. 127.0.0.1, 10.0.0.0/8, ::1, fd00::/8".
  static Result<RegistryGuard> Make(const Settings& settings);
  // The default settings: the default deny list, no allow list, no self check.
  RegistryGuard();

  // At registration: OK when `address` (an executor base URL, e.g. http://10.0.0.5:9999/) may be stored,
  // else Error::Forbidden saying why: "executor address 'http://169.254.169.254/' is refused: 169.254.169.254
  // is in a network the admin does not send to (setting registry_deny)". A host name passes (CheckEndpoint
  // runs on what it resolves to); an address that does not parse passes too (the registration's own check
  // refuses it).
  [[nodiscard]] Result<void> CheckAddress(std::string_view address) const;
  // At connect time: OK when the admin may connect to `ip` (an IP address as text) at `port`, else
  // Error::Forbidden naming the address and the setting that refuses it ("127.0.0.1 port 8080 is this
  // admin's own address (setting listen)").
  [[nodiscard]] Result<void> CheckEndpoint(std::string_view ip, int port) const;

 private:
  struct Empty {};
  explicit RegistryGuard(Empty /*nothing parsed yet*/) {}

  net::AddressAllowList allow_;
  net::AddressAllowList deny_;
  net::AddressAllowList self_;
  bool allow_all_ = true;  // registry_allow is empty
  int self_port_ = 0;
};

}  // namespace cronwheel::admin
