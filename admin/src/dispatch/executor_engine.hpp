#pragma once
// HttpExecutorClient's threads (private to executor_client.cpp and executor_engine.cpp): one Engine is a
// thread (Boost.Asio's io_context) and the connections it runs, its share of every executor's connections.
// Which connection to open, reuse or close is ConnectionPolicy's rule (admin/dispatch/connection_policy.hpp);
// this is the I/O around it. Everything runs on the engine's thread but Submit, OnOwnThread, Load, Stats,
// Total and the destructor (any thread).

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admin/dispatch/connection_policy.hpp"
#include "admin/dispatch/executor_client.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/throttled_log.hpp"

namespace cronwheel::admin {

class HttpExecutorClient::Engine {
 public:
  using TransportClock = std::chrono::steady_clock;  // transport deadlines run on the real steady clock

  // One request: built (and its body serialised) on the caller's thread, then handed to the client's thread.
  struct Request {
    std::string origin;  // the pool it goes through: scheme://host[:port]
    std::string host;
    int port = 0;
    bool tls = false;
    std::string path;  // for messages
    boost::beast::http::request<boost::beast::http::string_body> message;
    ExecutorClient::RunDone done;
    std::int64_t send_by_ms = 0;             // epoch ms it must be sent by; 0 = connect_timeout from handover
    int job_id = 0;                          // a /run's job (its place in the queue), else 0
    TransportClock::time_point give_up;      // the wait for a free connection ends here
    std::chrono::milliseconds wait_limit{};  // how long that wait was allowed (messages)
    ringwheel::SteadyTime queued{};          // when it started waiting for one
  };

  // `policy`: the connection policy's settings for each executor origin (this engine's share of them);
  // `configured`: the client's whole executor_connections; `max_waiting`: requests that may wait for a
  // connection per executor origin in this engine.
  Engine(Settings settings, const ConnectionPolicy::Settings& policy, std::size_t configured,
         std::size_t max_waiting, ringwheel::Clock& clock);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void Submit(std::unique_ptr<Request> request);
  // The client's other threads, asked to yield an idle connection when this one has a stalled first
  // request and none to yield itself. Set once, before any request.
  void SetSiblings(std::vector<Engine*> siblings);
  // Any thread: closes one idle connection to `origin`, if there is one (on this engine's thread).
  void RequestYield(const std::string& origin);
  // Fails what is waiting or in flight, closes every connection and joins the thread (idempotent). The
  // client stops every engine before destroying any, so none asks a destroyed sibling to yield.
  void Stop();
  [[nodiscard]] bool OnOwnThread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Requests handed to it and not finished yet.
  [[nodiscard]] std::size_t Load() const { return load_.load(std::memory_order_relaxed); }
  [[nodiscard]] OriginStats Stats(const std::string& origin) const;
  [[nodiscard]] OriginStats Total() const;

 private:
  struct Origin;
  struct Conn {
    enum class Phase { kConnecting, kWriting, kReading, kIdle };
    Origin* origin = nullptr;
    std::optional<boost::asio::ip::tcp::socket> plain;
    std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls;
    Phase phase = Phase::kConnecting;
    bool fresh = true;      // its first request has not been answered yet (unproven, for the policy)
    std::size_t place = 0;  // its place among the unproven connections when it was opened (the policy's)
    bool closed = false;    // closed by the client: handlers still pending return at once
    ringwheel::SteadyTime attempted{};
    ringwheel::SteadyTime last_used{};
    TransportClock::time_point deadline{};
    std::size_t busy_at = 0;  // index in origin->busy while busy
    std::unique_ptr<Request> request;
    boost::beast::flat_buffer buffer;
    std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser;

    boost::asio::ip::tcp::socket& Socket() { return tls ? tls->next_layer() : *plain; }
    // The connection's name for the policy: its socket's descriptor (unique among open sockets; the policy
    // forgets it before the socket is closed).
    std::uintptr_t Id() { return static_cast<std::uintptr_t>(Socket().native_handle()); }
    // Calls f with the stream requests go through (the TLS stream or the socket).
    template <class F>
    void WithStream(F&& f) {
      if (tls) {
        std::forward<F>(f)(*tls);
      } else {
        std::forward<F>(f)(*plain);
      }
    }
  };
  using ConnPtr = std::shared_ptr<Conn>;
  using ErrorCode = boost::system::error_code;
  struct Origin {
    explicit Origin(const ConnectionPolicy::Settings& s) : policy(s) {}
    std::string name;
    ConnectionPolicy policy;
    std::vector<ConnPtr> idle;  // least recently used first
    std::vector<ConnPtr> busy;  // connecting or carrying a request
    // In the order they are sent: requests that are not fires first, then fires by their misfire deadline
    // (their instant) and job, each kind in the order it came (Engine::Enqueue).
    std::deque<std::unique_ptr<Request>> waiting;
    std::multiset<ringwheel::SteadyTime> queued_at;  // `waiting`'s Request::queued (the oldest is first)
    TransportClock::time_point earliest_give_up =
        TransportClock::time_point::max();  // of `waiting`, or earlier
    OriginStats* stats = nullptr;           // its entry in stats_, written under stats_mu_
    ThrottledLog failures;                  // what failed, in detail, for the admin's log
  };

  void Detail(Origin& origin, const Request& r, std::string_view detail);
  // Updates the origin's statistics: `f` changes its counters, the gauges are set from the pool.
  template <class F>
  void Count(Origin& o, F&& f) {
    cronwheel::MutexLock lock(stats_mu_);
    std::forward<F>(f)(*o.stats);
    o.stats->open = o.policy.open();
    o.stats->waiting = o.waiting.size();
    o.stats->keep_alive = o.policy.keep_alive();
    o.stats->evidence = o.policy.evidence();
  }
  Origin& OriginFor(const std::string& name);
  void Enqueue(std::unique_ptr<Request> r);
  std::unique_ptr<Request> PopWaiting(Origin& origin);
  void Pump(Origin& origin);
  void ExpireWaiting(Origin& origin);
  void RetireStale(Origin& origin, ringwheel::SteadyTime now);
  ConnPtr TakeIdle(Origin& origin, ringwheel::SteadyTime now);
  void AddBusy(Origin& origin, const ConnPtr& c);
  void RemoveBusy(Origin& origin, Conn& c);
  bool YieldIdle(Origin& origin);
  static bool Readable(Conn& c);
  static bool Silent(std::uintptr_t id);
  void Open(Origin& origin, std::unique_ptr<Request> r, ringwheel::SteadyTime now);
  void ConnectAllowed(const ConnPtr& c, std::vector<boost::asio::ip::tcp::endpoint> endpoints);
  boost::asio::ssl::context& TlsContext();
  template <class What, class Next>
  auto Step(const ConnPtr& c, Delivery delivery, What what, Next next);
  void Connected(const ConnPtr& c, const ErrorCode& e);
  void Handshake(const ConnPtr& c);
  void Write(const ConnPtr& c);
  void Read(const ConnPtr& c);
  void Answered(const ConnPtr& c);
  void Release(Origin& origin, const ConnPtr& c, bool reusable, ringwheel::SteadyTime now);
  void Fail(const ConnPtr& c, Delivery delivery, const std::string& what,
            ConnectionPolicy::ConnectFailure why = ConnectionPolicy::ConnectFailure::kOther);
  static void Close(Conn& c);
  static xxljob::Envelope Failure(const Request& r, std::string_view what);
  void Finish(Request& r, RunReply reply);
  void ArmTick();
  void Tick();
  void TimedOut(const ConnPtr& c);
  void Shutdown();

  Settings settings_;
  ConnectionPolicy::Settings policy_settings_;
  std::size_t configured_connections_;
  std::size_t max_waiting_;
  ringwheel::Clock& clock_;
  std::atomic<std::size_t> load_{0};
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer tick_;
  boost::asio::ip::tcp::resolver resolver_;
  std::optional<boost::asio::ssl::context> tls_;  // made on the first https origin
  bool ticking_ = false;
  bool stopping_ = false;
  std::size_t pending_ = 0;  // requests waiting or in flight, over all origins (the tick runs while any is)
  // std::unordered_map keeps references to its elements valid across rehashing; entries are never erased.
  std::unordered_map<std::string, Origin> origins_;
  mutable cronwheel::Mutex stats_mu_;
  std::unordered_map<std::string, OriginStats> stats_ ABSL_GUARDED_BY(stats_mu_);
  std::vector<Engine*> siblings_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace cronwheel::admin
