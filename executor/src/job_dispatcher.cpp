#include "job_dispatcher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "cronwheel/mutex.hpp"
#include "cronwheel/text.hpp"
#include "job_dispatcher_state.hpp"
#include "kill_messages.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {
namespace {

// Messages XXL-JOB's admin and users know (docs/xxl-job-protocol.md §2, §9); "：" is a full-width colon, as
// XXL-JOB's.
constexpr std::string_view kDiscardLaterMsg =
    "block strategy effect\xEF\xBC\x9A"
    "Discard Later";
constexpr std::string_view kCoverEarlyMsg =
    "block strategy effect\xEF\xBC\x9A"
    "Cover Early";
constexpr std::string_view kChangeBeanMsg =
    "change jobhandler or glue type, and terminate the old job thread.";
constexpr std::string_view kChangeGlueMsg =
    "change job source or glue type, and terminate the old job thread.";
constexpr std::string_view kIdleMsg = "executor idle times over limit.";
constexpr std::string_view kBusyMsg = "job thread is running or has trigger queue.";
constexpr std::string_view kTimeoutMsg = "job execute timeout";
constexpr std::size_t kMaxHandleMsg = 50000;

// XXL-JOB cuts a handle message at 50,000 characters and appends "..." (§9); cut on a UTF-8 boundary.
std::string Truncated(const std::string& msg) {
  return Utf8Truncate(msg, kMaxHandleMsg);
}

}  // namespace

JobDispatcher::JobDispatcher(Settings settings, HandlerResolver resolver, JobLogFiles& logs,
                             CallbackSink& sink, Timer& timer, ringwheel::Clock& clock, RunTrace* trace,
                             Timer* start_timer)
    : settings_(settings),
      resolver_(std::move(resolver)),
      logs_(logs),
      sink_(sink),
      timer_(timer),
      clock_(clock),
      trace_(trace),
      start_timer_(start_timer != nullptr ? *start_timer : timer),
      pool_({.workers = settings.workers, .max_workers = settings.max_workers}),
      log_ids_(settings.redelivery_window, settings.redelivery_capacity) {}

JobDispatcher::~JobDispatcher() {
  Stop();
}

xxljob::Envelope JobDispatcher::Run(const xxljob::TriggerParam& p) {
  const std::int64_t received_ms = clock_.NowMs();
  if (p.run_at_ms > received_ms) return Hold(p, received_ms);
  bool queued = false;
  auto answer = Accept(p, received_ms, queued);
  if (!queued && trace_ != nullptr) trace_->Record(p.log_id, p.job_id, received_ms, 0);
  return answer;
}

std::optional<xxljob::Envelope> JobDispatcher::RefusalLocked(const xxljob::TriggerParam& p) {
  if (stopped_) return xxljob::Envelope::Fail(std::string(xxljob::kStoppingMsg));
  if (draining_) return xxljob::Envelope::Fail(std::string(xxljob::kDrainingMsg));
  const auto seen = log_ids_.Find(p.log_id, clock_.SteadyNow());
  if (seen == RedeliveryWindow::Seen::kActive)
    return xxljob::Envelope::Fail(xxljob::RepeatTriggerMsg(p.log_id));
  if (seen == RedeliveryWindow::Seen::kFinished) {
    return xxljob::Envelope{
        xxljob::kCodeSuccess,
        fmt::format("logId:{} was already run by this executor; the redelivery is not run again", p.log_id),
        nullptr};
  }
  return std::nullopt;
}

xxljob::Envelope JobDispatcher::Accept(const xxljob::TriggerParam& p, std::int64_t received_ms,
                                       bool& queued) {
  Resolution res = resolver_(p);
  if (!res.error.empty()) return xxljob::Envelope::Fail(res.error);

  std::vector<Report> reports;
  std::optional<xxljob::Envelope> refused;
  bool wake = false;
  bool join = false;
  {
    cronwheel::MutexLock lock(mu_);
    if (auto refusal = RefusalLocked(p)) return *std::move(refusal);
    auto fire = std::make_shared<Fire>();
    fire->param = p;
    fire->received_ms = received_ms;
    refused = QueueLocked(fire, res, reports, wake);
    if (!refused) {
      queued = true;
      log_ids_.Activate(p.log_id);
    }
    join = exited_workers_ > 0;
  }
  // Notified after mu_ is released, so the worker does not wake only to wait for mu_.
  if (wake) work_cv_.notify_one();
  Deliver(std::move(reports));
  if (join) JoinExitedWorkers();
  return refused ? *std::move(refused) : xxljob::Envelope::Success();
}

