// AlertChannelStore on PostgreSQL (admin/store/pg_alert_channel_store.hpp): statements only; the rules are
// AlertChannelService's.
#include "admin/store/pg_alert_channel_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "store/group_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kColumns =
    "id, name, kind, preset, target, body_template, secret, to_json(events) AS events, threshold, silence_s, "
    "created_ms, updated_ms";

AlertChannel FromRow(const pqxx::row& r) {
  AlertChannel c;
  c.id = r["id"].as<int>();
  c.name = r["name"].as<std::string>();
  c.kind = ParseAlertKind(r["kind"].c_str()).value_or(AlertKind::kWebhook);
  c.preset = ParseAlertPreset(r["preset"].c_str()).value_or(AlertPreset::kJson);
  c.target = r["target"].as<std::string>();
  c.body_template = r["body_template"].as<std::string>();
  c.secret = r["secret"].as<std::string>();
  c.events = nlohmann::json::parse(r["events"].c_str()).get<std::vector<std::string>>();
  c.threshold = r["threshold"].as<int>();
  c.silence_s = r["silence_s"].as<int>();
  c.created_ms = r["created_ms"].as<std::int64_t>();
  c.updated_ms = r["updated_ms"].as<std::int64_t>();
  return c;
}

class PgTx final : public AlertChannelStore::Tx {
 public:
  explicit PgTx(pqxx::transaction_base& tx) : tx_(tx) {}

  bool NameTaken(const std::string& name, int except_id) override {
    return !tx_.exec_params(R"sql(SELECT 1 FROM alert_channel WHERE name = $1 AND id <> $2)sql", name,
                            except_id)
                .empty();
  }
  std::optional<AlertChannel> LockChannel(int id) override {
    const auto rows =
        tx_.exec_params(fmt::format("SELECT {} FROM alert_channel WHERE id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  }
  AlertChannel InsertChannel(const AlertChannel& c, std::int64_t now_ms) override {
    return FromRow(tx_.exec_params1(fmt::format(R"sql(
      INSERT INTO alert_channel (name, kind, preset, target, body_template, secret, events, threshold, silence_s,
                                 created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $8::text[], $9, $10, $7, $7)
      RETURNING {}
    )sql",
                                                kColumns),
                                    c.name, std::string(ToString(c.kind)), std::string(ToString(c.preset)),
                                    c.target, c.body_template, c.secret, now_ms, PgTextArray(c.events),
                                    c.threshold, c.silence_s));
  }
  AlertChannel UpdateChannel(const AlertChannel& c, std::int64_t now_ms) override {
    return FromRow(tx_.exec_params1(fmt::format(R"sql(
      UPDATE alert_channel
         SET name = $2, kind = $3, preset = $4, target = $5, body_template = $6, secret = $7,
             updated_ms = GREATEST($8, updated_ms + 1), events = $9::text[], threshold = $10, silence_s = $11
       WHERE id = $1
      RETURNING {}
    )sql",
                                                kColumns),
                                    c.id, c.name, std::string(ToString(c.kind)),
                                    std::string(ToString(c.preset)), c.target, c.body_template, c.secret,
                                    now_ms, PgTextArray(c.events), c.threshold, c.silence_s));
  }
  bool DeleteChannel(int id) override {
    return tx_.exec_params(R"sql(DELETE FROM alert_channel WHERE id = $1)sql", id).affected_rows() > 0;
  }
  void RemoveFromJobs(int id) override { job_table::RemoveAlertChannel(tx_, id); }
  void RemoveFromGroups(int id) override { group_table::RemoveAlertChannel(tx_, id); }

 private:
  pqxx::transaction_base& tx_;
};

}  // namespace

void PgAlertChannelStore::Transact(const std::function<bool(Tx&)>& body) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    PgTx adapter(tx);
    if (body(adapter)) tx.commit();
  });
}

std::optional<AlertChannel> PgAlertChannelStore::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<AlertChannel> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM alert_channel WHERE id = $1", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  });
}

std::vector<AlertChannel> PgAlertChannelStore::List() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<AlertChannel> out;
    for (const auto& r : tx.exec(fmt::format("SELECT {} FROM alert_channel ORDER BY name", kColumns)))
      out.push_back(FromRow(r));
    return out;
  });
}

std::vector<AlertEntry> PgAlertChannelStore::ListAlerts(std::optional<int> job_id,
                                                        const std::optional<std::vector<int>>& group_ids,
                                                        int limit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<AlertEntry> out;
    for (const auto& r : tx.exec_params(
             R"sql(
           SELECT a.id, a.job_id, a.channel_id, a.channel_name, a.log_id, a.event, a.outcome, a.attempts,
                  a.next_attempt_ms, a.message, a.created_ms, a.updated_ms
             FROM alert_log a LEFT JOIN job j ON j.id = a.job_id
            WHERE ($1::int IS NULL OR a.job_id = $1)
              AND ($2::int[] IS NULL OR j.group_id = ANY($2::int[]))
            ORDER BY a.id DESC LIMIT $3
         )sql",
             job_id,
             group_ids ? std::optional<std::string>(PgArray<int>(*group_ids)) : std::optional<std::string>(),
             limit)) {
      out.push_back({.id = r[0].as<std::int64_t>(),
                     .job_id = r[1].as<int>(),
                     .channel_id = r[2].as<int>(),
                     .channel_name = r[3].as<std::string>(),
                     .log_id = r[4].as<std::int64_t>(),
                     .event = r[5].as<std::string>(),
                     .outcome = r[6].as<std::string>(),
                     .attempts = r[7].as<int>(),
                     .next_attempt_ms = r[8].as<std::int64_t>(),
                     .message = r[9].as<std::string>(),
                     .created_ms = r[10].as<std::int64_t>(),
                     .updated_ms = r[11].as<std::int64_t>()});
    }
    return out;
  });
}

}  // namespace cronwheel::admin
