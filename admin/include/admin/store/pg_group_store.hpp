#pragma once
// GroupStore (catalog/group_store.hpp) on PostgreSQL: the owner of table job_group (XXL-JOB's
// xxl_job_group), with the statements the rules of groups (catalog/group_service.hpp) use. No rule lives
// here. What other tables' owners ask of job_group is group_table (store/group_table.hpp), in this file's
// table too.
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw
// (DatabaseUnavailable, CommitOutcomeUnknown: store/pg_util.hpp).

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/group_store.hpp"
#include "admin/store/pg_pool.hpp"

namespace cronwheel::admin {

class PgGroupStore final : public GroupStore {
 public:
  explicit PgGroupStore(PgPool& pool) : pool_(pool) {}

  void Transact(const std::function<bool(Tx&)>& body) override;
  std::optional<JobGroup> GetGroup(int id) override;
  std::vector<JobGroup> ListGroups() override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin
