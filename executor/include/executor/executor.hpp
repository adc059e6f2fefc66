#pragma once
// An embeddable XXL-JOB-compatible executor: the runtime behind cronwheel-executor, usable in any C++
// program the way XXL-JOB's executor core is embedded in a Java application.
//
//   cronwheel::executor::Executor::Settings s;
//   s.app_name = "billing";
//   s.admin_addresses = {"http://admin:8080"};
//   s.access_token = token;
//   cronwheel::executor::Executor executor(s, ringwheel::RealClock::Instance());
//   executor.Register("settleJob", [](cronwheel::executor::JobContext& ctx) { ... });
//   executor.Start();   // binds, replays spooled callbacks, registers with the admins
//   ...
//   executor.Drain(std::chrono::seconds(30));  // optional: let the running fires finish first
//   executor.Stop();    // registryRemove, stop job threads, flush callbacks (also done by the destructor)
//
// Wire protocol (docs/xxl-job-protocol.md §1-3; dialect A/B, with C's spellings accepted): an HTTP server
// answers POST /beat, /idleBeat, /run (also /trigger), /kill and /log, also under the base path of
// advertise_address (so an address with a path prefix works, which XXL-JOB's executor does not allow, §1).
// Every answer is HTTP 200 with a {code, msg, content, data} envelope. Failures are code 500 with XXL-JOB's
// words where admins and users rely on them: "The access token is wrong.", "job handler [X] not found.",
// "block strategy effect：Discard Later", "repeat trigger job, logId:N", "glueType[X] is not valid.",
// "invalid request, HttpMethod not support.", "invalid request, uri-mapping(/x) not found.". A body over
// 5 MiB, malformed JSON or a field of the wrong type is a code-500 envelope saying so (naming the field).
// The access token is compared in constant time (SHA-256 digests compared with sodium_memcmp).
//
// Behaviour (details and each improvement over XXL-JOB are in the src/ headers):
//  * job threads and block strategies: src/job_dispatcher.hpp (one thread per job id, no creation race,
//    a log id delivered twice runs once, timeout = 502 + stop token, /kill reports at once);
//  * script (GLUE) jobs: src/script_runner.hpp; off unless enable_scripts (refused with a message saying how
//    to enable them); GLUE_GROOVY is refused as not supported;
//  * job logs: src/job_log.hpp (UTC day folders, incremental /log with a byte cap, retention);
//  * callbacks: src/callback_sender.hpp (batches of 100, spool to disk, replay after restart), each with
//    the fire's job log for the admin's archive (callback_log_max_bytes);
//  * registry: src/registry_heartbeat.hpp;
//  * metrics: GET /metrics in Prometheus's text format (src/metrics.hpp, docs/operations.md), readable from
//    metrics_allow or with metrics_token.
//
// Thread-safety: Register() may be called from any thread at any time; Start()/Stop() from one thread;
// Drain() from any thread between them, AbandonDrain() from any thread.
// Errors: Start() throws std::invalid_argument for a bad setting (the message names it and says what is
// valid) and std::runtime_error when the port cannot be bound or the log dir cannot be created. Handler
// failures are results (500), never exceptions out of the executor.
// Lifetime: the clock must outlive the executor; handlers may run until Stop() returns.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor/job_context.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

// The range of Executor::Settings::callback_log_max_bytes (besides 0): the admin takes request bodies of up
// to 5 MiB, and a callback batch is kept under 4 MiB (src/callback_sender.hpp).
inline constexpr std::size_t kMinCallbackLogBytes = 1024;
inline constexpr std::size_t kMaxCallbackLogBytes = std::size_t{4} * 1024 * 1024;

