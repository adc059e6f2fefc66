#pragma once
// The rules by which HttpExecutorClient opens, reuses and closes its connections to one executor origin,
// without the sockets: a pure class driven by `now` (docs/architecture.md, "Delivery to executors"). The
// client reports what happened (a connection attempt started, connected, failed, answered, closed) and asks
// what to do (may a connection be opened now, how long may an idle one be reused, which first request has
// stalled). Unit tests drive it with made-up instants (tests/unit/admin/connection_policy_test.cpp).
//
// Opening: as fast as the executor accepts, slowing down only on evidence. A connection is *unproven* from
// its attempt until its first answer (the executor accepted it and served a request on it); at most
// `window()` connections are unproven at once. So opens are clocked by the executor's own answers: one that
// accepts and answers at once gets a new connection per answer, as many a second as it serves (no fixed
// pace: an executor closing each connection after one answer is served at the rate it answers), while one
// that accepts slowly (a listen backlog of 5 and one thread, as Python's http.server) never has more
// connections queued in its backlog than the window. The window starts at `initial_window` (below a listen
// backlog of 5, the default of cpp-httplib and Python's socketserver) and grows by one for each proven
// connection that came while the window was full (it held openings back: as TCP grows its congestion
// window only when the window limits it, RFC 7661) and was served promptly: its first answer came within
// twice the quickest first answer of the last minute plus kAnswerSlack (from the attempt: connect, queueing
// at the executor, serving). A slower one says the executor queues connections already, and more would only
// wait in its backlog; so the window follows what the executor serves at once (about its thread count), up to
// `max_open`, and never grows for the executor's queue. Evidence that the executor did not keep up with
// connections slows it down: a connection refused while other connections to it are open (a refusal with none
// open means nothing listens: the executor is down, not slow, and its requests fail at once), a connect timed
// out, a connect that took longer than a SYN retransmission (kSynRetransmit: a SYN dropped by a full listen
// backlog is sent again after Linux's initial RTO of 1 s, RFC 6298 §2.1), or a new connection reset or closed
// before its first answer. Each attempt knows its place (how many connections were unproven with it): on
// evidence, the window drops to the smaller of half of itself and one less than the failed attempt's place,
// and that place minus one becomes a ceiling the window does not grow past for kCeilingMemory (so an executor
// with a backlog of 5 settles under what its backlog holds instead of overflowing it again and again); new
// attempts are held off for a back-off (kFirstBackoff, doubling up to kMaxBackoff while evidence keeps
// coming; evidence within a hold-off is the same episode and lowers nothing more). A proven connection after
// the hold-off ends the back-off; the ceiling is forgotten kCeilingMemory after the last evidence, and the
// window grows again.
//
// A connection is opened only for a request that has waited kGrowAfter for a free one (or when none is
// open): a burst that the open connections carry away in a few round trips opens no more, so the pool
// follows the concurrency the executor needs (a thread-per-connection executor gives every open connection
// one of its threads). A connection the executor closed after its answer is not the pool shrinking: it is
// replaced without that wait (one replacement per such answer, at most `max_open` owed), so an executor that
// closes its connections after 5 answers, or after each, keeps as many requests in flight as one that keeps
// them.
//
// Stalls: a new connection whose first request has had no answer for kFirstRequestStall is taken to wait
// for a server thread that the admin's own idle connections hold (a thread-per-connection server holds one
// per open connection until its keep-alive runs out); the client closes one idle connection ("yields") for
// each such request, which frees a thread at once (TakeStall). A stall also says how many connections the
// executor serves at once: the connections open less the stalled ones become a cap on the open connections
// (`open_cap()`), forgotten kCeilingMemory after the last stall. Only an executor that keeps connections can
// have its threads held by them: at one that has kept none for kCeilingMemory (it closes each connection
// after its answer, as HTTP/1.0 servers do) a slow first answer is a busy machine, and counts for nothing.
//
// Reuse: the executor's keep-alive is learned from a `Keep-Alive: timeout=N` answer header, else from the
// shortest idle time after which a pooled connection was found closed (observations under
// `min_keep_alive_observation` ignored: a restarted executor closes young connections too), and forgotten
// after `keep_alive_memory`. Idle connections are reused up to 3/4 of it (so a request is never written into
// a connection the executor is closing at that moment), up to `max_idle` while it is unknown.
//
// Units: instants are ringwheel::SteadyTime, durations std::chrono. Thread-safety: none; one instance per
// origin per client thread, used on that thread only. Every call is O(1) but FirstWritten and FirstOver
// (O(log n) in the awaited first requests) and TakeStall (O(n)); n is at most the open connections.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class ConnectionPolicy {
 public:
  using Time = ringwheel::SteadyTime;
  using Millis = std::chrono::milliseconds;

  static constexpr Millis kGrowAfter{2};
  static constexpr Millis kFirstRequestStall{20};
  static constexpr Millis kSynRetransmit{900};  // a connect slower than this had a SYN sent again
  static constexpr Millis kFirstBackoff{10};
  static constexpr Millis kMaxBackoff{1000};
  static constexpr Millis kCeilingMemory{60'000};
  static constexpr Millis kAnswerSlack{1};

  struct Settings {
    std::size_t max_open = 32;       // connections open at once (this client thread's share); 0 is taken as 1
    std::size_t initial_window = 4;  // unproven connections at once at first
    Millis max_idle{60'000};         // reuse limit while the keep-alive is unknown
    Millis min_keep_alive_observation{1000};
    Millis keep_alive_memory{std::chrono::minutes(10)};
  };

  // Why a connection attempt failed, as far as it is evidence.
  enum class ConnectFailure {
    kRefused,   // the host answered the SYN with a reset (nothing listens, or a backlog overflow that resets)
    kTimedOut,  // no connection within the connect timeout
    kOther,     // resolving, routing, TLS, the registration guard: says nothing about the executor's load
  };

  explicit ConnectionPolicy(const Settings& settings);

  // --- opening
  // Whether a connection may be opened now for the oldest waiting request, queued at `oldest_queued`.
  [[nodiscard]] bool MayOpen(Time now, Time oldest_queued);
  // A connection attempt starts (open and unproven from now). Returns its place: the connections unproven
  // with it, itself included; the later calls about this connection pass it back.
  std::size_t OnAttempt(Time now);
  // The attempt connected after `took`.
  void OnConnected(Time now, std::chrono::nanoseconds took, std::size_t place);
  // The attempt failed: the connection is gone.
  void OnConnectFailed(Time now, ConnectFailure why, std::size_t place);
  // A connection got an answer; `first`: its first one (it is proven now), `since_attempt` after the
  // connection attempt started; `kept`: the executor keeps the connection open for another request (the
  // answer is not HTTP/1.0 or `Connection: close`).
  void OnAnswered(Time now, bool first, std::chrono::nanoseconds since_attempt, bool kept);
  // A connected connection failed before its answer (reset, closed, timed out) and is gone; `first`: while
  // it carried its first request (evidence: the executor did not serve a connection it took).
  void OnLost(Time now, bool first, std::size_t place);
  // A connection carrying no request was closed by the client (idle past the reuse limit, found closed,
  // yielded, or not reusable after its answer).
  void OnClosed();

  // --- reuse
  // How long an idle connection may be reused now (forgets a keep-alive learned too long ago).
  [[nodiscard]] Millis ReuseLimit(Time now);
  // The executor announced `keep_alive` (its Keep-Alive header).
  void LearnKeepAlive(Millis keep_alive, Time now);
  // A pooled connection was found closed by the executor after `idle`.
  void FoundClosedAfterIdle(Millis idle, Time now);

  // --- stalls. `id` names a connection (the client's choice, unique among its open ones).
  // A new connection's first request is written: its answer is awaited from `now`.
  void FirstWritten(std::uintptr_t id, Time now);
  // The first request of `id` is over (answered or failed); nothing if it was not awaited.
  void FirstOver(std::uintptr_t id);
  // A first request stalled past kFirstRequestStall that no closed connection has made up for yet, for
  // which `nothing_to_read(id)` holds (an answer already waiting in the socket is no stall: the client's
  // thread was late, not the executor); marks it made up for and returns true, false when there is none.
  // Nothing stalls at an executor that has kept none of the connections it answered for kCeilingMemory (it
  // closes each after its answer, as an HTTP/1.0 server): no connection of this client can hold its threads.
  template <class NothingToRead>
  bool TakeStall(Time now, NothingToRead&& nothing_to_read) {
    if (!KeepsConnections(now)) return false;
    std::size_t stalled = 0;
    bool taken = false;
    for (auto& [id, first] : first_requests_) {
      if (now - first.written <= kFirstRequestStall || !nothing_to_read(id)) continue;
      ++stalled;
      if (!taken && !first.compensated) first.compensated = taken = true;
    }
    if (taken) Stalled(now, stalled);
    return taken;
  }

  // --- state
  [[nodiscard]] std::size_t open() const { return open_; }
  [[nodiscard]] std::size_t unproven() const { return unproven_; }
  [[nodiscard]] std::size_t window() const { return window_; }
  // The cap on open connections a stall taught, while remembered.
  [[nodiscard]] std::optional<std::size_t> open_cap() const { return open_cap_; }
  // The window's learned ceiling, while remembered.
  [[nodiscard]] std::optional<std::size_t> ceiling() const { return ceiling_; }
  [[nodiscard]] std::optional<Millis> keep_alive() const { return keep_alive_; }
  // Until when new attempts are held off after evidence (a past instant when none are).
  [[nodiscard]] Time hold_until() const { return hold_until_; }
  // Evidence seen so far (for the client's statistics).
  [[nodiscard]] std::uint64_t evidence() const { return evidence_; }

 private:
  struct First {
    Time written;
    bool compensated = false;  // an idle connection was closed for it (a stall counts once)
  };
  void Evidence(Time now, std::size_t place);
  [[nodiscard]] bool KeepsConnections(Time now) const;
  void Stalled(Time now, std::size_t stalled);
  void Proven(Time now, std::chrono::nanoseconds since_attempt, bool limited);

  Settings settings_;
  std::size_t open_ = 0;      // connecting, busy or idle
  std::size_t unproven_ = 0;  // of them, not answered yet
  std::size_t window_;
  Millis backoff_{0};  // the last hold-off; 0 = none since the last proven connection after one
  Time hold_until_{};
  std::uint64_t evidence_ = 0;
  std::optional<std::size_t> ceiling_;
  std::optional<std::size_t> open_cap_;
  Time last_stall_{};
  std::optional<Time> last_kept_;  // the last answer after which the executor kept its connection
  std::size_t replacements_ = 0;   // connections the executor closed after an answer, not replaced yet
  // The quickest first answers (since the attempt) of this half-minute and the last: their minimum is the
  // prompt answer's measure.
  std::chrono::nanoseconds quickest_now_ = std::chrono::nanoseconds::max();
  std::chrono::nanoseconds quickest_before_ = std::chrono::nanoseconds::max();
  Time quickest_since_{};
  Time last_evidence_{};
  std::optional<Millis> keep_alive_;
  Time keep_alive_learned_{};
  // Awaited first requests by connection id. Few at once (at most the window), so a scan is cheap.
  std::map<std::uintptr_t, First> first_requests_;
};

}  // namespace cronwheel::admin
