// `cronwheel export` and `cronwheel import`: a group's jobs and workflows to a file and back (docs/cli.md;
// the document's rules are transfer.cpp's). The other job commands are commands.cpp's.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "commands_internal.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"
#include "cwcli/table.hpp"
#include "cwcli/text_util.hpp"
#include "cwcli/transfer.hpp"

namespace cronwheel::cli::detail {
namespace {

using nlohmann::json;

// The workflows of `group_id` (GET /api/v1/workflows lists every one the caller may see). An admin without
// workflows has no such route: its 404 is none to export.
std::vector<json> GroupWorkflows(Api& api, int group_id, bool none_if_missing) {
  const std::string target = "/api/v1/workflows";
  json list;
  if (none_if_missing) {
    const auto reply = api.Send("GET", target, std::nullopt);
    if (reply.status == 404) return {};
    auto body = reply.status >= 200 && reply.status < 300 ? reply.Json() : std::nullopt;
    if (!body) {
      throw CommandError(reply.status >= 400 && reply.status < 500 ? kExitRefused : kExitUnavailable,
                         DescribeFailure(api, "GET", target, reply));
    }
    list = *std::move(body);
  } else {
    list = Call(api, "GET", target);
  }
  std::vector<json> out;
  for (const auto& w : list.at("items")) {
    if (w.value("group_id", 0) == group_id) out.push_back(w);
  }
  return out;
}

void Export(const Invocation& inv, Api& api, Console& c) {
  const auto group = Call(api, "GET", fmt::format("/api/v1/groups/{}", *inv.group_id));
  const auto jobs = GroupJobs(api, *inv.group_id);
  const auto workflows = GroupWorkflows(api, *inv.group_id, true);
  std::vector<std::string> warnings;
  Problems problems;
  const auto doc = MakeDocument(group, jobs, workflows, warnings, problems);
  Warn(c, warnings);
  if (!doc) {
    throw CommandError(kExitRefused, fmt::format("group {} cannot be exported:\n{}", *inv.group_id,
                                                 FormatProblems(problems)));
  }
  const auto text = doc->dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  if (inv.output.empty()) {
    c.out << text;
    return;
  }
  if (const absl::Status written = WriteTextFile(inv.output, text); !written.ok()) {
    throw CommandError(kExitUsage, std::string(written.message()));
  }
  const auto exported = doc->contains("workflows") ? doc->at("workflows").size() : 0;
  c.err << fmt::format(
      "exported {} job{}{} of group {} to {}\n", jobs.size(), jobs.size() == 1 ? "" : "s",
      exported == 0 ? "" : fmt::format(" and {} workflow{}", exported, exported == 1 ? "" : "s"),
      *inv.group_id, inv.output);
}

JobDocument ReadImportFile(const Invocation& inv, Console& c) {
  const auto text = ReadTextFile(inv.file);
  if (!text.ok()) throw CommandError(kExitUsage, std::string(text.status().message()));
  const auto parsed = ParseJson(*text);
  if (!parsed.ok()) {
    throw CommandError(kExitRefused,
                       fmt::format("{} is not a job document: {}", inv.file,
                                   WithoutLibraryPrefix(std::string(parsed.status().message()))));
  }
  std::vector<std::string> warnings;
  Problems problems;
  auto doc = ReadDocument(*parsed, ReadOptions{.xxl_time_zone = inv.time_zone}, warnings, problems);
  Warn(c, warnings);
  if (!doc) {
    throw CommandError(kExitRefused, fmt::format("{} cannot be imported (nothing was changed):\n{}", inv.file,
                                                 FormatProblems(problems)));
  }
  return *std::move(doc);
}

struct ImportOutcome {
  const ImportStep* step;
  int id;  // the job in the target group (0 for a planned create in a dry run)
};

std::string_view ActionName(ImportStep::Action a, bool dry_run) {
  switch (a) {
    case ImportStep::Action::kCreate:
      return dry_run ? "create" : "created";
    case ImportStep::Action::kUpdate:
      return dry_run ? "update" : "updated";
    case ImportStep::Action::kSkip:
      return dry_run ? "skip" : "skipped";
  }
  return "";
}

// The ids the target group's jobs have by description once the import created its jobs.
std::map<std::string, std::vector<int>> JobIdsAfter(const JobDocument& doc,
                                                    const std::vector<ImportOutcome>& done,
                                                    const std::vector<json>& target_jobs) {
  std::map<std::string, std::vector<int>> ids;
  for (const auto& j : target_jobs)
    ids[j.at("description").get<std::string>()].push_back(j.at("id").get<int>());
  for (const auto& o : done) {
    if (o.step->action == ImportStep::Action::kCreate) ids[doc.jobs[o.step->job].description()] = {o.id};
  }
  return ids;
}

// Sets the child jobs of the jobs the import created or updated, by the ids their descriptions have now.
void LinkChildren(Api& api, const JobDocument& doc, const std::vector<ImportOutcome>& done,
                  std::map<std::string, std::vector<int>>& ids) {
  for (const auto& o : done) {
    const auto& job = doc.jobs[o.step->job];
    if (o.step->action == ImportStep::Action::kSkip || job.child_jobs.empty()) continue;
    json children = json::array();
    for (const auto& d : job.child_jobs) {
      const auto& found = ids[d];
      if (found.size() != 1) {
        throw CommandError(kExitRefused,
                           fmt::format("job {} '{}': its child '{}' is {} in the target group; the jobs were "
                                       "imported without this link",
                                       o.id, job.description(), d, found.empty() ? "missing" : "ambiguous"));
      }
      children.push_back(found.front());
    }
    Call(api, "PUT", JobPath(o.id), json{{"child_job_ids", children}});
  }
}

// Creates and updates the document's workflows as `steps` plans, their nodes' jobs by `job_ids`.
std::vector<ImportOutcome> ImportWorkflows(const Invocation& inv, Api& api, const JobDocument& doc,
                                           const std::vector<ImportStep>& steps,
                                           const std::map<std::string, std::vector<int>>& job_ids,
                                           int group) {
  std::vector<ImportOutcome> done;
  std::map<ImportStep::Action, int> counts;
  for (const auto& step : steps) {
    const auto& w = doc.workflows[step.job];
    int id = step.existing_ids.empty() ? 0 : step.existing_ids.front();
    if (!inv.dry_run && step.action != ImportStep::Action::kSkip) {
      const bool create = step.action == ImportStep::Action::kCreate;
      try {
        Problems problems;
        const auto body = WorkflowImportBody(w, job_ids, create ? std::optional(group) : std::nullopt,
                                             inv.stopped, problems);
        if (!body) throw CommandError(kExitRefused, FormatProblems(problems));
        if (create) {
          id = Call(api, "POST", "/api/v1/workflows", *body).at("id").get<int>();
        } else {
          Call(api, "PUT", fmt::format("/api/v1/workflows/{}", id), *body);
        }
      } catch (const CommandError& e) {
        throw CommandError(
            e.exit_code(),
            fmt::format(
                "import stopped at workflows[{}] '{}': {}\nthe jobs were imported, and {} workflow(s) "
                "created and {} updated before it; fix the document and run the import again with "
                "--on-conflict skip",
                step.job, w.name(), e.what(), counts[ImportStep::Action::kCreate],
                counts[ImportStep::Action::kUpdate]));
      }
    }
    ++counts[step.action];
    done.push_back({&step, id});
  }
  return done;
}

std::string Counts(const std::vector<ImportOutcome>& done) {
  std::map<ImportStep::Action, int> n;
  for (const auto& o : done)
    ++n[o.step->action];
  return fmt::format("{} created, {} updated, {} skipped", n[ImportStep::Action::kCreate],
                     n[ImportStep::Action::kUpdate], n[ImportStep::Action::kSkip]);
}

void Import(const Invocation& inv, Api& api, Console& c) {
  const auto doc = ReadImportFile(inv, c);
  const int group = *inv.group_id;
  Call(api, "GET", fmt::format("/api/v1/groups/{}", group));  // a missing group: 404 before anything else
  const auto target_jobs = GroupJobs(api, group);
  Problems problems;
  const auto steps = PlanImport(doc, target_jobs, inv.on_conflict, problems);
  std::optional<std::vector<ImportStep>> workflow_steps = std::vector<ImportStep>();
  if (!doc.workflows.empty()) {
    workflow_steps = PlanWorkflowImport(doc, GroupWorkflows(api, group, false), inv.on_conflict, problems);
  }
  if (!steps || !workflow_steps) {
    throw CommandError(kExitRefused,
                       fmt::format("{} cannot be imported into group {} (nothing was changed):\n{}", inv.file,
                                   group, FormatProblems(problems)));
  }
  std::vector<ImportOutcome> done;
  std::map<ImportStep::Action, int> counts;
  for (const auto& step : *steps) {
    const auto& job = doc.jobs[step.job];
    int id = step.existing_ids.empty() ? 0 : step.existing_ids.front();
    if (!inv.dry_run && step.action != ImportStep::Action::kSkip) {
      try {
        if (step.action == ImportStep::Action::kCreate) {
          id = Call(api, "POST", "/api/v1/jobs", ImportBody(job, group, inv.stopped)).at("id").get<int>();
        } else {
          Call(api, "PUT", JobPath(id), ImportBody(job, std::nullopt, inv.stopped));
        }
      } catch (const CommandError& e) {
        throw CommandError(
            e.exit_code(),
            fmt::format("import stopped at jobs[{}] '{}': {}\n{} created and {} updated before it; "
                        "fix the document and run the import again with --on-conflict skip",
                        step.job, job.description(), e.what(), counts[ImportStep::Action::kCreate],
                        counts[ImportStep::Action::kUpdate]));
      }
    }
    ++counts[step.action];
    done.push_back({&step, id});
  }
  auto job_ids = JobIdsAfter(doc, done, target_jobs);
  if (!inv.dry_run) LinkChildren(api, doc, done, job_ids);
  const auto workflows_done = ImportWorkflows(inv, api, doc, *workflow_steps, job_ids, group);

  if (inv.json) {
    const auto by_action = [](const std::vector<ImportOutcome>& outcomes, const char* key,
                              const auto& name_of) {
      json out = json::object();
      for (const auto a :
           {ImportStep::Action::kCreate, ImportStep::Action::kUpdate, ImportStep::Action::kSkip})
        out[std::string(ActionName(a, false))] = json::array();
      for (const auto& o : outcomes) {
        json item{{key, name_of(o.step->job)}};
        if (o.id != 0) item["id"] = o.id;
        out[std::string(ActionName(o.step->action, false))].push_back(item);
      }
      return out;
    };
    json out{{"group_id", group}, {"dry_run", inv.dry_run}, {"source", doc.source}};
    out.update(by_action(done, "description", [&](std::size_t i) { return doc.jobs[i].description(); }));
    out["workflows"] =
        by_action(workflows_done, "name", [&](std::size_t i) { return doc.workflows[i].name(); });
    PrintJson(c, out);
  } else {
    Table t({"ACTION", "JOB", "DESCRIPTION"});
    t.AlignRight(1).LimitWidth(2, 80);
    for (const auto& o : done) {
      t.AddRow({std::string(ActionName(o.step->action, inv.dry_run)), o.id != 0 ? std::to_string(o.id) : "-",
                doc.jobs[o.step->job].description()});
    }
    c.out << t.Render();
    if (!workflows_done.empty()) {
      Table w({"ACTION", "WORKFLOW", "NAME"});
      w.AlignRight(1).LimitWidth(2, 80);
      for (const auto& o : workflows_done) {
        w.AddRow({std::string(ActionName(o.step->action, inv.dry_run)),
                  o.id != 0 ? std::to_string(o.id) : "-", doc.workflows[o.step->job].name()});
      }
      c.out << '\n' << w.Render();
    }
  }
  c.err << fmt::format("{}import into group {} from {}: {}{}\n",
                       inv.dry_run ? "dry run (nothing was changed): " : "", group, doc.source, Counts(done),
                       workflows_done.empty() ? "" : "; workflows: " + Counts(workflows_done));
}

}  // namespace

void RunTransferCommand(const Invocation& inv, Api& api, Console& c) {
  if (inv.command == Command::kExport) return Export(inv, api, c);
  Import(inv, api, c);
}

}  // namespace cronwheel::cli::detail