std::optional<xxljob::Envelope> JobDispatcher::QueueLocked(const std::shared_ptr<Fire>& fire, Resolution& res,
                                                           std::vector<Report>& reports, bool& wake) {
  const auto& p = fire->param;
  std::shared_ptr<JobThread> t;
  if (const auto it = threads_.find(p.job_id); it != threads_.end()) t = it->second;
  if (t && t->identity != res.identity) {
    RetireLocked(*t, std::string(res.is_glue ? kChangeGlueMsg : kChangeBeanMsg), reports);
    t.reset();
  }
  if (t && (t->running || !t->queue.empty())) {
    // An unknown value is SERIAL_EXECUTION, as XXL-JOB's executor treats it.
    const auto strategy = xxljob::ParseBlockStrategy(p.executor_block_strategy)
                              .value_or(xxljob::BlockStrategy::kSerialExecution);
    if (strategy == xxljob::BlockStrategy::kDiscardLater)
      return xxljob::Envelope::Fail(std::string(kDiscardLaterMsg));
    if (strategy == xxljob::BlockStrategy::kCoverEarly) {
      RetireLocked(*t, std::string(kCoverEarlyMsg), reports);
      t.reset();
    }
  }
  if (!t) {
    t = std::make_shared<JobThread>();
    t->job_id = p.job_id;
    t->identity = std::move(res.identity);
    t->handler = std::move(res.handler);
    threads_[p.job_id] = t;
    threads_changed_.notify_all();
    t->serial = ++created_;
  }
  t->queue.push_back(fire);
  if (!t->scheduled) {
    t->scheduled = true;
    ready_.push_back(std::move(t));
    wake = CarryOutLocked(pool_.OnReady()) || wake;
  }
  return std::nullopt;
}

xxljob::Envelope JobDispatcher::IdleBeat(int job_id) {
  cronwheel::MutexLock lock(mu_);
  const auto it = threads_.find(job_id);
  if (it != threads_.end() && (it->second->running || !it->second->queue.empty())) {
    return xxljob::Envelope::Fail(std::string(kBusyMsg));
  }
  return xxljob::Envelope::Success();
}

std::size_t JobDispatcher::JobThreads() const {
  cronwheel::MutexLock lock(mu_);
  return threads_.size();
}

bool JobDispatcher::AwaitJobThreads(std::size_t n, std::chrono::milliseconds timeout) {
  cronwheel::MutexLock lock(mu_);
  return threads_changed_.wait_for(lock.native(), timeout,
                                   [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return threads_.size() == n; });
}

std::size_t JobDispatcher::Workers() const {
  cronwheel::MutexLock lock(mu_);
  return pool_.live();
}

std::uint64_t JobDispatcher::WorkersStarted() const {
  cronwheel::MutexLock lock(mu_);
  return workers_started_;
}

bool JobDispatcher::AwaitIdleWorkers(std::size_t n, std::chrono::milliseconds timeout) {
  cronwheel::MutexLock lock(mu_);
  ++idle_awaiters_;
  const bool reached = idle_changed_.wait_for(
      lock.native(), timeout, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pool_.idle() >= n; });
  --idle_awaiters_;
  return reached;
}

std::uint64_t JobDispatcher::JobThreadsCreated() const {
  cronwheel::MutexLock lock(mu_);
  return created_;
}

void JobDispatcher::WorkerLoop(Worker* w) {
  cronwheel::MutexLock lock(mu_);
  while (true) {
    if (ready_.empty()) {
      if (pool_stopping_ || pool_.MayEnd(BlockedWorkersLocked())) break;
      pool_.OnWait();
      if (idle_awaiters_ > 0) idle_changed_.notify_all();
      // One wait, not a wait for a predicate: a worker that wakes takes the wake in flight even when
      // another worker took the job it was woken for, so a wake is never counted as pending forever.
      work_cv_.wait(lock.native());
      pool_.OnWake();
      continue;
    }
    std::shared_ptr<JobThread> t = std::move(ready_.front());
    ready_.pop_front();
    if (t->stop || t->queue.empty()) {
      t->scheduled = false;
      continue;
    }
    auto fire = std::move(t->queue.front());
    t->queue.pop_front();
    t->running = fire;
    fire->started_ms = clock_.NowMs();
    w->busy = true;
    w->busy_since = clock_.SteadyNow();
    // More jobs wait: the next worker for them (PoolPolicy::OnTaken), so the ready jobs run in parallel.
    const bool chain = CarryOutLocked(pool_.OnTaken(ready_.size()));
    lock.Unlock();
    if (chain) work_cv_.notify_one();
    if (trace_ != nullptr)
      trace_->Record(fire->param.log_id, fire->param.job_id, fire->received_ms, fire->started_ms);

    {
      // The fire's log stays open from its first line to its end line: one open per fire.
      JobLogFile log(logs_, fire->param.log_date_time, fire->param.log_id);
      Report report = Execute(*t, fire, log);

      lock.Lock();
      t->running.reset();
      w->busy = false;
      if (draining_) drained_.notify_all();
      const bool claimed = ClaimLocked(fire);
      if (!t->stop && t->queue.empty()) ArmIdleLocked(*t);
      lock.Unlock();
      // The job is idle (and its reaping armed) before the callback leaves: a test that saw the callback
      // may advance the clock to reap it.
      if (claimed) {
        log.Write(EndLine(report));
        report.logged = true;
        report.log = log.Kept();
        Deliver({std::move(report)});
      } else {
        log.Write(
            fmt::format("----------- handler returned after the fire was reported (timeout or kill); "
                        "result discarded: handleCode={}, handleMsg={}",
                        report.code, report.msg));
      }
    }
    lock.Lock();
    // The job's next fire starts after this one's callback has left (serial execution), behind the jobs
    // already waiting (round robin).
    if (!t->stop && !t->queue.empty()) {
      ready_.push_back(std::move(t));
    } else {
      t->scheduled = false;
    }
  }
  w->exited = true;
  pool_.OnEnd();
  ++exited_workers_;
}

