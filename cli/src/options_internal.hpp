#pragma once
// What the command line's parser shares between its files (private to cli/src): options.cpp builds the root,
// the job, account and login commands; workflow_options.cpp the workflow commands.
#include <CLI/CLI.hpp>

#include "cwcli/options.hpp"

namespace cronwheel::cli::options_detail {

// `sub` runs `command` when it is the subcommand chosen.
void Selects(CLI::App* sub, Invocation& inv, Command command);
// The --format option of a command that reads a job or workflow file.
void AddFormat(CLI::App* sub, Invocation& inv);
// `cronwheel workflows ...` (workflow_options.cpp).
void AddWorkflowCommands(CLI::App& app, Invocation& inv);

}  // namespace cronwheel::cli::options_detail