class Executor final {
 public:
  struct Settings {
    std::string app_name;  // registryKey; required when admin_addresses is set
    std::vector<std::string>
        admin_addresses;       // admin base URLs, tried in order; empty = no registry/callbacks
    std::string access_token;  // XXL-JOB-ACCESS-TOKEN, both directions; empty = not checked
    std::string listen_host = "127.0.0.1";
    int listen_port = 9999;         // 0 = any free port (see port())
    std::string advertise_address;  // registryValue; empty = http://<listen host|127.0.0.1>:<port>/
    std::filesystem::path log_dir = "executor-logs";
    int log_retention_days = 30;  // day folders older than this are deleted daily; < 3 = keep all
    bool enable_scripts = false;  // run GLUE_SHELL/PYTHON/NODEJS/PHP/POWERSHELL jobs
    // Variables of the executor's environment a script gets too, by name (script_env_pass). Scripts get a
    // minimal environment of their own otherwise (src/script_runner.hpp); CRONWHEEL_* names are refused.
    std::vector<std::string> script_env_pass;
    std::chrono::seconds heartbeat_interval{30};
    int server_threads = 2;  // threads reading, answering and writing HTTP connections (none waits on one)
    std::chrono::seconds keep_alive_timeout{2};        // idle keep-alive connections are closed after
    std::chrono::milliseconds admin_timeout{3000};     // connect and read timeout towards the admins
    std::chrono::seconds callback_retry_interval{30};  // spooled callbacks are retried this often
    std::size_t callback_batch_size = 100;
    std::chrono::seconds idle_thread_timeout{90};  // an idle job thread is reaped after this
    int job_workers = 8;         // worker threads that run the fires (a job's fires one at a time)
    int max_job_workers = 1024;  // with the workers added while handlers are blocked (> 100 ms)
    std::chrono::milliseconds script_kill_grace{5000};          // SIGTERM -> SIGKILL for a stopped script
    std::chrono::seconds redelivery_window{600};                // a finished log id is remembered this long
    std::size_t redelivery_capacity = 100000;                   // ... and at most this many of them
    std::size_t log_read_max_bytes = std::size_t{1024} * 1024;  // per /log answer
    // Each fire's job log goes with its result to the admin, which archives it (docs/operations.md, "The fire
    // output archive"): at most this many bytes of it, its head and tail (a longer log's middle is left out
    // and marked). 0 = no log is sent (the admin then reads it with /log, as an XXL-JOB executor's); 1 KiB to
    // 4 MiB otherwise. Memory: a running fire holds up to this much of its log until it ends.
    std::size_t callback_log_max_bytes = std::size_t{1024} * 1024;
    // Appends "<logId> <jobId> <received epoch ms> <started epoch ms>" for every /run received (started 0
    // for a fire that never started), written when it starts or ends unstarted; empty = off. For diagnosing
    // lateness and for the benchmarks (src/run_trace.hpp).
    std::filesystem::path run_trace_file;
    // GET /metrics: addresses that may read it without credentials (IPs, CIDR ranges; default loopback),
    // and a bearer token that may ("" = none). cronwheel/metrics_endpoint.hpp.
    std::vector<std::string> metrics_allow = {"127.0.0.1/8", "::1"};
    std::string metrics_token;
    std::vector<std::string> metrics_hosts;  // Host names accepted with access by address (metrics_hosts)
    // Called once, on a server thread, when an admin asks this executor to drain (POST /drain with the access
    // token, a cronwheel extension of the protocol): start a drain as on SIGTERM (call Drain() on a thread
    // of your own; it must not block). The cronwheel-executor binary raises SIGTERM to itself. Empty: /drain
    // is answered 500 xxljob::kNoDrainRequestsMsg.
    std::function<void()> on_drain_request;
  };

  Executor(Settings settings, ringwheel::Clock& clock);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Adds a BEAN handler. Throws std::invalid_argument for an empty name or one already registered.
  void Register(const std::string& name, JobHandler handler);

  void Start();
  void Stop();

  // Drain, for scale-in and deploys (docs/operations.md "Draining an executor"): sends registryRemove to the
  // admins, answers every later /run, /beat and /idleBeat with code 500 xxljob::kDrainingMsg (the fire is not
  // run; a cronwheel admin sends it to another executor at once, FAILOVER and BUSYOVER move on), and waits
  // until the fires running and queued have finished (their results queued for the admins), for at most
  // `timeout` on the clock, or until AbandonDrain(). /kill and /log are served throughout. Returns true if
  // every fire finished;
  // then call Stop(), which stops what still runs (reported "executor is stopping.") and flushes the
  // callbacks. Call after Start(), at most once, from any thread but never concurrently with Stop() (which
  // follows it); blocks the caller.
  bool Drain(std::chrono::milliseconds timeout);
  // Ends a Drain() at once (a second signal). Any thread; before or during Drain().
  void AbandonDrain();

  // The bound port (after Start()).
  [[nodiscard]] int port() const;
  // The address registered with the admins (after Start()).
  [[nodiscard]] std::string advertise_address() const;
  [[nodiscard]] const Settings& settings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::executor