bool JobDispatcher::CarryOutLocked(PoolPolicy::Action action) {
  switch (action) {
    case PoolPolicy::Action::kWakeIdle:
      return true;
    case PoolPolicy::Action::kStartWorker:
      SpawnWorkerLocked();
      return false;
    case PoolPolicy::Action::kArmCheck:
      starvation_check_ = timer_.After(settings_.blocked_after, [this] { CheckStarvation(); });
      return false;
    case PoolPolicy::Action::kNone:
      return false;
  }
  return false;
}

void JobDispatcher::SpawnWorkerLocked() {
  auto w = std::make_unique<Worker>();
  w->thread = std::jthread([this, raw = w.get()] { WorkerLoop(raw); });
  workers_.push_back(std::move(w));
  ++workers_started_;
}

std::size_t JobDispatcher::BlockedWorkersLocked() const {
  const auto now = clock_.SteadyNow();
  return static_cast<std::size_t>(std::count_if(workers_.begin(), workers_.end(), [&](const auto& w) {
    return !w->exited && w->busy && now - w->busy_since >= settings_.blocked_after;
  }));
}

void JobDispatcher::CheckStarvation() {
  cronwheel::MutexLock lock(mu_);
  const auto check = pool_.OnCheck(ready_.size(), BlockedWorkersLocked(), pool_stopping_);
  if (check.wake_idle) work_cv_.notify_all();
  for (std::size_t i = 0; i < check.start; ++i)
    SpawnWorkerLocked();
  if (check.rearm) starvation_check_ = timer_.After(settings_.blocked_after, [this] { CheckStarvation(); });
}

void JobDispatcher::JoinExitedWorkers() {
  std::vector<std::unique_ptr<Worker>> done;
  {
    cronwheel::MutexLock lock(mu_);
    const auto mid =
        std::partition(workers_.begin(), workers_.end(), [](const auto& w) { return !w->exited; });
    done.assign(std::make_move_iterator(mid), std::make_move_iterator(workers_.end()));
    workers_.erase(mid, workers_.end());
    exited_workers_ = 0;
  }
  for (const auto& w : done) {
    if (w->thread.joinable()) w->thread.join();
  }
}

JobDispatcher::Report JobDispatcher::Execute(JobThread& t, const std::shared_ptr<Fire>& fire,
                                             JobLogFile& log) {
  const auto& p = fire->param;
  FireInfo info{p.job_id,          p.log_id,          p.log_date_time,   p.executor_params,
                p.broadcast_index, p.broadcast_total, p.executor_timeout};
  JobContext ctx(std::move(info), log, fire->stop.get_token(), clock_);
  log.WriteLines({"----------- cronwheel job execute start -----------",
                  fmt::format("----------- Param: {}", p.executor_params)});
  if (p.executor_timeout > 0) {
    fire->timeout =
        timer_.After(std::chrono::seconds(p.executor_timeout), [this, weak = std::weak_ptr<Fire>(fire)] {
          if (auto f = weak.lock()) OnTimeout(f);
        });
  }
  try {
    t.handler(ctx);
  } catch (const std::exception& e) {
    ctx.Fail(e.what());
  } catch (...) {
    ctx.Fail("the handler threw an exception that is not a std::exception");
  }
  fire->timeout.Cancel();
  const JobResult r = ctx.result().value_or(JobResult{});
  return Report{.fire = fire, .code = r.code, .msg = r.msg, .output = ctx.output()};
}

