#pragma once
// The admin's side of XXL-JOB's executor protocol (docs/xxl-job-protocol.md §1-§2): POST /run, /beat,
// /idleBeat, /kill and /log to an executor address, with the access-token header and a timeout. Transport
// failures are folded into the envelope as XXL-JOB's client does (code 500 with a message naming the
// address), so callers handle one shape; Run also says how far the request got (Delivery), which decides
// whether the fire may be sent again (docs/architecture.md, "Delivery to executors").
//
// Connections (HttpExecutorClient). Executors users run are often small servers with a thread per open
// connection, a short listen backlog (cpp-httplib's is 5, Python's socketserver's too) and a keep-alive
// timeout of a few seconds. A burst of fires must neither open many connections at once (the SYNs beyond the
// backlog are dropped: a 1 s retransmit, or a reset after the request was written) nor hold more
// connections than the executor has threads (a connection beyond them waits in its queue). So, per
// executor origin:
//  * connections are kept open across bursts and reused, most recently used first, for as long as the
//    executor keeps them open: before a pooled connection is used it is checked (poll) and one the executor
//    has closed is dropped before anything is written to it;
//  * the executor's keep-alive is learned: from a `Keep-Alive: timeout=N` answer header when it sends one,
//    else from the shortest idle time after which a pooled connection was found closed (observations under
//    `min_keep_alive_observation` are ignored: a restarted executor closes young connections too).
//    Connections idle for more than 3/4 of it are closed by the admin instead, so a request is never
//    written into a connection the executor is closing at that moment. Until it is known, connections
//    idle up to `max_idle` are reused. A learned value is forgotten after `keep_alive_memory`;
//  * new connections are opened gradually: only when no pooled connection is free, and at most 2 attempts
//    started per 10 ms, so the pool grows with demand (to 32 in 160 ms) and a burst of 30 fires to a fast
//    executor uses a few connections, not 30, while the SYNs in flight at once stay well within a listen
//    backlog of 5;
//  * a new connection whose first request has waited more than 20 ms for its answer is taken to wait for a
//    server thread that the admin's own idle connections hold (a thread-per-connection server gives each
//    open connection a thread until its keep-alive runs out): for each such request one connection is
//    closed ("yielded"), the least recently used idle one or the next that comes back, which frees a thread
//    at once rather than after the executor's keep-alive timeout (2 s of lag, measured against a server with
//    8 threads). A keeper thread of the client watches for this; it sleeps while no new connection awaits
//    its first answer;
//  * at most `max_connections_per_origin` (setting executor_connections) are open; a request beyond waits
//    for a free one at most `connect_timeout` (real time: a transport timeout, like connect_timeout itself),
//    then fails as not sent, naming the origin, the bound and the wait.
//
// Retries (XXL-JOB's client sends once and records any failure): this client never sends a request twice.
// Run reports kNotSent when nothing of the request can have reached the executor (the connection could not
// be made, no connection was free, the request could not be written whole: an HTTP server cannot act on a
// request it has not read to the end), which TriggerService sends again within the misfire threshold; and
// kUnknown when the request was written but no answer came (the executor may be running it), which is
// recorded as a failed trigger and left to the job's retry and FAILOVER rules.
//
// Thread-safety: every call may be made from any number of threads at once.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace httplib {
class Client;
}

namespace cronwheel::admin {

class ExecutorClient {
 public:
  // How far a /run got.
  enum class Delivery {
    kAnswered,  // the executor answered (`envelope` is its answer, whatever it says)
    kNotSent,   // nothing of the request reached the executor: safe to send again
    kUnknown,   // written, but no answer: the executor may have received it and run it
    kInvalid,   // not sent, and sending again would not help (the address does not parse)
  };
  struct RunReply {
    xxljob::Envelope envelope;
    Delivery delivery = Delivery::kAnswered;
  };

  virtual ~ExecutorClient() = default;
  // `token` empty = send no token header.
  virtual RunReply Run(const std::string& address, const std::string& token,
                       const xxljob::TriggerParam& param) = 0;
  virtual xxljob::Envelope Beat(const std::string& address, const std::string& token) = 0;
  virtual xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Log(const std::string& address, const std::string& token,
                               const xxljob::LogParam& param) = 0;

 protected:
  ExecutorClient() = default;
  ExecutorClient(const ExecutorClient&) = default;
  ExecutorClient& operator=(const ExecutorClient&) = default;
};

class HttpExecutorClient final : public ExecutorClient {
 public:
  struct Settings {
    std::chrono::milliseconds connect_timeout{3000};  // XXL-JOB: 3 s; also the wait for a free connection
    std::chrono::milliseconds read_timeout{3000};     // XXL-JOB: xxl.job.timeout = 3 s
    std::size_t max_connections_per_origin = 32;      // open connections to one executor (0 is taken as 1)
    // Reuse limit while the executor's keep-alive is unknown (XXL-JOB's Netty executor closes connections
    // idle for 90 s).
    std::chrono::milliseconds max_idle{60'000};
    std::chrono::milliseconds min_keep_alive_observation{1000};
    std::chrono::milliseconds keep_alive_memory{std::chrono::minutes(10)};
  };
  // What the pool of one executor origin did so far (tests, diagnostics).
  struct OriginStats {
    std::uint64_t opened = 0;        // connections opened
    std::uint64_t reused = 0;        // requests sent on a pooled connection
    std::uint64_t found_closed = 0;  // pooled connections the executor had closed, dropped before use
    std::uint64_t retired = 0;       // pooled connections closed by the admin (idle past the reuse limit)
    std::uint64_t yielded = 0;       // connections closed, not pooled, to free an executor thread
    std::size_t open = 0;            // open now (idle, in use or connecting)
    std::size_t most_open = 0;       // the most open at once
    std::optional<std::chrono::milliseconds> keep_alive;  // learned, if any
  };

  HttpExecutorClient(Settings settings, ringwheel::Clock& clock);
  HttpExecutorClient() : HttpExecutorClient(Settings{}, ringwheel::RealClock::Instance()) {}
  ~HttpExecutorClient() override;
  HttpExecutorClient(const HttpExecutorClient&) = delete;
  HttpExecutorClient& operator=(const HttpExecutorClient&) = delete;

  RunReply Run(const std::string& address, const std::string& token,
               const xxljob::TriggerParam& param) override;
  xxljob::Envelope Beat(const std::string& address, const std::string& token) override;
  xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Log(const std::string& address, const std::string& token,
                       const xxljob::LogParam& param) override;

  // The pool of `address`'s origin; all zero for an origin never used.
  [[nodiscard]] OriginStats Stats(const std::string& address);
  // The sums over every origin (metrics); `keep_alive` and `most_open` are not summed (left empty / 0).
  [[nodiscard]] OriginStats TotalStats() const;

 private:
  struct Connection {
    std::unique_ptr<httplib::Client> client;
    ringwheel::SteadyTime last_used{};
  };
  struct Origin {
    std::vector<Connection> idle;                // least recently used first
    std::size_t open = 0;                        // idle + in use
    std::deque<ringwheel::SteadyTime> attempts;  // when the recent connection attempts started
    // New connections whose first answer is awaited, by start; true once a connection was closed for it.
    std::multimap<ringwheel::SteadyTime, bool> first_requests;
    std::condition_variable changed;
    std::optional<std::chrono::milliseconds> keep_alive;
    ringwheel::SteadyTime keep_alive_learned{};
    OriginStats stats;
  };
  struct Lease {
    std::unique_ptr<httplib::Client> client;
    bool fresh = false;               // a new connection
    ringwheel::SteadyTime started{};  // when it was opened (fresh)
  };

  RunReply Post(const std::string& address, std::string_view method, const std::string& token,
                const std::string& body);
  Origin& OriginFor(const std::string& name);
  // A pooled connection the executor still holds open, or a new one when the pool may grow; waits (at most
  // connect_timeout) while neither is possible. Empty client on timeout.
  Lease Acquire(Origin& origin, const std::string& name);
  // Gives a connection back: pooled if it is still open and `reusable`, else closed.
  void Release(Origin& origin, Lease lease, bool reusable);
  // Call with mu_ held: the reuse limit of connections to `origin` now.
  std::chrono::milliseconds ReuseLimit(Origin& origin, ringwheel::SteadyTime now) const;
  void Learn(Origin& origin, std::chrono::milliseconds keep_alive, ringwheel::SteadyTime now);
  // Call with mu_ held: marks the oldest first request stalled past kFirstRequestStall that no closed
  // connection has made up for yet; false when there is none.
  bool TakeStall(Origin& origin, ringwheel::SteadyTime now);
  std::unique_ptr<httplib::Client> NewClient(const std::string& origin) const;

  // The keeper thread: closes the idle connections of origins where a new connection's first request stalls.
  void Keep(const std::stop_token& stop);

  Settings settings_;
  ringwheel::Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable_any first_request_started_;  // wakes the keeper
  std::size_t first_requests_ = 0;                     // over all origins
  // std::unordered_map keeps references to its elements valid across rehashing; entries are never erased.
  std::unordered_map<std::string, Origin> origins_;
  std::jthread keeper_;  // last: stopped and joined first
};

}  // namespace cronwheel::admin
