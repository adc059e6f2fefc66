#pragma once
// Job threads and block strategies (docs/xxl-job-protocol.md §9). XXL-JOB gives each job id a thread with a
// FIFO queue of fires; here a job's "thread" is its queue and handler, and its fires run one at a time on a
// pool of worker threads. A job with fires waiting is in the pool's ready queue once (so its fires stay
// serial and in order, each starting after the previous one's callback has left); jobs take turns.
// The pool keeps `workers` threads; when a handler has run for `blocked_after` it counts as blocked, and
// a check on the Timer (every blocked_after while jobs wait) adds a worker for each blocked one, up to
// `max_workers`, so long handlers do not hold up other jobs for longer than about blocked_after plus one
// timer tick (the Timer's 100 ms). Added workers end when they find no work and enough
// unblocked workers remain. Compared with a thread per job this bounds the runnable threads and lets a
// busy worker take the next fire without a thread hand-off. Idle workers are woken one at a time: a /run
// wakes one only when no wake is in flight, and a woken worker that leaves jobs in the ready queue wakes
// the next, or starts one when none is idle (as work-stealing pools such as Go's scheduler do), so the /runs
// that arrive while a worker wakes cost no wake-up of their own (docs/performance.md, "One wake for a
// burst"). These decisions are PoolPolicy's (pool_policy.hpp), unit-tested apart from the threads.
//
// /run for a job id:
//  * the trigger's handler is resolved (BEAN name or glue type + version); if the job's thread holds a
//    different one, that thread is replaced ("change jobhandler or glue type, ..." / "change job source
//    or glue type, ..."), as in XXL-JOB;
//  * block strategy when the thread is busy (running or queued): SERIAL_EXECUTION enqueues (also any
//    unknown value); DISCARD_LATER refuses with 500 "block strategy effect：Discard Later"; COVER_EARLY
//    replaces the thread (running fire and queue reported killed), then runs the new fire;
//  * a log id queued or running anywhere is refused: 500 "repeat trigger job, logId:N".
// Improvements:
//  * §15 item 7: the map of threads, the queues and the log-id table are guarded by one mutex held from
//    lookup to enqueue, so concurrent first /runs for a job id create exactly one thread;
//  * the same log id delivered twice runs once: log ids accepted in the last `redelivery_window`
//    (at most `redelivery_capacity` of them, on the Clock) that have finished are answered 200 without
//    running again (an admin may resend a fire after a crash);
//  * §15 item 8: a fire's timeout (executorTimeout > 0 seconds) reports handle code 502
//    "job execute timeout" at the deadline and requests the fire's stop token (scripts: their process
//    group is ended), and whatever the handler reports later is discarded. /kill reports the running fire
//    as 500 "scheduling center kill job. [job running, killed]" and each queued fire as
//    "... [job not executed, in the job queue, killed.]" at once, not when the handler returns.
// A replaced or killed job thread is retired: it leaves the map at once (a new fire gets a new one), its
// running handler is asked to stop (its worker is free again when the handler returns) and its queued fires
// are reported. A job thread idle for `idle_timeout` (XXL-JOB: 30 empty 3-second polls, about 90 s) is
// retired too. The timeout, the idle reaping and the starvation check run on a Timer.
//
// Ahead-of-time dispatch (cronwheel's extension, docs/architecture.md "Ahead-of-time dispatch"): a /run
// whose runAtMs is still ahead is *held*: checked as any /run (handler, stopping, draining, a repeated log
// id) and answered at once, then started at runAtMs on the start timer (1 ms ticks: never early, at most a
// tick late), where it meets its job thread and block strategy as a /run arriving at that instant would.
// A held fire counts as accepted: its log id is a "repeat trigger" for a second /run, /kill drops the
// held fires of its job (reported killed, never run), a drain waits for them to run, and Stop() reports
// them. One refused at its instant (DISCARD_LATER against a running fire, the executor stopping) is
// reported through its callback, since its /run was answered already.
// A /run with replaceHeld (the admin's, when the job changed within the lead) replaces the held fire of its
// log id: its parameter, handler and strategies, keeping its start. One no longer held (started, run,
// withdrawn) stays as it was, and the answer (200) says so.
//
// Each fire writes "job execute start / Param / end" lines to its job log, then the result goes to the
// CallbackSink (exactly once per accepted log id).
//
// Thread-safety: Run/IdleBeat/Kill/Stop may be called from any threads. Lifetime: the resolver, log
// files, sink and timer must outlive the dispatcher; call Stop() while the timer still runs (the
// destructor calls it too).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cronwheel/mutex.hpp"
#include "executor/job_context.hpp"
#include "job_log.hpp"
#include "pool_policy.hpp"
#include "redelivery_window.hpp"
#include "ringwheel/clock.hpp"
#include "run_trace.hpp"
#include "timer.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

