#include "admin/store/alert_channel_repository.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "store/alert_channel_table.hpp"
#include "store/group_table.hpp"
#include "store/job_table.hpp"
#include "store/pg_util.hpp"

namespace cronwheel::admin {
namespace {

constexpr const char* kColumns =
    "id, name, kind, preset, target, body_template, secret, created_ms, updated_ms";

AlertChannel FromRow(const pqxx::row& r) {
  AlertChannel c;
  c.id = r["id"].as<int>();
  c.name = r["name"].as<std::string>();
  c.kind = ParseAlertKind(r["kind"].c_str()).value_or(AlertKind::kWebhook);
  c.preset = ParseAlertPreset(r["preset"].c_str()).value_or(AlertPreset::kJson);
  c.target = r["target"].as<std::string>();
  c.body_template = r["body_template"].as<std::string>();
  c.secret = r["secret"].as<std::string>();
  c.created_ms = r["created_ms"].as<std::int64_t>();
  c.updated_ms = r["updated_ms"].as<std::int64_t>();
  return c;
}

FieldError NameTaken(const std::string& name) {
  return {"name", fmt::format("a channel named '{}' exists already", name), "exists", {{"value", name}}};
}

}  // namespace

namespace alert_channel_table {

void CheckExist(pqxx::transaction_base& tx, std::span<const int> ids, const char* field,
                FieldErrors& errors) {
  if (ids.empty()) return;
  const auto rows = tx.exec_params(R"sql(
    SELECT i FROM unnest($1::int[]) AS i WHERE NOT EXISTS (SELECT 1 FROM alert_channel WHERE id = i)
  )sql",
                                   PgArray<int>(ids));
  for (const auto& r : rows) {
    const int id = r[0].as<int>();
    errors.push_back({field, fmt::format("alert channel {} not found", id), "not_found", {{"id", id}}});
  }
}

std::string JsonOf(const std::string& ids_expr) {
  return fmt::format(R"sql((SELECT coalesce(json_agg(json_build_object(
      'id', a.id, 'name', a.name, 'kind', a.kind, 'preset', a.preset, 'target', a.target,
      'body_template', a.body_template, 'secret', a.secret) ORDER BY a.id), '[]')
    FROM alert_channel a WHERE a.id = ANY({})))sql",
                     ids_expr);
}

std::vector<AlertChannel> FromJson(const std::string& json_text) {
  std::vector<AlertChannel> out;
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& o : j) {
    AlertChannel c;
    c.id = o.value("id", 0);
    c.name = o.value("name", std::string());
    c.kind = ParseAlertKind(o.value("kind", std::string())).value_or(AlertKind::kWebhook);
    c.preset = ParseAlertPreset(o.value("preset", std::string())).value_or(AlertPreset::kJson);
    c.target = o.value("target", std::string());
    c.body_template = o.value("body_template", std::string());
    c.secret = o.value("secret", std::string());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace alert_channel_table

Result<AlertChannel> AlertChannelRepository::Create(const AlertChannel& c) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<AlertChannel> {
    pqxx::work tx(conn);
    if (!tx.exec_params(R"sql(SELECT 1 FROM alert_channel WHERE name = $1)sql", c.name).empty()) {
      return Error::Invalid("the alert channel is not valid", {NameTaken(c.name)});
    }
    const auto row = tx.exec_params1(fmt::format(R"sql(
      INSERT INTO alert_channel (name, kind, preset, target, body_template, secret, created_ms, updated_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
      RETURNING {}
    )sql",
                                                 kColumns),
                                     c.name, std::string(ToString(c.kind)), std::string(ToString(c.preset)),
                                     c.target, c.body_template, c.secret, clock_.NowMs());
    tx.commit();
    return FromRow(row);
  });
}

Result<AlertChannel> AlertChannelRepository::Update(int id, const Edit& edit) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<AlertChannel> {
    pqxx::work tx(conn);
    const auto rows =
        tx.exec_params(fmt::format("SELECT {} FROM alert_channel WHERE id = $1 FOR UPDATE", kColumns), id);
    if (rows.empty()) return Error::NotFound(fmt::format("alert channel {} not found", id));
    AlertChannel c = FromRow(rows[0]);
    if (auto edited = edit(c); !edited) return edited.error();
    if (!tx.exec_params(R"sql(SELECT 1 FROM alert_channel WHERE name = $1 AND id <> $2)sql", c.name, id)
             .empty()) {
      return Error::Invalid("the alert channel is not valid", {NameTaken(c.name)});
    }
    const auto row =
        tx.exec_params1(fmt::format(R"sql(
      UPDATE alert_channel
         SET name = $2, kind = $3, preset = $4, target = $5, body_template = $6, secret = $7,
             updated_ms = GREATEST($8, updated_ms + 1)
       WHERE id = $1
      RETURNING {}
    )sql",
                                    kColumns),
                        id, c.name, std::string(ToString(c.kind)), std::string(ToString(c.preset)), c.target,
                        c.body_template, c.secret, clock_.NowMs());
    tx.commit();
    return FromRow(row);
  });
}

Result<void> AlertChannelRepository::Delete(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> Result<void> {
    pqxx::work tx(conn);
    if (tx.exec_params(R"sql(DELETE FROM alert_channel WHERE id = $1)sql", id).affected_rows() == 0) {
      return Error::NotFound(fmt::format("alert channel {} not found", id));
    }
    // The jobs' and groups' lists lose it in the same transaction, by their tables' owners.
    job_table::RemoveAlertChannel(tx, id);
    group_table::RemoveAlertChannel(tx, id);
    tx.commit();
    return {};
  });
}

std::optional<AlertChannel> AlertChannelRepository::Get(int id) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<AlertChannel> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params(fmt::format("SELECT {} FROM alert_channel WHERE id = $1", kColumns), id);
    if (rows.empty()) return std::nullopt;
    return FromRow(rows[0]);
  });
}

std::vector<AlertChannel> AlertChannelRepository::List() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    std::vector<AlertChannel> out;
    for (const auto& r : tx.exec(fmt::format("SELECT {} FROM alert_channel ORDER BY name", kColumns)))
      out.push_back(FromRow(r));
    return out;
  });
}

}  // namespace cronwheel::admin
