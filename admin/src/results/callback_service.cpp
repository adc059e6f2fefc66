#include "admin/results/callback_service.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "admin/results/output_puller.hpp"
#include "cronwheel/text.hpp"
#include "xxljob/token.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::size_t kMaxHandleMsg = 15'000;  // XXL-JOB truncates handle_msg to this

}  // namespace

CallbackService::CallbackService(ringwheel::Clock& clock, ResultStore& store, std::string node_id,
                                 Submit submit, OutputSettings output)
    : clock_(clock),
      store_(store),
      node_id_(std::move(node_id)),
      submit_(std::move(submit)),
      output_(output) {}

bool CallbackService::Authorized(std::span<const xxljob::HandleCallbackParam> callbacks,
                                 const std::string& token, const std::string& global_token) {
  // Each fire's group decides, as for registration (results/registry_service.hpp): the group's own token,
  // else the global one. The global token is no master key for a group that has its own.
  std::vector<std::int64_t> ids;
  for (const auto& c : callbacks)
    ids.push_back(c.log_id);
  if (ids.empty()) return global_token.empty() || xxljob::TokenMatches(token, global_token);
  // A log id no fire has needs the global token like any other: otherwise a wrong token would be refused
  // only for ids that exist, telling a caller without the token which ones do.
  const auto known = store_.GroupTokensOf(ids);
  for (const auto& [id, group_token] : known) {
    if (!xxljob::TokenMatches(token, group_token.value_or(global_token))) return false;
  }
  return known.size() == std::set<std::int64_t>(ids.begin(), ids.end()).size() ||
         xxljob::TokenMatches(token, global_token);
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
  std::vector<HandleResult> results;
  results.reserve(latest.size());
  const auto now = clock_.NowMs();
  for (const auto& [id, c] : latest) {
    // handle_code 0 would read as "no result yet": a callback must carry a final code.
    HandleResult r{.log_id = id,
                   .handle_code = c->handle_code == 0 ? xxljob::kCodeFail : c->handle_code,
                   .handle_msg = Utf8Truncate(WithoutNulBytes(c->handle_msg), kMaxHandleMsg),
                   .start_ms = c->handle_start_ms};
    if (c->output && !c->output->is_null()) {
      auto output = c->output->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (output.size() <= xxljob::kMaxFireOutputBytes) {
        r.output = std::move(output);
      } else {  // the result is kept; the output is not, and the fire says why
        r.handle_msg = Utf8Truncate(fmt::format("{}\noutput of {} bytes dropped: at most {} bytes are kept",
                                                r.handle_msg, output.size(), xxljob::kMaxFireOutputBytes),
                                    kMaxHandleMsg);
      }
    }
    if (output_.max_bytes > 0) {
      if (c->job_log) {
        r.log = KeepLog(c->job_log->content, c->job_log->bytes, c->job_log->left_out, output_.max_bytes);
        ++(r.log->left_out > 0 ? out.logs_truncated : out.logs_archived);
      } else if (output_.pull == OutputSettings::Pull::kAll ||
                 (output_.pull == OutputSettings::Pull::kFailed && r.handle_code != xxljob::kCodeSuccess)) {
        r.pull_log_at_ms = now + output_.pull_delay.count();
      }
    }
    results.push_back(std::move(r));
  }
  auto recorded = store_.RecordCallbacks(results, node_id_, now);
  out.recorded = static_cast<int>(recorded.recorded.size());
  for (const auto& r : recorded.recorded) {
    // A CRON fire's instant is its schedule's; other types carry another instant (a manual fire's creation,
    // a retry's original instant), as for the fire lag (app/metered.cpp).
    if (r.type == TriggerType::kCron && r.start_ms > 0)
      out.start_lags_ms.push_back(r.start_ms - r.scheduled_ms);
  }
  out.ignored += static_cast<int>(latest.size() - recorded.recorded.size());
  auto& children = recorded.children;
  out.children = static_cast<int>(children.size());
  if (!children.empty()) submit_(std::move(children));
  return out;
}

}  // namespace cronwheel::admin
