#include "admin/catalog/group_service.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace cronwheel::admin {
namespace {

FieldError AppNameTaken(const std::string& app_name) {
  return {"app_name",
          fmt::format("a group with app_name '{}' exists already", app_name),
          "exists",
          {{"value", app_name}}};
}

// What a saved group must pass in the stored state: no other group (but `id`, 0 for a new one) has its
// app_name (alone when taken), then every alert channel it names exists. Empty when it passes.
FieldErrors Validate(GroupStore::Tx& tx, const JobGroup& group, int id) {
  if (tx.AppNameTaken(group.app_name, id)) return {AppNameTaken(group.app_name)};
  FieldErrors errors;
  if (group.alert_channel_ids.empty()) return errors;
  for (const int missing : tx.MissingAlertChannels(group.alert_channel_ids)) {
    errors.push_back({"alert_channel_ids",
                      fmt::format("alert channel {} not found", missing),
                      "not_found",
                      {{"id", missing}}});
  }
  return errors;
}

Error NoGroup(int id) {
  return Error::NotFound(fmt::format("group {} not found", id));
}

}  // namespace

template <class T, class F>
Result<T> GroupService::InTransaction(F&& body) {
  std::optional<Result<T>> out;
  store_.Transact([&](GroupStore::Tx& tx) {
    out.emplace(body(tx));
    return out->ok();
  });
  return *std::move(out);
}

Result<JobGroup> GroupService::CreateGroup(const JobGroup& group) {
  return InTransaction<JobGroup>([&](GroupStore::Tx& tx) -> Result<JobGroup> {
    if (auto errors = Validate(tx, group, 0); !errors.empty())
      return Error::Invalid("the group is not valid", std::move(errors));
    return tx.InsertGroup(group, clock_.NowMs());
  });
}

Result<JobGroup> GroupService::UpdateGroup(int id, const Edit& edit) {
  return InTransaction<JobGroup>([&](GroupStore::Tx& tx) -> Result<JobGroup> {
    auto group = tx.LockGroup(id);
    if (!group) return NoGroup(id);
    if (auto edited = edit(*group); !edited) return edited.error();
    group->id = id;
    if (auto errors = Validate(tx, *group, id); !errors.empty())
      return Error::Invalid("the group is not valid", std::move(errors));
    return tx.UpdateGroup(*group, clock_.NowMs());
  });
}

Result<void> GroupService::DeleteGroup(int id) {
  auto deleted = InTransaction<bool>([&](GroupStore::Tx& tx) -> Result<bool> {
    if (!tx.LockGroup(id)) return NoGroup(id);
    // Its jobs would have no group to run in (XXL-JOB refuses the same).
    if (const int jobs = tx.CountJobs(id); jobs > 0) {
      return Error::Conflict(
          fmt::format("group {} still has {} job(s); delete or move them first", id, jobs));
    }
    tx.DeleteGroup(id);
    return true;
  });
  if (!deleted) return deleted.error();
  return {};
}

std::optional<JobGroup> GroupService::GetGroup(int id) {
  return store_.GetGroup(id);
}

std::vector<JobGroup> GroupService::ListGroups() {
  return store_.ListGroups();
}

}  // namespace cronwheel::admin