// Receives each finished fire's result. Push must not block for long (it is called under no lock but
// from job threads, the timer thread and request threads).
class CallbackSink {
 public:
  virtual ~CallbackSink() = default;
  virtual void Push(xxljob::HandleCallbackParam callback) = 0;

 protected:
  CallbackSink() = default;
  CallbackSink(const CallbackSink&) = default;
  CallbackSink& operator=(const CallbackSink&) = default;
};

// What a trigger runs. `identity` names the handler and its version ("bean:name", "glue:TYPE:updatetime"):
// a job thread holding another identity is replaced. A non-empty `error` refuses the trigger with 500.
struct Resolution {
  JobHandler handler;
  std::string identity;
  std::string error;
  bool is_glue = false;
};
using HandlerResolver = std::function<Resolution(const xxljob::TriggerParam&)>;

class JobDispatcher final {
 public:
  struct Settings {
    std::chrono::seconds idle_timeout{90};
    std::chrono::seconds redelivery_window{600};
    std::size_t redelivery_capacity = 100000;
    std::size_t workers = 8;                       // pool threads kept (started on demand)
    std::size_t max_workers = 1024;                // with those added for blocked handlers
    std::chrono::milliseconds blocked_after{100};  // a handler running this long counts as blocked
  };

  // `trace` (optional, outliving the dispatcher) gets one line per /run: when a worker starts the fire, or
  // when the fire ends without starting (refused, a redelivery, killed or replaced in the queue) with
  // started_ms 0.
  // `start_timer` starts held fires (see above); nullptr = `timer`, with its precision.
  JobDispatcher(Settings settings, HandlerResolver resolver, JobLogFiles& logs, CallbackSink& sink,
                Timer& timer, ringwheel::Clock& clock, RunTrace* trace = nullptr,
                Timer* start_timer = nullptr);
  ~JobDispatcher();
  JobDispatcher(const JobDispatcher&) = delete;
  JobDispatcher& operator=(const JobDispatcher&) = delete;

  // /run: 200 = accepted (queued, started, or held until its runAtMs), not finished. The fire's start
  // (when a worker takes it, on the clock, epoch ms) goes back in its callback as handleStartTime.
  xxljob::Envelope Run(const xxljob::TriggerParam& p);
  // /idleBeat: 500 "job thread is running or has trigger queue." when busy.
  xxljob::Envelope IdleBeat(int job_id);
  // /cancel (cronwheel's extension): drops the fires of `log_ids` that are held for their instant, without a
  // callback (the admin that asked records them), and returns the ones dropped. A fire already started, or
  // not held here, is left alone. Its log id counts as run afterwards (a redelivery is not run).
  std::vector<std::int64_t> Cancel(const std::vector<std::int64_t>& log_ids);
  // /accepted (cronwheel's extension): the log ids of `log_ids` this executor has accepted: held, queued,
  // running, or run within the redelivery window (a cancelled or killed one too). An id missing from the
  // answer never reached this process (or was refused), so it cannot run here. O(log_ids) under the lock.
  std::vector<std::int64_t> Accepted(const std::vector<std::int64_t>& log_ids);
  // /kill: always 200 (msg "job thread already killed." when the job has no thread and no held fire).
  // Its held fires are dropped and reported killed.
  xxljob::Envelope Kill(int job_id);
  // /killFires (cronwheel's extension): ends the fires of `log_ids` only, wherever they are here (held,
  // queued, running), each reported killed as /kill reports it; the other fires of their jobs go on (a
  // running one's stop token is requested, as at its timeout). Returns the ones killed; a fire not here, or
  // already reported, is left alone. O(log_ids + job threads + their queues) under the lock.
  std::vector<std::int64_t> KillFires(const std::vector<std::int64_t>& log_ids);
  // Retires every thread (running and queued fires reported killed with `reason`), refuses later /runs,
  // and joins the threads (a handler that ignores its stop token delays this). Idempotent.
  void Stop(std::string_view reason = "executor is stopping.");

