#include "admin/store/group_repository.hpp"

#include <fmt/format.h>

#include "store/alert_channel_table.hpp"
#include "store/group_table.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

FieldError AppNameTaken(const std::string& app_name) {
  return {"app_name",
          fmt::format("a group with app_name '{}' exists already", app_name),
          "exists",
          {{"value", app_name}}};
}

}  // namespace

Result<JobGroup> GroupRepository::CreateGroup(const JobGroup& g) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<JobGroup> {
    pqxx::work tx(conn);
    if (!tx.exec_params(R"sql(SELECT 1 FROM job_group WHERE app_name = $1)sql", g.app_name).empty()) {
      return Error::Invalid("the group is not valid", {AppNameTaken(g.app_name)});
    }
    FieldErrors missing;
    alert_channel_table::CheckExist(tx, g.alert_channel_ids, "alert_channel_ids", missing);
    if (!missing.empty()) return Error::Invalid("the group is not valid", std::move(missing));
    const auto row =
        tx.exec_params1(fmt::format(R"sql(
      INSERT INTO job_group (app_name, title, address_type, addresses, access_token, alert_channel_ids,
                             allow_scripts, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4::text[], $5, $7::int[], $8, $6, $6)
      RETURNING {}
    )sql",
                                    kGroupColumns),
                        g.app_name, g.title, std::string(ToString(g.address_type)), PgTextArray(g.addresses),
                        g.access_token, clock_.NowMs(), PgArray<int>(g.alert_channel_ids), g.allow_scripts);
    tx.commit();
    return GroupFromRow(row);
  });
}

Result<JobGroup> GroupRepository::UpdateGroup(int id, const Edit& edit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<JobGroup> {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1 FOR UPDATE", kGroupColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("group {} not found", id));
    JobGroup g = GroupFromRow(rows[0]);
    if (auto edited = edit(g); !edited) return edited.error();
    if (!tx.exec_params(R"sql(SELECT 1 FROM job_group WHERE app_name = $1 AND id <> $2)sql", g.app_name, id)
             .empty()) {
      return Error::Invalid("the group is not valid", {AppNameTaken(g.app_name)});
    }
    FieldErrors missing;
    alert_channel_table::CheckExist(tx, g.alert_channel_ids, "alert_channel_ids", missing);
    if (!missing.empty()) return Error::Invalid("the group is not valid", std::move(missing));
    const auto row = tx.exec_params1(fmt::format(R"sql(
      UPDATE job_group
         SET app_name = $2, title = $3, address_type = $4, addresses = $5::text[], access_token = $6,
             updated_ms = $7, alert_channel_ids = $8::int[], allow_scripts = $9
       WHERE id = $1
      RETURNING {}
    )sql",
                                                 kGroupColumns),
                                     id, g.app_name, g.title, std::string(ToString(g.address_type)),
                                     PgTextArray(g.addresses), g.access_token, clock_.NowMs(),
                                     PgArray<int>(g.alert_channel_ids), g.allow_scripts);
    tx.commit();
    return GroupFromRow(row);
  });
}

Result<void> GroupRepository::DeleteGroup(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    if (tx.exec_params(R"sql(SELECT 1 FROM job_group WHERE id = $1 FOR UPDATE)sql", id).empty())
      return Error::NotFound(fmt::format("group {} not found", id));
    const auto jobs =
        tx.exec_params1(R"sql(SELECT count(*) FROM job WHERE group_id = $1)sql", id)[0].as<int>();
    if (jobs > 0) {
      return Error::Conflict(
          fmt::format("group {} still has {} job(s); delete or move them first", id, jobs));
    }
    tx.exec_params(R"sql(DELETE FROM job_group WHERE id = $1)sql", id);
    tx.commit();
    return {};
  });
}

std::optional<JobGroup> GroupRepository::GetGroup(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobGroup> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1", kGroupColumns), id);
    if (rows.empty()) return std::nullopt;
    return GroupFromRow(rows[0]);
  });
}

std::vector<JobGroup> GroupRepository::ListGroups() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<JobGroup> out;
    for (const auto& r : tx.exec(fmt::format("SELECT {} FROM job_group ORDER BY id", kGroupColumns)))
      out.push_back(GroupFromRow(r));
    return out;
  });
}

namespace group_table {

void RemoveAlertChannel(pqxx::transaction_base& tx, int channel_id) {
  tx.exec_params(R"sql(
    UPDATE job_group SET alert_channel_ids = array_remove(alert_channel_ids, $1), updated_ms = updated_ms + 1
     WHERE $1 = ANY(alert_channel_ids)
  )sql",
                 channel_id);
}

}  // namespace group_table

}  // namespace cronwheel::admin
