#include "cwtest/memory_scheduler_store.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "admin/model/result.hpp"

namespace cwtest {

using namespace cronwheel::admin;

void MemorySchedulerStore::AddJob(const DueJob& job) {
  std::lock_guard lock(mu_);
  jobs_[job.id] = JobRow{.due = job};
}

std::int64_t MemorySchedulerStore::InsertFire(int job_id, TriggerType type, std::int64_t scheduled_ms,
                                              const std::string& owner) {
  std::lock_guard lock(mu_);
  const auto id = next_log_id_++;
  logs_[id] = LogRow{.id = id, .job_id = job_id, .type = type, .scheduled_ms = scheduled_ms, .owner = owner};
  return id;
}

MemorySchedulerStore::JobRow MemorySchedulerStore::Job(int id) const {
  std::lock_guard lock(mu_);
  return jobs_.at(id);
}

std::vector<MemorySchedulerStore::LogRow> MemorySchedulerStore::Logs() const {
  std::lock_guard lock(mu_);
  std::vector<LogRow> out;
  for (const auto& [id, row] : logs_)
    out.push_back(row);
  return out;
}

void MemorySchedulerStore::Break() {
  std::lock_guard lock(mu_);
  broken_ = true;
}

void MemorySchedulerStore::Heal() {
  std::lock_guard lock(mu_);
  broken_ = false;
}

void MemorySchedulerStore::SetOwner(std::int64_t log_id, const std::string& owner) {
  std::lock_guard lock(mu_);
  logs_.at(log_id).owner = owner;
}

int MemorySchedulerStore::scans() const {
  std::lock_guard lock(mu_);
  return scans_;
}

void MemorySchedulerStore::ThrowIfBroken() const {
  if (broken_) throw std::runtime_error("database unavailable (MemorySchedulerStore::Break)");
}

void MemorySchedulerStore::LoseNextAck(Op op, Commit commit) {
  std::lock_guard lock(mu_);
  lose_next_ack_[op] = commit;
}

void MemorySchedulerStore::LandLateCommit() {
  std::lock_guard lock(mu_);
  for (auto& [id, row] : logs_)
    row.invisible = false;
}

int MemorySchedulerStore::released_claims() const {
  std::lock_guard lock(mu_);
  return released_claims_;
}

MemorySchedulerStore::AckLoss MemorySchedulerStore::TakeAckLoss(Op op) {
  const auto it = lose_next_ack_.find(op);
  if (it == lose_next_ack_.end()) return {};
  const AckLoss loss{.lost = true, .commit = it->second};
  lose_next_ack_.erase(it);
  return loss;
}

void MemorySchedulerStore::ThrowInDoubt(Op op) {
  ++doubts_;
  throw CommitOutcomeUnknown(
      "the connection was lost while committing (MemorySchedulerStore::LoseNextAck, op " +
      std::to_string(static_cast<int>(op)) + ")");
}

ClaimedFire MemorySchedulerStore::ClaimedOf(const LogRow& row) const {
  return {.log_id = row.id,
          .job_id = row.job_id,
          .scheduled_ms = row.scheduled_ms,
          .type = row.type,
          .misfire_strategy = jobs_.count(row.job_id) ? jobs_.at(row.job_id).due.misfire_strategy
                                                      : MisfireStrategy::kDoNothing,
          .shard_index = row.shard_index,
          .shard_total = row.shard_total};
}

std::uint64_t MemorySchedulerStore::CommitsInDoubt() {
  std::lock_guard lock(mu_);
  return doubts_;
}

std::vector<ClaimedFire> MemorySchedulerStore::OwnUnclaimed(std::string_view node_id,
                                                            std::int64_t after_log_id, int limit) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  std::vector<ClaimedFire> out;
  for (auto it = logs_.upper_bound(after_log_id); it != logs_.end() && static_cast<int>(out.size()) < limit;
       ++it) {
    const auto& row = it->second;
    if (row.owner == node_id && row.dispatch_ms == 0 && !row.skipped && !row.invisible)
      out.push_back(ClaimedOf(row));
  }
  return out;
}

