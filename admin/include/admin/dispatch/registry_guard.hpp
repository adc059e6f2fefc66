#pragma once
// Where the admin sends requests (issue 21: registration was an SSRF; issue 44, F6: a textual form it did not
// recognise as an address went around it). Any holder of a group's or the global access token can register an
// address, and the admin then POSTs /run, with the token header and the job's data, to it; without a guard
// that reached loopback services, the cloud metadata service (169.254.169.254) and the admin itself. This is
// the one guard of every request the admin makes over the network:
//  1. at registration (`CheckAddress`, /api/registry): the address must be written as
//     net::ParseExecutorAddress accepts (no zone id, no IPv4 in another form than the dotted quad, no user
//     info), and a host that is an IP address must be in a network the guard allows; else nothing is stored
//     and the executor gets XXL-JOB's code-500 envelope with the reason. A host name is not resolved there
//     (it could resolve differently later anyway);
//  2. on every connection, to the socket address it is made to (`CheckSocketAddress`): the executor client
//     (HttpExecutorClient) checks an IP literal and every address a host name resolves to, and connects only
//     to allowed ones (DNS rebinding: a name that resolved to a public address at registration and to
//     169.254.169.254 later); a MANUAL group's configured address is checked the same way. The admin's
//     libcurl requests (alarm webhooks and alert channels, e-mail, the OpenID provider) are checked on each
//     address libcurl is about to connect to, as Peer::kService. Nothing allowed = not sent, and the request
//     fails saying why.
// What is checked is the address's bytes, never its text (cronwheel/net/ip_address.hpp reads every text form
// a resolver reads). An address is refused when it is in a network of `deny` (setting registry_deny; default
// the link-local networks 169.254.0.0/16 and fe80::/10, where cloud metadata services answer, and the
// unspecified 0.0.0.0/8 and ::/128, which connect to this host), when `allow` (setting registry_allow) is not
// empty and it is in none of its networks (executors only: allow names the networks executors are in, not
// where a webhook's service or the OpenID provider is), or when it is the admin's own listen address and port
// (`self`, `self_port`: requests to itself). deny wins over allow. An IPv6 address that embeds an IPv4
// address a connection reaches (IPv4-mapped ::ffff:169.254.169.254, IPv4-compatible ::169.254.169.254, NAT64
// 64:ff9b::a9fe:a9fe, 6to4 2002:a9fe:a9fe::; net::EmbeddedIpv4) is refused when either address is denied or
// the admin's own, and allowed only when the IPv6 address itself is in `allow` (an IPv4-mapped address is the
// IPv4 address). Loopback and private networks are allowed by default: the demo and the tests run everything
// on 127.0.0.1.
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
#include "cronwheel/net/ip_address.hpp"

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

  // Who a connection is to: an executor (every rule) or a service the operator configured or allowed (a
  // webhook's, an alert channel's, the SMTP server, the OpenID provider: registry_allow does not apply).
  enum class Peer { kExecutor, kService };

  // At registration: OK when `address` (an executor base URL, e.g. http://10.0.0.5:9999/) may be stored, else
  // Error::Invalid when it is not written as net::ParseExecutorAddress accepts ("executor address
  // 'http://[::ffff:127.0.0.5%1]:9999/' is refused: address ... is not valid: its host ... has a zone id
  // ..."), or Error::Forbidden when its host is an IP address the guard refuses: "executor address
  // 'http://169.254.169.254/' is refused: 169.254.169.254 is in a network the admin does not send to (setting
  // registry_deny)". A host name passes (the connection is checked on what it resolves to).
  [[nodiscard]] Result<void> CheckAddress(std::string_view address) const;
  // OK when the admin may connect to `ip` at `port`, else Error::Forbidden naming the address and the setting
  // that refuses it ("127.0.0.1 port 8080 is this admin's own address (setting listen)").
  [[nodiscard]] Result<void> CheckEndpoint(const net::IpBytes& ip, int port,
                                           Peer peer = Peer::kExecutor) const;
  // The same for an IP address as text, in any form net::ParseNumericHost reads (a zone id is ignored: the
  // address is checked); Error::Forbidden for text that is no IP address.
  [[nodiscard]] Result<void> CheckEndpoint(std::string_view ip, int port, Peer peer = Peer::kExecutor) const;
  // At connect time: the socket address a connection is about to be made to (sockaddr_in or sockaddr_in6,
  // `length` bytes: Boost.Asio's endpoint.data(), libcurl's opensocket address). Error::Forbidden for any
  // other family.
  [[nodiscard]] Result<void> CheckSocketAddress(const sockaddr* address, std::size_t length,
                                                Peer peer = Peer::kExecutor) const;

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