  // Drain: refuses every later /run with xxljob::kDrainingMsg (the fire is not run: a cronwheel admin
  // sends it elsewhere) while the fires running and queued go on, and arms the drain's end `timeout` from
  // now on the timer (the injected clock). Once.
  void BeginDrain(std::chrono::milliseconds timeout);
  // Lock-free (an atomic load): cheap enough for every /beat.
  [[nodiscard]] bool Draining() const;
  // Blocks until no fire is running or queued, the drain's timeout has passed, AbandonDrain() or Stop();
  // true if the dispatcher went idle. Call after BeginDrain().
  bool AwaitDrained();
  // Ends the drain's wait at once (a second signal: stop now). Idempotent; any thread.
  void AbandonDrain();

  // For tests and metrics.
  [[nodiscard]] std::size_t JobThreads() const;
  // Blocks (real time, at most `timeout`) until there are exactly `n` job threads (tests).
  bool AwaitJobThreads(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  [[nodiscard]] std::uint64_t JobThreadsCreated() const;
  // Pool threads running now (metrics).
  [[nodiscard]] std::size_t Workers() const;
  // Pool threads started since construction (tests).
  [[nodiscard]] std::uint64_t WorkersStarted() const;
  // Blocks (real time, at most `timeout`) until `n` or more pool threads wait for work (tests: a callback
  // leaves before its worker is back waiting, so "the callback arrived" does not mean "the worker is idle").
  bool AwaitIdleWorkers(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Fires held for their runAtMs now (tests, metrics).
  [[nodiscard]] std::size_t HeldFires() const;
  // Start tasks armed on the start timer since construction: one per runAtMs held for, not one per fire.
  [[nodiscard]] std::uint64_t InstantsArmed() const;

 private:
  struct Fire;
  struct JobThread;
  struct Worker;
  struct Report {
    std::shared_ptr<Fire> fire;
    int code = 0;
    std::string msg;
    bool stop_fire = false;  // reported while its handler runs: request its stop token
    bool logged = false;     // its end line is in the job log already (written by the job thread)
    std::optional<nlohmann::json> output;  // what the handler set (JobContext::SetOutput)
    std::optional<KeptText> log;           // the fire's log for its callback, when its worker kept it
  };

  // Run's work for a /run due now: `queued` tells whether the fire was queued (else it is answered at once).
  xxljob::Envelope Accept(const xxljob::TriggerParam& p, std::int64_t received_ms, bool& queued);
  // Needs mu_: a /run with replaceHeld. Replaces the held fire of its log id (keeping its start), answers
  // for one no longer held, or nullopt for a log id never seen (held as any /run then).
  std::optional<xxljob::Envelope> ReplaceHeldLocked(const xxljob::TriggerParam& p, std::int64_t received_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Needs mu_: why a /run may not be taken now (stopping, draining, a log id held, queued, running or run
  // within the redelivery window), or nullopt.
  std::optional<xxljob::Envelope> RefusalLocked(const xxljob::TriggerParam& p)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A /run for a later instant: checks it, holds it and arms its start.
  xxljob::Envelope Hold(const xxljob::TriggerParam& p, std::int64_t received_ms);
  // On the start timer, at `run_at_ms`: the fires held for that instant meet their job threads, many under
  // one lock (ahead-of-time dispatch starts a whole second's fires for an executor at one runAtMs).
  void StartInstant(std::int64_t run_at_ms);
  // The held fire `log_id` meets its job thread (nothing if it was dropped): one replaced while its instant
  // was starting.
  void StartHeld(std::int64_t log_id);
  // `fires` (read from held_) meet their job threads, in chunks of 128 under one lock each; one refused at
  // its instant (DISCARD_LATER, its handler gone, stopping) is reported through its callback. Skips those
  // dropped meanwhile and returns the log ids of those replaced meanwhile (held_ has a newer fire).
  std::vector<std::int64_t> StartFires(const std::vector<std::shared_ptr<Fire>>& fires);
  // Needs mu_: `fire` meets its job thread and block strategy: nullopt when it was queued, else the
  // refusal (DISCARD_LATER). `res` is its resolved handler (moved from when a job thread is made); `wake` is
  // set when a worker should be notified after mu_ is released.
  std::optional<xxljob::Envelope> QueueLocked(const std::shared_ptr<Fire>& fire, Resolution& res,
                                              std::vector<Report>& reports, bool& wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Needs mu_: drops the held fires of `job_id` (every one when nullopt), reporting them with `reason`.
  void DropHeldLocked(std::optional<int> job_id, const std::string& reason, std::vector<Report>& reports)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WorkerLoop(Worker* w);
  // Needs mu_: carries out what the pool's policy decided (pool_policy.hpp): starts a worker or arms the
  // starvation check; true when an idle worker is to be notified after mu_ is released.
  bool CarryOutLocked(PoolPolicy::Action action) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Needs mu_: starts a pool thread (the policy counted it live).
  void SpawnWorkerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  [[nodiscard]] std::size_t BlockedWorkersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On the timer: adds workers for blocked ones while jobs wait.
  void CheckStarvation();
  void JoinExitedWorkers();
  Report Execute(JobThread& t, const std::shared_ptr<Fire>& fire, JobLogFile& log);
  // The job log's last line for a fire ("----------- job execute end ----------- handleCode=…").
  static std::string EndLine(const Report& r);
  void OnTimeout(const std::shared_ptr<Fire>& fire);
  // The idle check of thread `serial` of `job_id`: reaps it if it has been idle for idle_timeout, else
  // checks again when it would have been.
  void ReapIfIdle(int job_id, std::uint64_t serial);
  // The following need mu_ held.
  // The caller keeps `t` alive by a pointer of its own: retiring erases the map's.
  void RetireLocked(JobThread& t, const std::string& reason, std::vector<Report>& reports)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ClaimLocked(const std::shared_ptr<Fire>& fire) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that `t`'s queue ran empty now, and arms an idle check unless one is pending: one timer task
  // per idle period, not one per fire.
  void ArmIdleLocked(JobThread& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ArmIdleCheckLocked(JobThread& t, ringwheel::SteadyTime::duration delay)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Outside mu_: writes the job-log end line (unless `logged`) and pushes the callback.
  void Deliver(std::vector<Report> reports);

  Settings settings_;
  HandlerResolver resolver_;
  JobLogFiles& logs_;
  CallbackSink& sink_;
  Timer& timer_;
  ringwheel::Clock& clock_;
  RunTrace* trace_;
  Timer& start_timer_;

  mutable cronwheel::Mutex mu_;
  std::condition_variable threads_changed_;
  // Notified when a worker starts to wait for work, only while AwaitIdleWorkers waits (guarded by mu_).
  std::condition_variable idle_changed_;
  std::size_t idle_awaiters_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // Drain: drained_ is notified when a fire ends, the queues change or the wait ends. draining_ is set
  // under mu_ and read without it by Draining(): every /beat asks it, and a beat must answer without
  // waiting for the dispatcher (with a locked read, FaultE2E ran some fires twice in 3 runs of 3; with this
  // one, never: the beats FAILOVER and recovery rely on took longer, not understood further).
  std::atomic<bool> draining_{false};
  bool drain_abandoned_ ABSL_GUARDED_BY(mu_) = false;
  std::condition_variable drained_;
  Timer::Handle drain_deadline_ ABSL_GUARDED_BY(mu_);
  [[nodiscard]] bool IdleLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unordered_map<int, std::shared_ptr<JobThread>> threads_ ABSL_GUARDED_BY(mu_);
  std::uint64_t created_ ABSL_GUARDED_BY(mu_) = 0;
  // The worker pool.
  std::condition_variable work_cv_;
  // Jobs with a fire to run, none of them on a worker.
  std::deque<std::shared_ptr<JobThread>> ready_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Worker>> workers_ ABSL_GUARDED_BY(mu_);
  PoolPolicy pool_ ABSL_GUARDED_BY(mu_);  // live, idle and waking workers, the starvation check armed
  std::size_t exited_workers_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t workers_started_ ABSL_GUARDED_BY(mu_) = 0;
  bool pool_stopping_ ABSL_GUARDED_BY(mu_) = false;
  Timer::Handle starvation_check_ ABSL_GUARDED_BY(mu_);
  // Log ids held, queued or running (active) or finished within the redelivery window.
  RedeliveryWindow log_ids_ ABSL_GUARDED_BY(mu_);
  // Fires held for their runAtMs, by log id (each also active in log_ids_).
  struct Held {
    std::shared_ptr<Fire> fire;
  };
  std::unordered_map<std::int64_t, Held> held_ ABSL_GUARDED_BY(mu_);
  // The start of each runAtMs that fires are held for: one timer task for all of them. A fire dropped or
  // replaced meanwhile stays in `log_ids` (the start looks each up in held_).
  struct HeldInstant {
    std::vector<std::int64_t> log_ids;
    std::uint64_t serial = 0;  // tells a re-made entry of the same instant from this one
    Timer::Handle start;
  };
  std::map<std::int64_t, HeldInstant> held_instants_ ABSL_GUARDED_BY(mu_);
  std::uint64_t instants_armed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cronwheel::executor