ScanOutcome MemorySchedulerStore::Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                                       ScanPlanner& planner) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  const auto loss = TakeAckLoss(Op::kScan);
  if (loss.lost && loss.commit == Commit::kNo) ThrowInDoubt(Op::kScan);
  ++scans_;
  ScanOutcome out;
  out.now_ms = clock.NowMs();
  const auto horizon = out.now_ms + planner.settings().pre_read.count();
  std::vector<DueJob> due;
  for (const auto& [id, row] : jobs_) {
    if (row.enabled && row.due.next_fire_ms <= horizon) due.push_back(row.due);
  }
  std::sort(due.begin(), due.end(), [](const DueJob& a, const DueJob& b) {
    return a.next_fire_ms != b.next_fire_ms ? a.next_fire_ms < b.next_fire_ms : a.id < b.id;
  });
  if (static_cast<int>(due.size()) > limit) due.resize(static_cast<std::size_t>(limit));
  out.jobs_read = due.size();
  out.full_batch = static_cast<int>(due.size()) >= limit;
  const auto plan = planner.Plan(due, out.now_ms);
  std::set<std::pair<int, std::int64_t>> taken;
  for (const auto& [id, row] : logs_) {
    if (row.type == TriggerType::kCron || row.type == TriggerType::kMisfire)
      taken.insert({row.job_id, row.scheduled_ms});
  }
  for (const auto& f : plan.fires) {
    if (!taken.insert({f.job_id, f.scheduled_ms}).second) continue;  // the unique key
    const auto id = next_log_id_++;
    logs_[id] = LogRow{.id = id,
                       .job_id = f.job_id,
                       .type = f.type,
                       .scheduled_ms = f.scheduled_ms,
                       .owner = std::string(node_id),
                       .skipped = f.skipped,
                       .note = f.note,
                       .invisible = loss.lost && loss.commit == Commit::kLater};
    out.fires.push_back({.log_id = id,
                         .job_id = f.job_id,
                         .scheduled_ms = f.scheduled_ms,
                         .type = f.type,
                         .skipped = f.skipped});
  }
  for (const auto& a : plan.advances) {
    auto& row = jobs_.at(a.job_id);
    if (!row.enabled || row.due.next_fire_ms != a.expected_next_ms) continue;
    row.due.next_fire_ms = a.stop ? 0 : a.next_fire_ms;
    if (a.last_fire_ms > 0) row.last_fire_ms = a.last_fire_ms;
    if (a.stop) {
      row.enabled = false;
      row.stop_reason = a.stop_reason;
    }
  }
  if (loss.lost) ThrowInDoubt(Op::kScan);
  return out;
}

std::vector<ClaimedFire> MemorySchedulerStore::ClaimForDispatch(
    std::string_view node_id, std::span<const std::int64_t> log_ids, std::int64_t claim_ms,
    std::span<const std::int64_t> doubtful_claims) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  const auto loss = TakeAckLoss(Op::kClaim);
  if (loss.lost && loss.commit == Commit::kNo) ThrowInDoubt(Op::kClaim);
  std::vector<ClaimedFire> out;
  for (auto id : log_ids) {
    auto it = logs_.find(id);
    if (it == logs_.end()) continue;
    auto& row = it->second;
    if (row.owner != node_id || row.skipped || row.invisible) continue;
    if (row.dispatch_ms != 0 &&
        std::find(doubtful_claims.begin(), doubtful_claims.end(), row.dispatch_ms) != doubtful_claims.end()) {
      row.dispatch_ms = 0;  // a claim whose outcome was unknown: released, then taken again below
      ++released_claims_;
    }
    if (row.dispatch_ms != 0) continue;
    row.dispatch_ms = claim_ms;
    out.push_back(ClaimedOf(row));
  }
  if (loss.lost) ThrowInDoubt(Op::kClaim);
  return out;
}

void MemorySchedulerStore::StopJob(int job_id, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  jobs_.at(job_id).enabled = false;
  for (auto it = logs_.begin(); it != logs_.end();) {
    auto& row = it->second;
    if (row.job_id != job_id || row.type != TriggerType::kCron || row.skipped || row.scheduled_ms <= now_ms) {
      ++it;
    } else {
      if (row.dispatch_ms != 0) withdrawn_[row.id] = row.scheduled_ms;
      it = logs_.erase(it);
    }
  }
}

std::vector<std::int64_t> MemorySchedulerStore::WithdrawnAt(std::span<const std::int64_t> instants_ms) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  std::vector<std::int64_t> out;
  for (const auto& [id, at] : withdrawn_) {
    if (std::find(instants_ms.begin(), instants_ms.end(), at) != instants_ms.end()) out.push_back(id);
  }
  return out;
}

void MemorySchedulerStore::MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  const auto loss = TakeAckLoss(Op::kMarkSkipped);
  if (loss.lost && loss.commit == Commit::kNo) ThrowInDoubt(Op::kMarkSkipped);
  for (auto id : log_ids) {
    auto& row = logs_.at(id);
    row.skipped = true;
    row.note += std::string(row.note.empty() ? "" : "\n") + std::string(note);
  }
  if (loss.lost) ThrowInDoubt(Op::kMarkSkipped);
}

std::vector<std::int64_t> MemorySchedulerStore::CreateShards(std::int64_t base_log_id, int total,
                                                             std::string_view node_id, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  ThrowIfBroken();
  auto& base = logs_.at(base_log_id);
  std::vector<std::int64_t> ids{base_log_id};
  if (base.shard_total != 1) return ids;
  base.shard_total = total;
  for (int i = 1; i < total; ++i) {
    const auto id = next_log_id_++;
    auto row = base;
    row.id = id;
    row.owner = std::string(node_id);
    row.dispatch_ms = now_ms;
    row.shard_index = i;
    logs_[id] = row;
    ids.push_back(id);
  }
  return ids;
}

}  // namespace cwtest
