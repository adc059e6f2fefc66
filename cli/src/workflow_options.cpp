// `cronwheel workflows ...`: the workflow commands' options (cwcli/options.hpp; the commands themselves are
// workflow_commands.cpp).
#include <CLI/CLI.hpp>

#include "options_internal.hpp"

namespace cronwheel::cli::options_detail {
namespace {

CLI::App* AddWorkflowId(CLI::App* sub, Invocation& inv) {
  sub->add_option("ID", inv.workflow_id, "the workflow's id")
      ->type_name("ID")
      ->required()
      ->check(CLI::PositiveNumber);
  return sub;
}

CLI::App* AddRunId(CLI::App* sub, Invocation& inv) {
  sub->add_option("RUN_ID", inv.run_id, "the workflow run's id (`workflows trigger` prints it)")
      ->type_name("RUN_ID")
      ->required()
      ->check(CLI::PositiveNumber);
  return sub;
}

}  // namespace

void AddWorkflowCommands(CLI::App& app, Invocation& inv) {
  auto* wf = app.add_subcommand(
      "workflows",
      "Workflows (DAGs of jobs): list, show, create, change, delete, trigger and follow their runs");
  wf->require_subcommand(1);

  auto* list = wf->add_subcommand("list", "List the workflows of the groups you may see");
  list->add_option("--group", inv.group_id, "only the workflows of this executor group (id)")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  Selects(list, inv, Command::kWorkflowsList);

  Selects(AddWorkflowId(
              wf->add_subcommand("show", "Show one workflow, field by field, with its nodes and edges"), inv),
          inv, Command::kWorkflowsShow);

  const auto add_file = [&inv](CLI::App* sub) {
    sub->add_option("FILE,--file", inv.file, "the workflow as JSON or TOML (docs/cli.md shows the fields)")
        ->type_name("FILE")
        ->required();
    AddFormat(sub, inv);
  };
  auto* create = wf->add_subcommand("create", "Create a workflow from a JSON or TOML file");
  add_file(create);
  create->add_option("--group", inv.group_id, "the executor group (id); overrides the file's group_id")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  Selects(create, inv, Command::kWorkflowsCreate);

  auto* update = AddWorkflowId(
      wf->add_subcommand("update", "Change a workflow: the fields of the file are set, the others kept"),
      inv);
  add_file(update);
  Selects(update, inv, Command::kWorkflowsUpdate);

  auto* del = AddWorkflowId(wf->add_subcommand("delete", "Delete a workflow with its runs"), inv);
  del->add_flag("-y,--yes", inv.yes, "do not ask; required when stdin is not a terminal");
  Selects(del, inv, Command::kWorkflowsDelete);

  auto* trigger = AddWorkflowId(
      wf->add_subcommand("trigger", "Run a workflow once now (MANUAL); prints the run's id"), inv);
  trigger
      ->add_option("--param", inv.param, "the workflow parameter for this run (default: the workflow's own)")
      ->type_name("TEXT");
  auto* wait = trigger->add_flag("--wait", inv.wait,
                                 "follow the run until it ends, printing each node's state as it changes; "
                                 "exit 0 if it succeeded, else 1");
  trigger
      ->add_option_function<int>(
          "--wait-timeout", [&inv](int s) { inv.wait_timeout = std::chrono::seconds(s); },
          "with --wait: give up after this many seconds (default 600; exit 1, the run goes on)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 7 * 24 * 3600))
      ->needs(wait);
  Selects(trigger, inv, Command::kWorkflowsTrigger);

  auto* runs = AddWorkflowId(wf->add_subcommand("runs", "List a workflow's runs, newest first"), inv);
  runs->add_option("--limit", inv.limit, "at most this many runs (default 20)")
      ->type_name("N")
      ->check(CLI::Range(1, 200));
  Selects(runs, inv, Command::kWorkflowsRuns);

  Selects(AddRunId(wf->add_subcommand("run", "Show a workflow run with its nodes' states and fires"), inv),
          inv, Command::kWorkflowsRun);
  Selects(AddRunId(wf->add_subcommand(
                       "kill",
                       "Kill a running workflow run: nodes not ended are KILLED, their fires asked to stop"),
                   inv),
          inv, Command::kWorkflowsKill);

  auto* rerun = AddRunId(
      wf->add_subcommand(
          "rerun", "Run a FAILED or KILLED node of an ended workflow run again, with the nodes after it"),
      inv);
  rerun->add_option("NODE_KEY", inv.node_key, "the node's key (`workflows run` lists them)")
      ->type_name("NODE_KEY")
      ->required();
  Selects(rerun, inv, Command::kWorkflowsRerun);
}

}  // namespace cronwheel::cli::options_detail
