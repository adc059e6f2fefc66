#include "app/metered.hpp"

#include <algorithm>

#include "xxljob/vocabulary.hpp"

namespace cronwheel::admin {

void MeteredTriggerRecorder::Record(TriggerResult result) {
  if (result.trigger_code == xxljob::kCodeSuccess) {
    m_.fires_sent.Inc();
  } else {
    m_.fires_failed.Inc();
  }
  // The lag of a CRON fire that reached an executor (an answer, or its failure): other types carry an
  // instant that is not a schedule's (a manual fire's creation, a retry's original instant).
  if (result.type == TriggerType::kCron && result.scheduled_ms > 0 && !result.executor_address.empty()) {
    const auto lag_ms = clock_.NowMs() - result.scheduled_ms;
    m_.fire_lag.Observe(static_cast<double>(lag_ms) / 1000.0);
  }
  inner_.Record(std::move(result));
}

namespace {
const xxljob::Envelope& EnvelopeOf(const xxljob::Envelope& e) {
  return e;
}
const xxljob::Envelope& EnvelopeOf(const ExecutorClient::RunReply& r) {
  return r.envelope;
}
}  // namespace

template <class Call>
auto MeteredExecutorClient::Measure(AdminMetrics::Method& method, Call&& call) {
  const auto start = clock_.SteadyNow();
  auto reply = std::forward<Call>(call)();
  method.duration.Observe(clock_.SteadyNow() - start);
  (EnvelopeOf(reply).code == xxljob::kCodeSuccess ? method.success : method.failure).Inc();
  return reply;
}

void MeteredExecutorClient::RunAsync(const std::string& address, const std::string& token,
                                     const xxljob::TriggerParam& param, std::int64_t send_by_ms,
                                     RunDone done) {
  const auto start = clock_.SteadyNow();
  inner_.RunAsync(address, token, param, send_by_ms, [this, start, done = std::move(done)](RunReply reply) {
    m_.run.duration.Observe(clock_.SteadyNow() - start);
    (reply.envelope.code == xxljob::kCodeSuccess ? m_.run.success : m_.run.failure).Inc();
    done(std::move(reply));
  });
}
ExecutorClient::RunReply MeteredExecutorClient::Run(const std::string& address, const std::string& token,
                                                    const xxljob::TriggerParam& param) {
  return Measure(m_.run, [&] { return inner_.Run(address, token, param); });
}
xxljob::Envelope MeteredExecutorClient::Beat(const std::string& address, const std::string& token) {
  return Measure(m_.beat, [&] { return inner_.Beat(address, token); });
}
xxljob::Envelope MeteredExecutorClient::IdleBeat(const std::string& address, const std::string& token,
                                                 int job_id) {
  return Measure(m_.idle_beat, [&] { return inner_.IdleBeat(address, token, job_id); });
}
xxljob::Envelope MeteredExecutorClient::Kill(const std::string& address, const std::string& token,
                                             int job_id) {
  return Measure(m_.kill, [&] { return inner_.Kill(address, token, job_id); });
}
xxljob::Envelope MeteredExecutorClient::Log(const std::string& address, const std::string& token,
                                            const xxljob::LogParam& param) {
  return Measure(m_.log, [&] { return inner_.Log(address, token, param); });
}

ScanOutcome MeteredSchedulerStore::Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                                        ScanPlanner& planner) {
  const auto start = clock_.SteadyNow();
  ScanOutcome out;
  try {
    out = inner_.Scan(node_id, limit, clock, planner);
  } catch (...) {
    m_.scans_error.Inc();
    m_.scan_duration.Observe(clock_.SteadyNow() - start);
    throw;
  }
  m_.scan_duration.Observe(clock_.SteadyNow() - start);
  (out.full_batch ? m_.scans_full_batch : m_.scans_ok).Inc();
  m_.scan_jobs_read.Observe(static_cast<double>(out.jobs_read));
  m_.scan_lock_wait.Observe(out.lock_wait);
  m_.scan_last_success.Set(static_cast<double>(clock_.NowMs()) / 1000.0);
  m_.partitions_held.Set(out.partitions_held);
  m_.partitions_total.Set(out.partitions_total);
  std::uint64_t skipped = 0;
  for (const auto& f : out.fires)
    skipped += f.skipped ? 1 : 0;
  if (skipped > 0) m_.fires_skipped_misfire.Inc(skipped);
  return out;
}

std::vector<ClaimedFire> MeteredSchedulerStore::ClaimForDispatch(
    std::string_view node_id, std::span<const std::int64_t> log_ids, std::int64_t claim_ms,
    std::span<const std::int64_t> doubtful_claims) {
  auto claimed = inner_.ClaimForDispatch(node_id, log_ids, claim_ms, doubtful_claims);
  const auto held = std::count_if(claimed.begin(), claimed.end(),
                                  [](const ClaimedFire& c) { return c.held_by_log_id != 0; });
  if (held > 0) m_.fires_skipped_concurrency.Inc(static_cast<std::uint64_t>(held));
  return claimed;
}

std::vector<std::int64_t> MeteredSchedulerStore::WithdrawnAt(std::span<const std::int64_t> instants_ms) {
  return inner_.WithdrawnAt(instants_ms);
}

void MeteredSchedulerStore::MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) {
  inner_.MarkSkipped(log_ids, note);
  m_.fires_skipped_misfire.Inc(log_ids.size());
}

std::vector<std::int64_t> MeteredSchedulerStore::CreateShards(std::int64_t base_log_id, int total,
                                                              std::string_view node_id, std::int64_t now_ms) {
  return inner_.CreateShards(base_log_id, total, node_id, now_ms);
}

AlarmOutcome MeteredAlarmSender::Send(const AlarmEvent& event) {
  auto outcome = inner_.Send(event);
  if (outcome.attempted) (outcome.ok ? m_.alarms_sent : m_.alarms_failed).Inc();
  return outcome;
}

}  // namespace cronwheel::admin
