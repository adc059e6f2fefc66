#include "admin/executor_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "admin/scan_planner.hpp"
#include "cronwheel/net/http_address.hpp"
#include "pg_util.hpp"
#include "ringwheel/schedule.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::size_t kMaxHandleMsg = 15'000;  // XXL-JOB truncates handle_msg to this

std::string Truncate(std::string s, std::size_t n) {
  if (s.size() <= n) return s;
  s.resize(n);
  // Do not leave half a UTF-8 sequence at the end.
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80)
    s.pop_back();
  if (!s.empty() && (static_cast<unsigned char>(s.back()) & 0x80) != 0) s.pop_back();
  return s + "...";
}

}  // namespace

RegistryService::RegistryService(ringwheel::Clock& clock, PgPool& pool, std::chrono::milliseconds dead_after)
    : clock_(clock), pool_(pool), dead_after_(dead_after) {}

void RegistryService::Register(const xxljob::RegistryParam& p) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        "INSERT INTO executor_registry (registry_group, registry_key, registry_value, updated_ms)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (registry_group, registry_key, registry_value)"
        " DO UPDATE SET updated_ms = EXCLUDED.updated_ms",
        p.registry_group, p.registry_key, cronwheel::net::NormalizeAddress(p.registry_value), clock_.NowMs());
    tx.commit();
  });
}

void RegistryService::Remove(const xxljob::RegistryParam& p) {
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    tx.exec_params(
        "DELETE FROM executor_registry WHERE registry_group = $1 AND registry_key = $2 AND registry_value = "
        "$3",
        p.registry_group, p.registry_key, cronwheel::net::NormalizeAddress(p.registry_value));
    tx.commit();
  });
}

std::size_t RegistryService::ExpireDead() {
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto n = tx.exec_params("DELETE FROM executor_registry WHERE updated_ms < $1",
                                  clock_.NowMs() - dead_after_.count())
                       .affected_rows();
    tx.commit();
    return static_cast<std::size_t>(n);
  });
}

std::optional<std::string> RegistryService::GroupToken(const std::string& app_name) {
  return WithConnection(pool_, [&](pqxx::connection& conn) -> std::optional<std::string> {
    pqxx::read_transaction tx(conn);
    const auto rows = tx.exec_params("SELECT access_token FROM job_group WHERE app_name = $1", app_name);
    if (rows.empty() || rows[0][0].is_null()) return std::nullopt;
    return rows[0][0].as<std::string>();
  });
}

CallbackService::CallbackService(ringwheel::Clock& clock, PgPool& pool, std::string node_id, Submit submit)
    : clock_(clock), pool_(pool), node_id_(std::move(node_id)), submit_(std::move(submit)) {}

bool CallbackService::Authorized(std::span<const xxljob::HandleCallbackParam> callbacks,
                                 const std::string& token, const std::string& global_token) {
  if (!global_token.empty() && xxljob::TokenMatches(token, global_token)) return true;
  std::vector<std::int64_t> ids;
  for (const auto& c : callbacks)
    ids.push_back(c.log_id);
  if (ids.empty()) return global_token.empty() || xxljob::TokenMatches(token, global_token);
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    // A log id no fire has needs the global token like any other: otherwise a wrong token would be
    // refused only for ids that exist, telling a caller without the token which ones do.
    std::set<std::int64_t> unknown(ids.begin(), ids.end());
    for (const auto& r :
         tx.exec_params("SELECT l.id, g.access_token FROM job_log l JOIN job_group g ON g.id = l.group_id"
                        " WHERE l.id = ANY($1::bigint[])",
                        PgArray<std::int64_t>(ids))) {
      unknown.erase(r[0].as<std::int64_t>());
      const std::string expected = r[1].is_null() ? global_token : r[1].as<std::string>();
      if (!xxljob::TokenMatches(token, expected)) return false;
    }
    return unknown.empty() || xxljob::TokenMatches(token, global_token);
  });
}

