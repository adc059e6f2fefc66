#pragma once
// Who a workflow run fires its nodes' jobs for, and the rule that each must be one they may fire (security
// review 2, N4; docs/operations.md, "Workflows"; docs/security.md, "Child jobs and workflows"). A node fires
// a job, so it is held to the rule for firing a job (POST /api/v1/jobs/{id}/trigger): the OPERATOR role, or
// more, in the job's group. The rule is applied whenever a run fires or kills for someone, against that
// person's roles as they are then, not only when the workflow was saved:
//  * a trigger (by hand or API): the caller, for every node of the graph the run starts with;
//  * a re-run of a node: the caller, for the node and every node that follows it;
//  * a kill of a run: the caller, for each node whose fire is to be killed;
//  * a scheduled run: the workflow's last editor (run_as: whoever saved it last, who passed the same rule
//    for every node then), for every node, when the scan writes the run.
// Once a run has started, the nodes that start after its first ones are not checked again: the run was
// authorised as a whole.
//
// Plain values and functions; no thread-safety concerns. Complexity: O(nodes x the firer's groups).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/accounts.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

// Whom a run's nodes are fired or killed for.
struct NodeFirer {
  std::string username;            // named in the errors
  bool admin = false;              // a global ADMIN: any job of any group
  std::vector<GroupGrant> groups;  // a USER's role in each group it may see
};

// A node and the job it fires: `group_id` nullopt when the job does not exist (deleted).
struct NodeJob {
  std::string key;
  int job_id = 0;
  std::optional<int> group_id;
};

// Whether `who` may fire (or, `doing` = "killing", kill the fires of) each of `nodes`: kOperator or more in
// each job's group. The first node refused: kNotFound ("node 'b': job 12 not found") when the job does not
// exist or is in a group `who` has no role in, the two told apart nowhere in the API (what a caller may not
// see does not exist for it); kForbidden with the field error of code "role" (params node, job_id, group_id,
// role "OPERATOR") when its role there is less. The message names the node, the job and `who`.
Result<void> MayFireNodes(const NodeFirer& who, std::span<const NodeJob> nodes,
                          std::string_view doing = "firing");

}  // namespace cronwheel::admin
