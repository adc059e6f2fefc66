#pragma once
// JobStore (catalog/job_store.hpp) on PostgreSQL: the statements on tables job, job_schedule (through
// job_table), glue_history and run_once that the rules of jobs (catalog/job_service.hpp) use, and the fire
// statements they need (store/fire_log.hpp). No rule lives here.
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw
// (DatabaseUnavailable, CommitOutcomeUnknown: store/pg_util.hpp).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/catalog/job_store.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class PgJobStore final : public JobStore {
 public:
  // `clock` is read where a statement needs now under its locks (withdrawals, fires sent ahead).
  PgJobStore(ringwheel::Clock& clock, PgPool& pool);

  void Transact(const std::function<bool(Tx&)>& body) override;
  std::optional<Job> GetJob(int id) override;
  JobPage ListJobs(const JobQuery& q) override;
  std::vector<TagCount> ListTags(const std::optional<std::vector<int>>& group_ids) override;
  void DeleteJobFires(int job_id) override;
  std::vector<SentAheadFire> SentAhead(int job_id) override;
  std::vector<std::int64_t> WithdrawnClaims(int job_id) override;
  void MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) override;
  std::optional<std::int64_t> InsertManualFire(int job_id, TriggerType type,
                                               const std::optional<std::string>& param,
                                               const std::string& node_id, std::int64_t now_ms) override;
  std::optional<RunOnce> InsertRunOnce(int job_id, std::int64_t fire_at_ms,
                                       const std::optional<std::string>& param, const std::string& who,
                                       std::int64_t now_ms) override;
  std::vector<RunOnce> ListRunOnce(int job_id, int limit) override;

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
