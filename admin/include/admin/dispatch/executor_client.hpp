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
//  * new connections are opened as fast as the executor accepts and answers on them, and slower only on
//    evidence that it does not keep up (refused or timed-out connects, a connect slow by a SYN
//    retransmission, a new connection reset before its first answer), recovering when the evidence stops:
//    ConnectionPolicy (admin/dispatch/connection_policy.hpp) has the rules. A connection is opened only when
//    no pooled one is free and the oldest request has waited 2 ms for one (or none is open), so a burst of 30
//    fires to a fast executor uses a few connections, not 30;
//  * a new connection whose first request has waited more than 20 ms for its answer (written, and nothing
//    to read yet) is taken to wait for a server thread that the admin's own idle connections hold (a
//    thread-per-connection server gives each open connection a thread until its keep-alive runs out): for
//    each such request one connection is closed ("yielded"), the least recently used idle one (of this
//    client thread, else of another) or the next that comes back, which frees a thread at once rather than
//    after the executor's keep-alive timeout (2 s of lag, measured against a server with 8 threads); and the
//    open connections are capped at what the executor served at once, for a minute;
//  * at most `max_connections_per_origin` (setting executor_connections) are open; requests beyond wait in
//    the origin's own queue for a free connection, those that are not fires first, then fires in the order
//    of their instants and jobs (so each job's fires keep their place in every burst and reach the executor
//    a period apart, whatever order the trigger threads handed them over in): a fire (RunAsync with
//    `send_by_ms`) until its misfire threshold (the admin's own congestion never fails a fire sooner), any
//    other request at most `connect_timeout` (real time: a transport timeout, like connect_timeout itself);
//    then they fail as not sent, naming the origin, the bound and the wait. At most `max_waiting_per_origin`
//    wait per executor (bounded memory): one beyond fails at once as not sent. Each executor has its own
//    queue, so a slow executor delays only its own fires.
//
// Event-driven (docs/architecture.md, "Delivery to executors"): threads of the client's own (`threads`, 2)
// run every connection (Boost.Asio; HTTP/1.1 framing by Boost.Beast), each its share of them, and no caller
// blocks on the network. RunAsync hands a request over and returns; its `done` runs on that thread when the
// answer (or the failure) is known. Run, Beat, IdleBeat, Kill and Log are the same requests waited for. A
// burst of fires to an executor costs the admin a thread waking for many answers, not a thread and two
// context switches per fire.
//
// Where it sends (issue 21: registration was an SSRF): a request goes only to an address its RegistryGuard
// (`guard`) allows. An IP address (in any text form a resolver reads: issue 44, F6) is checked before
// anything happens; then every connection is checked on the socket address it is made to, an IP literal's
// (zone id or not) as each address a host name resolves to when the connection opens (so a name rebound to
// 169.254.169.254 after its registration is caught), and only allowed addresses are connected to. Refused:
// kInvalid, with a message naming the address and the setting.
//
// What a failure says (issue 21): the envelope of a failure is shown to users (a fire's trigger message in
// the console), and the address may be anything a token holder registered. So it says what a user needs,
// in words of its own: "the executor could not be reached (connection refused | timed out | its host name
// did not resolve | no route to it)", "answered, but not as an XXL-JOB executor", "the connection closed
// without an answer" - never the other side's status code, bytes of its body or the socket's error text.
// Those details go to the admin's log (warn, once per failure streak per executor, then at most once a
// minute), where the operator finds them. An executor's own envelope (HTTP 200 with XXL-JOB's JSON) is
// passed on as it is.
//
// Retries (XXL-JOB's client sends once and records any failure): this client never sends a request twice.
// A reply says kNotSent when nothing of the request can have reached the executor (the connection could not
// be made, no connection was free, the request could not be written whole: an HTTP server cannot act on a
// request it has not read to the end), which TriggerService sends again within the misfire threshold; and
// kUnknown when the request was written but no answer came (the executor may be running it), which is
// recorded as a failed trigger and left to the job's retry and FAILOVER rules.
//
// Thread-safety: every call may be made from any number of threads at once, but the waiting calls (Run,
// Beat, IdleBeat, Kill, Log) never from inside a `done` (the client's own thread: they would wait for
// themselves; they fail at once there instead). A `done` must not block: it holds up every other answer.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/dispatch/registry_guard.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/framing.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

