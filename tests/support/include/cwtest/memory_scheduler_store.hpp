#pragma once
// An in-memory SchedulerStore with the same contract as PgSchedulerStore (one mutex stands in for the
// lock row), for unit tests of the scheduler on a FakeClock. It can be told to fail, as a database
// outage would, to lose the acknowledgement of a commit, as a primary dying mid-COMMIT would (the change
// made or not, and CommitOutcomeUnknown thrown either way), and lets a test re-own rows, as recovery by
// another admin would.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "admin/schedule/scheduler_store.hpp"

namespace cwtest {

// A due job of group 1 with the schedule given (type as ringwheel::ScheduleType spells it), next at
// `next_fire_ms`.
inline cronwheel::admin::DueJob DueJobOf(int id, std::string schedule_type, std::string schedule_conf,
                                         std::int64_t next_fire_ms, std::string time_zone = "UTC") {
  return {.id = id,
          .group_id = 1,
          .schedule_type = std::move(schedule_type),
          .schedule_conf = std::move(schedule_conf),
          .time_zone = std::move(time_zone),
          .next_fire_ms = next_fire_ms};
}

// A due CRON job of group 1 that fires every second in UTC ("* * * * * ?"), next at `next_fire_ms`.
inline cronwheel::admin::DueJob EverySecondJob(
    int id, std::int64_t next_fire_ms,
    cronwheel::admin::MisfireStrategy misfire = cronwheel::admin::MisfireStrategy::kDoNothing) {
  auto job = DueJobOf(id, "CRON", "* * * * * ?", next_fire_ms);
  job.misfire_strategy = misfire;
  return job;
}

class MemorySchedulerStore final : public cronwheel::admin::SchedulerStore {
 public:
  struct JobRow {
    cronwheel::admin::DueJob due;
    bool enabled = true;
    std::int64_t last_fire_ms = 0;
    std::string stop_reason;
  };
  struct LogRow {
    std::int64_t id = 0;
    int job_id = 0;
    cronwheel::admin::TriggerType type = cronwheel::admin::TriggerType::kCron;
    std::int64_t scheduled_ms = 0;
    std::string owner;
    std::int64_t dispatch_ms = 0;
    bool skipped = false;
    std::string note;
    int shard_index = 0;
    int shard_total = 1;
    bool invisible = false;  // written by a commit that has not landed yet (Commit::kLater)
  };

  void AddJob(const cronwheel::admin::DueJob& job);
  // A row written outside a scan (manual trigger, child job); returns its id.
  std::int64_t InsertFire(int job_id, cronwheel::admin::TriggerType type, std::int64_t scheduled_ms,
                          const std::string& owner);
  JobRow Job(int id) const;
  std::vector<LogRow> Logs() const;
  // Every further call throws std::runtime_error until Heal().
  void Break();
  void Heal();
  // Another admin re-owned this row (recovery).
  void SetOwner(std::int64_t log_id, const std::string& owner);
  // A stop of job `job_id` committed at `now_ms`, as JobService::StopJob with fire_log::WithdrawUnsent:
  // the job is disabled; its CRON fires for instants after now_ms are deleted, and those claimed are named
  // for WithdrawnAt.
  void StopJob(int job_id, std::int64_t now_ms);
  int scans() const;
  // The operations whose commit acknowledgement a test can lose.
  enum class Op { kScan, kClaim, kMarkSkipped };
  // What became of a commit whose acknowledgement was lost.
  enum class Commit {
    kNo,     // rolled back (or never reached the server)
    kYes,    // carried out before the connection was lost
    kLater,  // carried out after (a scan only): its fires stay invisible until LandLateCommit()
  };
  // The next call of `op` makes its change as `commit` says, then throws
  // cronwheel::admin::CommitOutcomeUnknown and counts a commit in doubt (CommitsInDoubt).
  void LoseNextAck(Op op, Commit commit);
  // The scan commit that was to land later lands now.
  void LandLateCommit();
  // Calls of ClaimForDispatch that released a doubtful claim (for assertions).
  int released_claims() const;

  cronwheel::admin::ScanOutcome Scan(std::string_view node_id, int limit, ringwheel::Clock& clock,
                                     cronwheel::admin::ScanPlanner& planner) override;
  std::vector<cronwheel::admin::ClaimedFire> ClaimForDispatch(
      std::string_view node_id, std::span<const std::int64_t> log_ids, std::int64_t claim_ms,
      std::span<const std::int64_t> doubtful_claims) override;
  std::vector<cronwheel::admin::ClaimedFire> OwnUnclaimed(std::string_view node_id, std::int64_t after_log_id,
                                                          int limit) override;
  std::uint64_t CommitsInDoubt() override;
  std::vector<std::int64_t> WithdrawnAt(std::span<const std::int64_t> instants_ms) override;
  void MarkSkipped(std::span<const std::int64_t> log_ids, std::string_view note) override;
  std::vector<std::int64_t> CreateShards(std::int64_t base_log_id, int total, std::string_view node_id,
                                         std::int64_t now_ms) override;

 private:
  void ThrowIfBroken() const;
  // With mu_ held: whether this call of `op` loses its acknowledgement, and whether it commits.
  struct AckLoss {
    bool lost = false;
    Commit commit = Commit::kYes;
  };
  AckLoss TakeAckLoss(Op op);
  void ThrowInDoubt(Op op);
  cronwheel::admin::ClaimedFire ClaimedOf(const LogRow& row) const;
  mutable std::mutex mu_;
  std::map<Op, Commit> lose_next_ack_;
  std::uint64_t doubts_ = 0;
  int released_claims_ = 0;
  std::map<int, JobRow> jobs_;
  std::map<std::int64_t, LogRow> logs_;
  std::map<std::int64_t, std::int64_t> withdrawn_;  // log id -> instant (fire_withdrawn)
  std::int64_t next_log_id_ = 1;
  bool broken_ = false;
  int scans_ = 0;
};

}  // namespace cwtest
