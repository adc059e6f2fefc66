#pragma once
// The rules of executor groups (table job_group, XXL-JOB's xxl_job_group): creation, updates and deletion,
// over a GroupStore (catalog/group_store.hpp) that holds only statements. The REST API reads and checks a
// group's fields first (ReadGroupBody: its app_name, addresses, token) and which of them the caller may
// change (a group's ADMIN: its title and alert channels; api/groups.cpp); here is what needs the stored
// state: app_name is unique (checked first: a taken one is the only error given), every alert channel it
// names exists, and a group with jobs cannot be deleted (XXL-JOB, docs/xxl-job-protocol.md §12
// /jobgroup/remove).
//
// Time: now is read from the injected Clock once per call. Thread-safety: safe from any thread (the store's
// transactions serialise what must be). Errors: expected outcomes are Results (kInvalid with fields,
// kNotFound, kConflict); database failures throw, and a refused call changes nothing.

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/group_store.hpp"
#include "admin/model/model.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class GroupService {
 public:
  // Edits a group in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(JobGroup&)>;

  GroupService(ringwheel::Clock& clock, GroupStore& store) : clock_(clock), store_(store) {}

  // `group` already read and checked (ReadGroupBody). kInvalid: its app_name is taken (code "exists" on
  // app_name), else one not_found error on alert_channel_ids per channel that does not exist.
  Result<JobGroup> CreateGroup(const JobGroup& group);
  // Applies `edit` to the stored group (locked for update) and saves it. kNotFound, kInvalid as CreateGroup,
  // or the error `edit` returned.
  Result<JobGroup> UpdateGroup(int id, const Edit& edit);
  // kNotFound; kConflict while the group has jobs (saying how many).
  Result<void> DeleteGroup(int id);
  std::optional<JobGroup> GetGroup(int id);
  // By id.
  std::vector<JobGroup> ListGroups();

 private:
  // Runs `body` in one transaction of the store, committed when it returns a value (not an error).
  template <class T, class F>
  Result<T> InTransaction(F&& body);

  ringwheel::Clock& clock_;
  GroupStore& store_;
};

}  // namespace cronwheel::admin
