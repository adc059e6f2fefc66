#pragma once
// Which connections an HTTP server keeps open, without the sockets: a pure class driven by `now`
// (cronwheel/net/http_server.hpp runs it; docs/security.md, "The HTTP servers: what a peer without
// credentials can cost"). Unit tests drive it with made-up instants
// (tests/unit/common/connection_quota_test.cpp).
//
// Why (security review 2, finding N1): one cap per peer address for every connection let anyone who can
// reach the port shut out the authenticated clients of that address. 256 idle connections from 127.0.0.1
// made the admin refuse its executor on the same host; behind a reverse proxy every console user is one
// address. So connections are of two kinds:
//  * *unauthenticated*: every connection starts so, and stays so until a request on it passes a route's
//    credential check (an executor's token, a console session, an API token: the server calls
//    Authenticate). Capped per address (`max_unauthenticated_per_address`) and in all
//    (`max_unauthenticated`);
//  * *authenticated*: capped per address (`max_authenticated_per_address`) and never closed to make room.
//    A connection that passes a credential check while its address already has that many stays
//    unauthenticated (it is served, but counts and may be closed as one).
// All connections together are capped by `max_connections` (file descriptors).
//
// A new connection is never refused for a cap that an unauthenticated connection could make room under:
// the quota closes one instead (Admission::evicted), chosen so that a flood pays for itself:
//  * over its own address's unauthenticated cap: one of that address's unauthenticated connections;
//  * over the unauthenticated or the total cap: one of the address holding the most unauthenticated
//    connections (of equal ones, the address that sorts last);
// and, within an address, an *idle* one (waiting for a request, or for the rest of its head) before a
// *busy* one (a whole head was read: its request is being admitted, read, handled or answered), the one idle
// (or busy) the longest first. A peer holding idle connections to keep others out loses the oldest one to
// each newcomer; a well-behaved client's connection is idle for the moment between its connect and its
// request's head, the youngest of all. The only refusal (503 at accept) is when every open connection is
// authenticated and `max_connections` are open.
//
// Ids are given by Open, never reused. Units: instants are std::chrono::steady_clock time points.
// Thread-safety: none (the server calls it under its lock). Complexity: Open, Idle, Busy, Authenticate
// and Close are O(log n), n the open connections.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace cronwheel::net {

struct ConnectionLimits {
  std::size_t max_connections = 4096;                // open connections in all
  std::size_t max_authenticated_per_address = 256;   // authenticated ones from one peer address
  std::size_t max_unauthenticated = 1024;            // unauthenticated ones in all
  std::size_t max_unauthenticated_per_address = 64;  // unauthenticated ones from one peer address
};

class ConnectionQuota {
 public:
  using Time = std::chrono::steady_clock::time_point;
  using Id = std::uint64_t;

  struct Admission {
    bool admitted = false;
    Id id = 0;  // the new connection's, when admitted
    // A connection to close now to make room for this one. It no longer counts (its Close is a no-op).
    std::optional<Id> evicted;
  };

  // Counts for one address, or (address "") for all.
  struct Counts {
    std::size_t authenticated = 0;
    std::size_t unauthenticated = 0;
  };

  explicit ConnectionQuota(ConnectionLimits limits);

  // A connection from `address` was accepted at `now`: admitted (unauthenticated, idle since `now`),
  // perhaps closing another; or refused.
  Admission Open(const std::string& address, Time now);
  // The connection waits for its next request from `now` (after an answer on a kept connection).
  void Idle(Id id, Time now);
  // A request's whole head arrived at `now`.
  void Busy(Id id, Time now);
  // A request on the connection passed a credential check. Returns whether it now counts as
  // authenticated (false: its address has max_authenticated_per_address already, or the id is unknown).
  bool Authenticate(Id id);
  // The connection closed. Unknown (or evicted) ids are ignored.
  void Close(Id id);

  [[nodiscard]] Counts CountsOf(const std::string& address) const;
  [[nodiscard]] Counts Total() const;
  [[nodiscard]] std::size_t open() const { return connections_.size(); }
  [[nodiscard]] const ConnectionLimits& limits() const { return limits_; }

 private:
  // Order of eviction within an address: idle before busy, then the longest in that state, then the id.
  using EvictionKey = std::tuple<bool /*busy*/, Time, Id>;
  struct Connection {
    std::string address;
    bool authenticated = false;
    EvictionKey key;
  };
  struct Address {
    std::size_t authenticated = 0;
    std::set<EvictionKey> unauthenticated;
  };

  void SetState(Id id, bool busy, Time now);
  void Forget(std::map<std::string, Address>::iterator at);
  void Rank(const std::string& address, std::size_t before, std::size_t after);

  ConnectionLimits limits_;
  Id next_id_ = 1;
  std::unordered_map<Id, Connection> connections_;
  std::map<std::string, Address> addresses_;
  // (unauthenticated count, address) for every address with unauthenticated connections: the largest last.
  std::set<std::pair<std::size_t, std::string>> by_unauthenticated_;
  std::size_t unauthenticated_ = 0;
};

}  // namespace cronwheel::net
