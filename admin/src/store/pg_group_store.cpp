// GroupStore on PostgreSQL (admin/store/pg_group_store.hpp): statements only; the rules are GroupService's.
#include "admin/store/pg_group_store.hpp"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "store/group_table.hpp"
#include "store/pg_util.hpp"
#include "store/rows.hpp"

namespace cronwheel::admin {
namespace {

class PgTx final : public GroupStore::Tx {
 public:
  explicit PgTx(pqxx::transaction_base& tx) : tx_(tx) {}

  bool AppNameTaken(const std::string& app_name, int except_id) override {
    return !tx_.exec_params(R"sql(SELECT 1 FROM job_group WHERE app_name = $1 AND id <> $2)sql", app_name,
                            except_id)
                .empty();
  }
  std::vector<int> MissingAlertChannels(std::span<const int> ids) override {
    std::vector<int> out;
    if (ids.empty()) return out;
    for (const auto& r : tx_.exec_params(R"sql(
           SELECT i FROM unnest($1::int[]) WITH ORDINALITY AS u(i, n)
            WHERE NOT EXISTS (SELECT 1 FROM alert_channel WHERE id = u.i) ORDER BY n
         )sql",
                                         PgArray<int>(ids)))
      out.push_back(r[0].as<int>());
    return out;
  }
  std::optional<JobGroup> LockGroup(int id) override {
    const auto rows =
        tx_.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1 FOR UPDATE", kGroupColumns), id);
    if (rows.empty()) return std::nullopt;
    return GroupFromRow(rows[0]);
  }
  JobGroup InsertGroup(const JobGroup& g, std::int64_t now_ms) override {
    return GroupFromRow(tx_.exec_params1(fmt::format(R"sql(
      INSERT INTO job_group (app_name, title, address_type, addresses, access_token, alert_channel_ids,
                             allow_scripts, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4::text[], $5, $7::int[], $8, $6, $6)
      RETURNING {}
    )sql",
                                                     kGroupColumns),
                                         g.app_name, g.title, std::string(ToString(g.address_type)),
                                         PgTextArray(g.addresses), g.access_token, now_ms,
                                         PgArray<int>(g.alert_channel_ids), g.allow_scripts));
  }
  JobGroup UpdateGroup(const JobGroup& g, std::int64_t now_ms) override {
    return GroupFromRow(tx_.exec_params1(fmt::format(R"sql(
      UPDATE job_group
         SET app_name = $2, title = $3, address_type = $4, addresses = $5::text[], access_token = $6,
             updated_ms = $7, alert_channel_ids = $8::int[], allow_scripts = $9
       WHERE id = $1
      RETURNING {}
    )sql",
                                                     kGroupColumns),
                                         g.id, g.app_name, g.title, std::string(ToString(g.address_type)),
                                         PgTextArray(g.addresses), g.access_token, now_ms,
                                         PgArray<int>(g.alert_channel_ids), g.allow_scripts));
  }
  int CountJobs(int id) override {
    return tx_.exec_params1(R"sql(SELECT count(*) FROM job WHERE group_id = $1)sql", id)[0].as<int>();
  }
  void DeleteGroup(int id) override { tx_.exec_params(R"sql(DELETE FROM job_group WHERE id = $1)sql", id); }

 private:
  pqxx::transaction_base& tx_;
};

}  // namespace

void PgGroupStore::Transact(const std::function<bool(Tx&)>& body) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    PgTx adapter(tx);
    if (body(adapter)) tx.commit();
  });
}

std::optional<JobGroup> PgGroupStore::GetGroup(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<JobGroup> {
    pqxx::read_transaction tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM job_group WHERE id = $1", kGroupColumns), id);
    if (rows.empty()) return std::nullopt;
    return GroupFromRow(rows[0]);
  });
}

std::vector<JobGroup> PgGroupStore::ListGroups() {
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