CallbackService::Outcome CallbackService::Handle(std::span<const xxljob::HandleCallbackParam> callbacks) {
  Outcome out;
  if (callbacks.empty()) return out;
  // The last result per log id wins within one batch; duplicates count as ignored.
  // Ordered by id: batched writers of job_log lock rows in one order (see PgLogWriter).
  std::map<std::int64_t, const xxljob::HandleCallbackParam*> latest;
  for (const auto& c : callbacks)
    latest[c.log_id] = &c;
  out.ignored = static_cast<int>(callbacks.size() - latest.size());
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [id, c] : latest) {
    // handle_code 0 would read as "no result yet": a callback must carry a final code.
    const int code = c->handle_code == 0 ? xxljob::kCodeFail : c->handle_code;
    rows.push_back({{"i", id}, {"c", code}, {"m", Truncate(c->handle_msg, kMaxHandleMsg)}});
  }
  const auto now = clock_.NowMs();
  std::vector<Fire> children;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto done = tx.exec_params(
        "UPDATE job_log l SET handle_code = v.c, handle_ms = $2,"
        " handle_msg = CASE WHEN l.handle_msg = '' THEN v.m ELSE l.handle_msg || E'\\n' || v.m END"
        " FROM json_to_recordset($1::json) AS v(i bigint, c int, m text)"
        " WHERE l.id = v.i AND l.handle_code = 0"
        " RETURNING l.id, l.job_id, l.handle_code",
        rows.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), now);
    out.recorded = static_cast<int>(done.size());
    out.ignored += static_cast<int>(latest.size() - done.size());
    std::vector<std::int64_t> succeeded;
    std::vector<int> finished_jobs;
    for (const auto& r : done) {
      finished_jobs.push_back(r[1].as<int>());
      if (r[2].as<int>() == xxljob::kCodeSuccess) succeeded.push_back(r[0].as<std::int64_t>());
    }
    // FIX_DELAY: the next run is due `delay` after this one finished.
    if (!finished_jobs.empty()) {
      for (const auto& r :
           tx.exec_params("SELECT id, schedule_conf, time_zone FROM job WHERE id = ANY($1::int[]) AND enabled"
                          " AND schedule_type = 'FIX_DELAY' AND next_fire_ms = $2",
                          PgArray<int>(finished_jobs), kAwaitingCompletion)) {
        const auto s = ringwheel::Schedule::Parse("FIX_DELAY", r[1].c_str(), r[2].c_str(), nullptr);
        const auto next = s ? s->NextFireMs(now) : std::nullopt;
        tx.exec_params("UPDATE job SET next_fire_ms = $2 WHERE id = $1 AND next_fire_ms = $3", r[0].as<int>(),
                       next.value_or(now + 1000), kAwaitingCompletion);
      }
    }
    if (!succeeded.empty()) {
      // Child jobs of the succeeded fires, except a child already in the parent's ancestry (a cycle).
      const auto created = tx.exec_params(
          "WITH RECURSIVE ancestry(origin, log_id, job_id, depth) AS ("
          "   SELECT l.id, l.id, l.job_id, 0 FROM job_log l WHERE l.id = ANY($1::bigint[])"
          "   UNION ALL"
          "   SELECT a.origin, p.id, p.job_id, a.depth + 1 FROM ancestry a"
          "   JOIN job_log c ON c.id = a.log_id JOIN job_log p ON p.id = c.parent_log_id"
          "   WHERE c.trigger_type = 'PARENT' AND a.depth < 64),"
          " wanted AS ("
          "   SELECT l.id AS parent_id, child.id AS child_id, child.group_id, child.param, child.retry_count"
          "   FROM job_log l JOIN job pj ON pj.id = l.job_id"
          "   CROSS JOIN LATERAL unnest(pj.child_job_ids) AS c(id)"
          "   JOIN job child ON child.id = c.id"
          "   WHERE l.id = ANY($1::bigint[])"
          "     AND NOT EXISTS (SELECT 1 FROM ancestry a WHERE a.origin = l.id AND a.job_id = child.id))"
          " INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, owner_node, executor_param,"
          "   retry_count, parent_log_id, created_ms, trigger_msg)"
          " SELECT child_id, group_id, 'PARENT', $2, $3, param, retry_count, parent_id, $2,"
          "   'Parent job trigger: fire ' || parent_id || ' succeeded'"
          " FROM wanted RETURNING id, job_id, executor_param, retry_count, parent_log_id",
          PgArray<std::int64_t>(succeeded), now, node_id_);
      // Say on the parent rows which children were triggered, built from what the INSERT returned: only
      // parents that got a child are touched. (Finding them with a subquery on job_log.parent_log_id,
      // which has no index, scanned the whole job_log once per callback batch; docs/performance.md.)
      std::map<std::int64_t, std::vector<std::pair<std::int64_t, int>>> by_parent;  // id order, see above
      for (const auto& r : created) {
        children.push_back({.log_id = r[0].as<std::int64_t>(),
                            .job_id = r[1].as<int>(),
                            .scheduled_ms = now,
                            .type = TriggerType::kParent,
                            .param = r[2].as<std::string>(),
                            .retry_count = r[3].as<int>()});
        by_parent[r[4].as<std::int64_t>()].emplace_back(r[0].as<std::int64_t>(), r[1].as<int>());
      }
      if (!by_parent.empty()) {
        nlohmann::json notes = nlohmann::json::array();
        for (auto& [parent, kids] : by_parent) {
          std::sort(kids.begin(), kids.end());
          std::string m = "\n>>>>>>>>>>> Trigger child job <<<<<<<<<<<\n";
          for (std::size_t i = 0; i < kids.size(); ++i)
            m += fmt::format("{}child job {}: fire {}", i ? "\n" : "", kids[i].second, kids[i].first);
          notes.push_back({{"i", parent}, {"m", std::move(m)}});
        }
        tx.exec_params(
            "UPDATE job_log p SET handle_msg = p.handle_msg || v.m"
            " FROM json_to_recordset($1::json) AS v(i bigint, m text) WHERE p.id = v.i",
            notes.dump());
      }
    }
    tx.commit();
  });
  out.children = static_cast<int>(children.size());
  if (!children.empty()) submit_(std::move(children));
  return out;
}

}  // namespace cronwheel::admin
