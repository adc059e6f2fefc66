#pragma once
// Executor groups (table job_group, XXL-JOB's xxl_job_group) on PostgreSQL. The REST API reads and checks a
// group's fields (api/request_bodies.hpp) before it calls these; here is what needs the database: app_name
// is unique, a group with jobs cannot be deleted (XXL-JOB, docs/xxl-job-protocol.md §12 /jobgroup/remove).
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound, kConflict); database failures throw.

#include <functional>
#include <optional>
#include <vector>

#include "admin/model/model.hpp"
#include "admin/model/result.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class GroupRepository {
 public:
  // Edits a group in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(JobGroup&)>;

  GroupRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // `group` already read and checked (ReadGroupBody). kInvalid when its app_name is taken.
  Result<JobGroup> CreateGroup(const JobGroup& group);
  // Applies `edit` to the stored group (locked for update) and saves it. kNotFound, kInvalid.
  Result<JobGroup> UpdateGroup(int id, const Edit& edit);
  // kNotFound; kConflict while the group has jobs.
  Result<void> DeleteGroup(int id);
  std::optional<JobGroup> GetGroup(int id);
  std::vector<JobGroup> ListGroups();

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin
