#include "admin/results/callback_service.hpp"

#include <map>
#include <set>

#include "admin/schedule/next_fire.hpp"
#include "admin/store/fire_log.hpp"
#include "cronwheel/text.hpp"
#include "store/pg_util.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::size_t kMaxHandleMsg = 15'000;  // XXL-JOB truncates handle_msg to this

// FIX_DELAY jobs waiting for one of `finished_jobs` get their next fire: finish + delay.
void ResumeFixDelayJobs(pqxx::transaction_base& tx, const std::vector<int>& finished_jobs,
                        std::int64_t now_ms) {
  if (finished_jobs.empty()) return;
  for (const auto& r : tx.exec_params(R"sql(
         SELECT id, schedule_conf, time_zone FROM job
          WHERE id = ANY($1::int[]) AND enabled AND schedule_type = 'FIX_DELAY' AND next_fire_ms = $2
       )sql",
                                      PgArray<int>(finished_jobs), kAwaitingCompletion)) {
    tx.exec_params(
        R"sql(UPDATE job SET next_fire_ms = $2 WHERE id = $1 AND next_fire_ms = $3)sql", r["id"].as<int>(),
        NextAfterCompletion(r["schedule_conf"].c_str(), r["time_zone"].c_str(), now_ms), kAwaitingCompletion);
  }
}

}  // namespace

CallbackService::CallbackService(ringwheel::Clock& clock, PgPool& pool, std::string node_id, Submit submit)
    : clock_(clock), pool_(pool), node_id_(std::move(node_id)), submit_(std::move(submit)) {}

bool CallbackService::Authorized(std::span<const xxljob::HandleCallbackParam> callbacks,
                                 const std::string& token, const std::string& global_token) {
  // Each fire's group decides, as for registration (results/registry_service.hpp): the group's own token,
  // else the global one. The global token is no master key for a group that has its own.
  std::vector<std::int64_t> ids;
  for (const auto& c : callbacks)
    ids.push_back(c.log_id);
  if (ids.empty()) return global_token.empty() || xxljob::TokenMatches(token, global_token);
  return WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::read_transaction tx(conn);
    // A log id no fire has needs the global token like any other: otherwise a wrong token would be
    // refused only for ids that exist, telling a caller without the token which ones do. Open fires are
    // found in fire_open; the others (a repeated callback, say) by id in every partition of job_log.
    std::set<std::int64_t> unknown(ids.begin(), ids.end());
    const auto check = [&](const pqxx::result& rows) {
      for (const auto& r : rows) {
        unknown.erase(r["id"].as<std::int64_t>());
        const std::string expected =
            r["access_token"].is_null() ? global_token : r["access_token"].as<std::string>();
        if (!xxljob::TokenMatches(token, expected)) return false;
      }
      return true;
    };
    if (!check(tx.exec_params(R"sql(
          SELECT o.log_id AS id, g.access_token FROM fire_open o JOIN job_group g ON g.id = o.group_id
           WHERE o.log_id = ANY($1::bigint[])
        )sql",
                              PgArray<std::int64_t>(ids)))) {
      return false;
    }
    if (!unknown.empty()) {
      const std::vector<std::int64_t> rest(unknown.begin(), unknown.end());
      if (!check(tx.exec_params(R"sql(
            SELECT l.id, g.access_token FROM job_log l JOIN job_group g ON g.id = l.group_id
             WHERE l.id = ANY($1::bigint[])
          )sql",
                                PgArray<std::int64_t>(rest)))) {
        return false;
      }
    }
    return unknown.empty() || xxljob::TokenMatches(token, global_token);
  });
}

CallbackService::Outcome CallbackService::Handle(std::span<const xxljob::HandleCallbackParam> callbacks) {
  Outcome out;
  if (callbacks.empty()) return out;
  // The last result per log id wins within one batch; duplicates count as ignored. Ordered by id: batched
  // writers of job_log lock rows in one order (store/fire_log.hpp).
  std::map<std::int64_t, const xxljob::HandleCallbackParam*> latest;
  for (const auto& c : callbacks)
    latest[c.log_id] = &c;
  out.ignored = static_cast<int>(callbacks.size() - latest.size());
  std::vector<fire_log::HandleResult> results;
  results.reserve(latest.size());
  for (const auto& [id, c] : latest) {
    // handle_code 0 would read as "no result yet": a callback must carry a final code.
    results.push_back({.log_id = id,
                       .handle_code = c->handle_code == 0 ? xxljob::kCodeFail : c->handle_code,
                       .handle_msg = Utf8Truncate(c->handle_msg, kMaxHandleMsg)});
  }
  const auto now = clock_.NowMs();
  std::vector<Fire> children;
  WithConnection(pool_, [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    const auto done = fire_log::RecordHandleResults(tx, results, now);
    out.recorded = static_cast<int>(done.size());
    out.ignored += static_cast<int>(latest.size() - done.size());
    std::vector<fire_log::HandledFire> succeeded;
    std::vector<int> finished_jobs;
    for (const auto& d : done) {
      finished_jobs.push_back(d.job_id);
      if (d.handle_code == xxljob::kCodeSuccess) succeeded.push_back(d);
    }
    ResumeFixDelayJobs(tx, finished_jobs, now);
    children = fire_log::InsertChildren(tx, succeeded, node_id_, now);
    tx.commit();
  });
  out.children = static_cast<int>(children.size());
  if (!children.empty()) submit_(std::move(children));
  return out;
}

}  // namespace cronwheel::admin