class RunBatcher;

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
    // kNotSent because the executor's host refused the connection: nothing listened at the address (the
    // executor process is gone, or restarting). Not set for a timeout, which could be a slow live one.
    bool refused = false;
  };
  // Called exactly once with the reply of a RunAsync.
  using RunDone = std::function<void(RunReply reply)>;

  virtual ~ExecutorClient() = default;
  // `token` empty = send no token header.
  // Sends /run and returns without waiting for the answer; `done` gets the reply. `send_by_ms` (epoch ms):
  // the instant after which it is no longer worth sending (the fire's misfire threshold): a request that
  // waits for a free connection waits until then; 0 = the client's own bound. Where `done` runs is the
  // implementation's: HttpExecutorClient calls it on its own thread, and this default (for clients that
  // answer at once, such as the tests' fakes) calls Run and then `done` before returning.
  virtual void RunAsync(const std::string& address, const std::string& token,
                        const xxljob::TriggerParam& param, std::int64_t /*send_by_ms*/, RunDone done) {
    const RunDone answer = std::move(done);
    answer(Run(address, token, param));
  }
  virtual RunReply Run(const std::string& address, const std::string& token,
                       const xxljob::TriggerParam& param) = 0;
  virtual xxljob::Envelope Beat(const std::string& address, const std::string& token) = 0;
  virtual xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) = 0;
  virtual xxljob::Envelope Log(const std::string& address, const std::string& token,
                               const xxljob::LogParam& param) = 0;
  // POST /drain, cronwheel's extension: asks the executor to drain and exit (xxljob::kDrainStartedMsg); an
  // XXL-JOB executor answers 500 "uri-mapping(/drain) not found".
  virtual xxljob::Envelope Drain(const std::string& address, const std::string& token) = 0;
  // POST /cancel, cronwheel's extension (ahead-of-time dispatch): asks the executor to drop these fires it
  // holds for their instant; the answer's content is {"cancelled": [the log ids dropped]}.
  virtual xxljob::Envelope Cancel(const std::string& address, const std::string& token,
                                  const xxljob::CancelParam& param) = 0;
  // POST /killFires, cronwheel's extension: asks the executor to kill these fires only (the other fires of
  // their jobs go on); the answer's content is {"killed": [the log ids killed]} (xxljob::kKilledField). This
  // default, for clients that have no executors behind them (the tests' fakes), answers as an XXL-JOB
  // executor does to a path it does not know.
  virtual xxljob::Envelope KillFires(const std::string& /*address*/, const std::string& /*token*/,
                                     const xxljob::CancelParam& /*param*/) {
    return xxljob::Envelope::Fail(xxljob::UriNotFound("/killFires"));
  }
  // POST /accepted, cronwheel's extension (ahead-of-time dispatch): which of these fires the executor has
  // accepted; the answer's content is {"accepted": [log ids]} (xxljob::kAcceptedField). Returns at once;
  // `done` gets the reply as RunAsync's does. This default, for clients that have no executors behind them
  // (the tests' fakes), answers as an XXL-JOB executor does to a path it does not know.
  virtual void AcceptedAsync(const std::string& /*address*/, const std::string& /*token*/,
                             const xxljob::CancelParam& /*param*/, RunDone done) {
    const RunDone answer = std::move(done);
    answer({xxljob::Envelope::Fail(xxljob::UriNotFound("/accepted")), Delivery::kAnswered});
  }

 protected:
  ExecutorClient() = default;
  ExecutorClient(const ExecutorClient&) = default;
  ExecutorClient& operator=(const ExecutorClient&) = default;
};

class HttpExecutorClient final : public ExecutorClient {
 public:
  struct Settings {
    std::chrono::milliseconds connect_timeout{3000};  // XXL-JOB: 3 s; also the wait for a free connection
                                                      // of a request without send_by_ms
    std::chrono::milliseconds read_timeout{3000};     // XXL-JOB: xxl.job.timeout = 3 s; also the write's
    std::size_t max_connections_per_origin = 32;      // open connections to one executor (0 is taken as 1)
    std::size_t max_waiting_per_origin = 100'000;     // requests waiting for a connection to one executor
    // Reuse limit while the executor's keep-alive is unknown (XXL-JOB's Netty executor closes connections
    // idle for 90 s).
    std::chrono::milliseconds max_idle{60'000};
    std::chrono::milliseconds min_keep_alive_observation{1000};
    std::chrono::milliseconds keep_alive_memory{std::chrono::minutes(10)};
    // Threads running the connections. Each runs its share of every executor's connections (no more threads
    // than max_connections_per_origin are started); a request goes to the least loaded one. Two spread a
    // burst's sending and reading over two cores.
    int threads = 2;
    // Which addresses requests may go to (see above); nullptr = the default guard (RegistryGuard()).
    std::shared_ptr<const RegistryGuard> guard;
  };
  // What the pool of one executor origin did so far (tests, diagnostics).
  struct OriginStats {
    std::uint64_t opened = 0;        // connections opened
    std::uint64_t reused = 0;        // requests sent on a pooled connection
    std::uint64_t found_closed = 0;  // pooled connections the executor had closed, dropped before use
    std::uint64_t retired = 0;       // pooled connections closed by the admin (idle past the reuse limit)
    std::uint64_t yielded = 0;       // connections closed, not pooled, to free an executor thread
    std::uint64_t evidence = 0;      // signs the executor did not keep up with new connections (see above)
    std::size_t open = 0;            // open now (idle, in use or connecting)
    std::size_t most_open = 0;       // the most open at once (with several threads: the sum of their peaks)
    std::size_t waiting = 0;         // requests waiting for a free connection now
    std::optional<std::chrono::milliseconds> keep_alive;  // learned, if any
  };

  // Starts the client's threads. `clock` times keep-alive ages and connection attempts (a fake clock in
  // tests); transport timeouts run on the real steady clock.
  HttpExecutorClient(const Settings& settings, ringwheel::Clock& clock);
  HttpExecutorClient() : HttpExecutorClient(Settings{}, ringwheel::RealClock::Instance()) {}
  // Fails what is still waiting or in flight (kNotSent / kUnknown, "the admin is shutting down"), closes
  // every connection and joins the threads.
  ~HttpExecutorClient() override;
  HttpExecutorClient(const HttpExecutorClient&) = delete;
  HttpExecutorClient& operator=(const HttpExecutorClient&) = delete;

  // A /run with runAtMs (a fire sent ahead, to a cronwheel-executor) goes in a POST /runs with others to the
  // same executor (RunBatcher); any other as a /run of its own.
  void RunAsync(const std::string& address, const std::string& token, const xxljob::TriggerParam& param,
                std::int64_t send_by_ms, RunDone done) override;
  RunReply Run(const std::string& address, const std::string& token,
               const xxljob::TriggerParam& param) override;
  xxljob::Envelope Beat(const std::string& address, const std::string& token) override;
  xxljob::Envelope IdleBeat(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Kill(const std::string& address, const std::string& token, int job_id) override;
  xxljob::Envelope Log(const std::string& address, const std::string& token,
                       const xxljob::LogParam& param) override;
  xxljob::Envelope Drain(const std::string& address, const std::string& token) override;
  xxljob::Envelope Cancel(const std::string& address, const std::string& token,
                          const xxljob::CancelParam& param) override;
  xxljob::Envelope KillFires(const std::string& address, const std::string& token,
                             const xxljob::CancelParam& param) override;
  void AcceptedAsync(const std::string& address, const std::string& token, const xxljob::CancelParam& param,
                     RunDone done) override;

  // The pool of `address`'s origin; all zero for an origin never used.
  [[nodiscard]] OriginStats Stats(const std::string& address) const;
  // The sums over every origin (metrics); `keep_alive` and `most_open` are not summed (left empty / 0).
  [[nodiscard]] OriginStats TotalStats() const;
  // The batches of /runs sent so far and the runs in them (metrics).
  struct BatchCounts {
    std::uint64_t batches = 0;
    std::uint64_t runs = 0;
  };
  [[nodiscard]] BatchCounts BatchStats() const;

  // A thread and its connections (admin/src/dispatch/executor_engine.hpp; Boost stays out of this header).
  // Not for use outside the client.
  class Engine;

 private:
  static void Add(OriginStats& total, const OriginStats& share);

  // Sends POST <address's base path>/<method> with `body`; `done` gets the reply. `job_id`: a /run's job,
  // which places it in the queue to its executor (0: not a fire of one job).
  void Post(const std::string& address, const char* method, const std::string& token, std::string body,
            std::int64_t send_by_ms, RunDone done, int job_id = 0);
  // The same, waited for.
  RunReply PostAndWait(const std::string& address, const char* method, const std::string& token,
                       std::string body);

  std::shared_ptr<const RegistryGuard> guard_;  // checks IP addresses before a request is handed over
  // The /runs of fires sent ahead (those with runAtMs). Declared before engines_: the engines' last answers,
  // as they stop, reach it.
  std::unique_ptr<RunBatcher> batcher_;
  std::vector<std::unique_ptr<Engine>> engines_;
};

}  // namespace cronwheel::admin