void JobDispatcher::OnTimeout(const std::shared_ptr<Fire>& fire) {
  {
    cronwheel::MutexLock lock(mu_);
    if (!ClaimLocked(fire)) return;
  }
  std::vector<Report> one;
  one.push_back(Report{fire, xxljob::kCodeTimeout, std::string(kTimeoutMsg), true});
  Deliver(std::move(one));
}

void JobDispatcher::ReapIfIdle(int job_id, std::uint64_t serial) {
  {
    cronwheel::MutexLock lock(mu_);
    if (stopped_) return;
    const auto it = threads_.find(job_id);
    if (it == threads_.end() || it->second->serial != serial) return;
    const auto t = it->second;
    t->idle_armed = false;
    // Busy: the next time its queue runs empty arms a new check.
    if (t->running || !t->queue.empty()) return;
    const auto idle_for = clock_.SteadyNow() - t->idle_since;
    if (idle_for < settings_.idle_timeout) {  // it worked since this check was armed
      ArmIdleCheckLocked(*t, settings_.idle_timeout - idle_for);
      return;
    }
    std::vector<Report> none;
    RetireLocked(*t, std::string(kIdleMsg), none);
    spdlog::debug("job {}: thread reaped after {} s idle", job_id, settings_.idle_timeout.count());
  }
}

void JobDispatcher::RetireLocked(JobThread& t, const std::string& reason, std::vector<Report>& reports) {
  if (const auto it = threads_.find(t.job_id); it != threads_.end() && it->second.get() == &t) {
    threads_.erase(it);
    threads_changed_.notify_all();
  }
  t.stop = true;
  t.idle_timer.Cancel();
  if (t.running && ClaimLocked(t.running)) {
    reports.push_back(Report{t.running, xxljob::kCodeFail, reason + std::string(kRunningKilled), true});
  }
  for (auto& q : t.queue) {
    if (ClaimLocked(q))
      reports.push_back(Report{q, xxljob::kCodeFail, reason + std::string(kQueuedKilled), false});
  }
  t.queue.clear();
  if (draining_) drained_.notify_all();
}

bool JobDispatcher::ClaimLocked(const std::shared_ptr<Fire>& fire) {
  if (fire->claimed) return false;
  fire->claimed = true;
  log_ids_.Finish(fire->param.log_id, clock_.SteadyNow());
  return true;
}

void JobDispatcher::ArmIdleLocked(JobThread& t) {
  t.idle_since = clock_.SteadyNow();
  if (!t.idle_armed) ArmIdleCheckLocked(t, settings_.idle_timeout);
}

void JobDispatcher::ArmIdleCheckLocked(JobThread& t, ringwheel::SteadyTime::duration delay) {
  t.idle_armed = true;
  t.idle_timer = timer_.After(delay, [this, id = t.job_id, serial = t.serial] { ReapIfIdle(id, serial); });
}

void JobDispatcher::Deliver(std::vector<Report> reports) {
  for (auto& r : reports) {
    const auto& p = r.fire->param;
    if (!r.logged) logs_.Append(p.log_date_time, p.log_id, EndLine(r));
    if (r.stop_fire) r.fire->stop.request_stop();
    // A fire that never started (killed or replaced in the queue) has its trace line written here; a
    // started one's was written when it started. started_ms was set under mu_ before the claim that put
    // this report here.
    const std::int64_t started_ms = r.fire->started_ms;
    if (started_ms == 0 && trace_ != nullptr) trace_->Record(p.log_id, p.job_id, r.fire->received_ms, 0);
    // The fire's log goes with its result (the admin's archive): as its worker kept it, else read back (a
    // timeout or a kill, reported while the handler may still write).
    auto kept = r.log ? std::move(r.log) : logs_.Kept(p.log_date_time, p.log_id);
    std::optional<xxljob::HandleCallbackParam::JobLog> job_log;
    if (kept) {
      job_log = xxljob::HandleCallbackParam::JobLog{.content = std::move(kept->text),
                                                    .bytes = static_cast<std::int64_t>(kept->size),
                                                    .left_out = static_cast<std::int64_t>(kept->left_out)};
    }
    sink_.Push(xxljob::HandleCallbackParam{
        .log_id = p.log_id,
        .log_date_tim = p.log_date_time,
        .handle_code = r.code,
        .handle_msg = Truncated(r.msg),
        .handle_start_ms = started_ms,
        .output = r.output,
        .job_log = std::move(job_log),
    });
  }
}

std::string JobDispatcher::EndLine(const Report& r) {
  return fmt::format("----------- job execute end ----------- handleCode={}, handleMsg={}", r.code, r.msg);
}

}  // namespace cronwheel::executor
