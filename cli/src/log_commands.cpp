// The logs commands of `cronwheel` (docs/cli.md): `logs tail` (a fire's output, from its executor while it
// runs and from the admin's archive once it ended, saying which on stderr) and `logs list`.
#include <fmt/format.h>

#include <ostream>

#include "commands_internal.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"
#include "cwcli/table.hpp"
#include "cwcli/text_util.hpp"

namespace cronwheel::cli::detail {
namespace {

using nlohmann::json;

// What a fire's result says, on one line: the handle message, else for a fire that could not be sent the
// last line of the trigger message (XXL-JOB's trigger message is a multi-line report that ends with what
// went wrong).
std::string FireMessage(const json& log) {
  auto msg = std::string(Trim(Text(log, "handle_msg")));
  const auto trigger_code = log.value("trigger_code", 0);
  if (msg.empty() && trigger_code != 0 && trigger_code != 200) {
    msg = std::string(Trim(Text(log, "trigger_msg")));
    if (const auto nl = msg.rfind('\n'); nl != std::string::npos) msg = std::string(Trim(msg.substr(nl + 1)));
  }
  return msg;
}

// Where a page of output came from, for stderr: the executor (live) or the admin's archive (the fire output
// archive, docs/operations.md), with what the archive says; "" for none (a fire never sent).
std::string OutputSource(std::int64_t log_id, const json& page) {
  const auto source = page.value("source", std::string());
  const auto archive = page.contains("archive") ? page.at("archive") : json::object();
  const auto state = archive.value("state", std::string());
  if (source == "archive") {
    const auto via = archive.value("via", std::string()) == "pull" ? "read from the executor after its result"
                                                                   : "sent by the executor with its result";
    const auto left_out = archive.value("left_out_bytes", std::int64_t{0});
    return fmt::format("fire {}: output from the admin's archive ({}{})", log_id, via,
                       left_out > 0 ? fmt::format("; {} of its {} bytes left out in the middle", left_out,
                                                  archive.value("log_bytes", std::int64_t{0}))
                                    : "");
  }
  if (source != "executor") return "";
  if (state == "failed") {
    return fmt::format("fire {}: output from its executor (the archive has no copy: {})", log_id,
                       archive.value("error", std::string()));
  }
  if (state == "pending") return fmt::format("fire {}: output from its executor (not archived yet)", log_id);
  if (state == "none")
    return fmt::format("fire {}: output from its executor (the archive has no copy)", log_id);
  return fmt::format("fire {}: output from its executor (the fire is running)", log_id);
}

void LogsTail(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c) {
  int from = inv.from_line;
  std::string said;  // the last source line written to stderr
  for (;;) {
    const auto page = Call(api, "GET", fmt::format("/api/v1/logs/{}/output?from_line={}", inv.log_id, from));
    if (inv.json) {
      PrintJson(c, page);
    } else {
      // Which copy is printed goes to stderr (stdout stays the output alone), once and when it changes.
      if (auto source = OutputSource(inv.log_id, page); !source.empty() && source != said) {
        c.err << source << '\n';
        said = std::move(source);
      }
      c.out << page.value("content", std::string());
    }
    c.out.flush();
    const auto to = page.value("to_line", 0);
    if (to >= from) from = to + 1;
    if (!inv.follow || page.value("end", false)) break;
    clock.WaitFor(inv.poll_interval, {});
  }
  if (inv.follow && !inv.json) {
    const auto log = Call(api, "GET", fmt::format("/api/v1/logs/{}", inv.log_id));
    const auto msg = FireMessage(log);
    c.err << fmt::format("fire {}: {} (handle_code {}){}{}\n", inv.log_id, Text(log, "status"),
                         Text(log, "handle_code"), msg.empty() ? "" : ": ", Utf8Truncate(OneLine(msg), 300));
  }
}

void LogsList(const Invocation& inv, Api& api, Console& c) {
  auto target = fmt::format("/api/v1/logs?job_id={}&limit={}", inv.job_id, inv.limit);
  if (inv.status) target += "&status=" + net::PercentEncode(*inv.status);
  const auto r = Call(api, "GET", target);
  if (inv.json) return PrintJson(c, r);
  Table t({"ID", "TYPE", "SCHEDULED (UTC)", "STATUS", "EXECUTOR", "TRIGGER", "HANDLE", "MESSAGE"});
  t.AlignRight(0).AlignRight(5).AlignRight(6).LimitWidth(4, 32).LimitWidth(7, 60);
  for (const auto& l : r.at("items")) {
    t.AddRow({Text(l, "id"), Text(l, "trigger_type"), FormatUtcMs(l.value("scheduled_ms", std::int64_t{0})),
              Text(l, "status"), Text(l, "executor_address"), Text(l, "trigger_code"), Text(l, "handle_code"),
              FireMessage(l)});
  }
  c.out << t.Render();
}

}  // namespace

void RunLogsCommand(const Invocation& inv, Api& api, ringwheel::Clock& clock, Console& c) {
  if (inv.command == Command::kLogsTail) return LogsTail(inv, api, clock, c);
  LogsList(inv, api, c);
}

}  // namespace cronwheel::cli::detail
