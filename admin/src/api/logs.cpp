// /api/v1/logs: fires (admins, or users permitted on the fire's group): list, read, the output (live from the
// executor while the fire runs, from the admin's archive once it ended), kill, and clearing old fires.
#include "admin/api/json_views.hpp"
#include "admin/api/request_bodies.hpp"
#include "api/routes.hpp"

namespace cronwheel::admin::api {
namespace {

constexpr std::array<std::string_view, 5> kStatuses = {"PENDING", "RUNNING", "SUCCESS", "FAILED", "SKIPPED"};

Result<LogQuery> ReadLogQuery(const net::Request& req) {
  FieldErrors errors;
  LogQuery q;
  if (const auto v = QueryInt(req, "job_id", 1, INT32_MAX, errors)) q.job_id = static_cast<int>(*v);
  if (const auto v = QueryInt(req, "group_id", 1, INT32_MAX, errors)) q.group_id = static_cast<int>(*v);
  q.from_ms = QueryInt(req, "from_ms", 0, INT64_MAX, errors);
  q.to_ms = QueryInt(req, "to_ms", 0, INT64_MAX, errors);
  q.offset = static_cast<int>(QueryInt(req, "offset", 0, INT32_MAX, errors).value_or(0));
  q.limit = static_cast<int>(QueryInt(req, "limit", 1, 1000, errors).value_or(50));
  if (req.has_param("status")) {
    const auto st = req.get_param_value("status");
    if (std::find(kStatuses.begin(), kStatuses.end(), st) != kStatuses.end()) {
      q.status = st;
    } else {
      errors.push_back(
          {"status",
           fmt::format("'{}' is not valid; use PENDING, RUNNING, SUCCESS, FAILED or SKIPPED", Shorten(st)),
           "enum",
           {{"allowed", "PENDING, RUNNING, SUCCESS, FAILED, SKIPPED"}}});
    }
  }
  if (!errors.empty()) return Error::Invalid("invalid query", std::move(errors));
  return q;
}

// At most this much output per answer, as cronwheel-executor's /log (log_read_max_bytes).
constexpr std::size_t kPageBytes = std::size_t{1024} * 1024;

// What the archive holds of an ended fire, for the answer ("archive": state, via, sizes, error).
json ArchiveJson(const FireOutputArchive& a) {
  json j{{"state", StateName(a.state)}};
  if (a.state == FireOutputArchive::State::kNone) return j;
  j["via"] = a.via;
  if (a.state == FireOutputArchive::State::kPending) {
    j["attempts"] = a.attempts;
  } else {
    j["archived_ms"] = a.archived_ms;
    j["log_bytes"] = a.log_bytes;
    j["left_out_bytes"] = a.left_out;
  }
  if (!a.error.empty()) j["error"] = a.error;
  return j;
}

// Lines `from_line`... of an archived log, whole lines up to kPageBytes (a single longer line alone); `end`
// once the last line is in it. A last line without '\n' counts as a line.
void SendArchivePage(const std::string& text, int from_line, json& out) {
  std::size_t at = 0;
  for (int skip = from_line - 1; skip > 0 && at < text.size(); --skip) {
    const auto nl = text.find('\n', at);
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  std::size_t stop = at;
  int lines = 0;
  while (stop < text.size()) {
    const auto nl = text.find('\n', stop);
    const auto next = nl == std::string::npos ? text.size() : nl + 1;
    if (lines > 0 && next - at > kPageBytes) break;
    stop = next;
    ++lines;
  }
  out["content"] = text.substr(at, stop - at);
  out["to_line"] = lines > 0 ? from_line + lines - 1 : 0;
  out["end"] = stop >= text.size();
}

// XXL-JOB logDetailCat (docs/xxl-job-protocol.md §2 /log), and the fire output archive (docs/operations.md,
// "The fire output archive"): a fire that has ended is read from the archive when it holds the fire's log
// (source "archive"), else, as a running fire, from the executor recorded on the fire, which the admin chose
// itself (source "executor"); an ended fire's answer says where its archiving stands ("archive"). The
// content is plain text (the console shows it as text; nothing is escaped here).
void SendOutput(const RouteContext& ctx, const JobLog& log, int from_line, net::Response& res) {
  json out{{"from_line", from_line}, {"to_line", 0}, {"content", ""}, {"end", false}, {"source", "none"}};
  std::optional<FireOutputArchive> archive;
  if (log.handle_code != 0) {
    archive = ctx.services.logs.GetOutput(log);
    out["archive"] = ArchiveJson(*archive);
    if (archive->state == FireOutputArchive::State::kArchived) {
      out["source"] = "archive";
      SendArchivePage(archive->content, from_line, out);
      return SendJson(res, 200, out);
    }
  }
  if (log.trigger_code != xxljob::kCodeSuccess || log.executor_address.empty()) {
    // Never sent, or refused: no executor has output. Pending fires may still be sent. A fire whose callback
    // came before its trigger result (the trigger results are written in batches) ran: the trigger result
    // naming its executor follows within a flush, so its output is not at its end yet; after
    // kTriggerResultWait without one, the result is taken as lost with its admin.
    constexpr std::int64_t kTriggerResultWaitMs = 30'000;
    const bool trigger_result_due = log.trigger_code == 0 && log.handle_code != 0 &&
                                    ctx.clock.NowMs() - log.handle_ms < kTriggerResultWaitMs;
    out["end"] = log.status != "PENDING" && !trigger_result_due;
    return SendJson(res, 200, out);
  }
  const auto env = ctx.services.console->executors.Log(
      log.executor_address, ctx.ExecutorToken(log.group_id),
      xxljob::LogParam{.log_date_tim = log.trigger_ms, .log_id = log.id, .from_line_num = from_line});
  const absl::StatusOr<xxljob::LogResult> result =
      env.ok() ? xxljob::ParseLogResult(env.content) : absl::UnavailableError(env.msg.value_or("no message"));
  if (!result.ok()) {
    std::string archived;
    if (archive && archive->state == FireOutputArchive::State::kFailed) {
      archived = fmt::format("; the archive has no copy: {}", archive->error);
    } else if (archive && archive->state == FireOutputArchive::State::kPending) {
      archived = "; the archive has no copy yet (the admin is reading it from the executor)";
    } else if (archive) {
      archived = "; the archive has no copy";
    }
    return SendError(res, 502,
                     fmt::format("the executor {} did not return the output: {}{}", log.executor_address,
                                 std::string(result.status().message()), archived));
  }
  out["source"] = "executor";
  out["to_line"] = result->to_line_num;
  out["content"] = result->log_content;
  out["end"] = result->is_end || (from_line > result->to_line_num && log.handle_code > 0);
  SendJson(res, 200, out);
}

void RegisterConsoleLogRoutes(Routes& s, const RouteContext& ctx) {
  auto& logs = ctx.services.logs;
  s.Get("/api/v1/logs/{id}/output", [&](const Principal& who, const net::Request& req, net::Response& res) {
    FieldErrors errors;
    const auto from_line = static_cast<int>(QueryInt(req, "from_line", 1, INT32_MAX, errors).value_or(1));
    if (!errors.empty()) return SendError(res, Error::Invalid("invalid query", std::move(errors)));
    if (const auto log = ctx.VisibleLog(who, req.matches[1], res)) SendOutput(ctx, *log, from_line, res);
  });
  s.Action("/api/v1/logs/{id}/kill", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto log = ctx.VisibleLog(who, req.matches[1], res);
    if (!log) return;
    if (log->trigger_code != xxljob::kCodeSuccess) {
      return SendError(res, Error::Conflict(fmt::format(
                                "fire {} was not accepted by an executor (trigger_code {}): nothing runs",
                                log->id, log->trigger_code)));
    }
    if (log->handle_code != 0) {
      return SendError(res, Error::Conflict(fmt::format("fire {} has finished already (handle_code {})",
                                                        log->id, log->handle_code)));
    }
    const auto env = ctx.services.console->executors.Kill(log->executor_address,
                                                          ctx.ExecutorToken(log->group_id), log->job_id);
    if (!env.ok()) {
      return SendError(res, 502,
                       fmt::format("the executor {} did not kill job {}: {}", log->executor_address,
                                   log->job_id, env.msg.value_or("no message")));
    }
    const std::string msg = env.msg && !env.msg->empty() ? *env.msg : fmt::format("by {}", who.username);
    if (!logs.MarkKilled(log->id, msg)) {
      return SendError(res,
                       Error::Conflict(fmt::format("fire {} succeeded while it was being killed", log->id)));
    }
    // A workflow node's fire: its node is KILLED and what follows it on a FAILURE or ALWAYS edge starts.
    if (ctx.services.workflows != nullptr) {
      auto started = ctx.services.workflows->FireKilled(log->id, ctx.settings.node_id);
      if (!started.empty()) ctx.services.scheduler.Submit(std::move(started));
    }
    const auto after = logs.GetLog(log->id);
    ctx.Audit(who, "log.kill", "log", std::to_string(log->id), ToJson(*log),
              after ? ToJson(*after) : json(nullptr));
    SendJson(res, 200, after ? ToJson(*after) : json::object());
  });
  s.Post("/api/v1/logs/clear", [&](const Principal& who, const net::Request& req, net::Response& res) {
    const auto body = ParseBody(req, false);
    if (Failed(res, body)) return;
    auto c = ReadLogClearBody(*body);
    if (Failed(res, c)) return;
    if (c->job_id && !ctx.VisibleJob(who, std::to_string(*c->job_id), res)) return;
    if (c->group_id && !ctx.VisibleGroup(who, std::to_string(*c->group_id), res)) return;
    if (!who.admin) c->group_ids = who.GroupIds();
    const auto deleted = logs.ClearLogs(*c);
    auto after = *body;
    after["deleted"] = deleted;
    ctx.Audit(who, "log.clear", "log",
              c->job_id     ? fmt::format("job:{}", *c->job_id)
              : c->group_id ? fmt::format("group:{}", *c->group_id)
                            : std::string("all"),
              nullptr, after);
    SendJson(res, 200, {{"deleted", deleted}});
  });
}

}  // namespace

void RegisterLogRoutes(Routes& s, const RouteContext& ctx) {
  auto& logs = ctx.services.logs;
  s.Get("/api/v1/logs", [&](const Principal& who, const net::Request& req, net::Response& res) {
    auto q = ReadLogQuery(req);
    if (Failed(res, q)) return;
    if (!who.admin) q->group_ids = who.GroupIds();
    SendPage(res, logs.ListLogs(*q));
  });
  s.Get("/api/v1/logs/{id}", [&](const Principal& who, const net::Request& req, net::Response& res) {
    if (const auto log = ctx.VisibleLog(who, req.matches[1], res)) SendJson(res, 200, ToJson(*log));
  });
  if (ctx.services.console != nullptr) RegisterConsoleLogRoutes(s, ctx);
}

}  // namespace cronwheel::admin::api
