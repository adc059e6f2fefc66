#pragma once
// A child job's parameter naming its parent fire's result (issue 23, data passing; docs/operations.md,
// "Passing a result to child jobs"). When a parent's success fires its child jobs, each child's parameter
// is resolved against the parent fire before the child's fire is written, so the executor receives the
// value in executorParams and an XXL-JOB executor needs nothing new:
//
//   {{parent.output}}          the parent's output: a JSON string as its text, any other value as compact
//                              JSON
//   {{parent.output.a.b.0}}    a member of it: object keys and array indexes separated by '.'
//   {{parent.handle_msg}}      the parent's handle message (its callback's handleMsg)
//   {{parent.log_id}}          the parent fire's id
//
// For a broadcast parent, the output is the array of its shards' outputs by shard index (null for a shard
// that returned none) and the handle message is shard 0's. A reference that cannot be resolved (no output,
// no such member, an unknown name) becomes the empty text, and a note saying which and why is returned for
// the child's trigger message. Text outside {{...}} is kept as it is. Plain functions; no state.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::admin {

struct ParentResult {
  std::int64_t log_id = 0;
  std::string handle_msg;
  std::optional<nlohmann::json> output;  // nullopt = the parent returned none
};

struct ResolvedParam {
  std::string param;               // the parameter with every reference replaced
  std::vector<std::string> notes;  // one per reference that could not be resolved
};

// True when `param` holds a reference ("{{parent."): only such parameters are resolved.
bool HasParentRefs(std::string_view param);

// `param` with its references to `parent` replaced. Complexity: O(size of param + size of the values).
ResolvedParam ResolveParentRefs(std::string_view param, const ParentResult& parent);

// A workflow node's parameter (admin/model/workflow.hpp; docs/operations.md, "Workflows") may name, besides
// text:
//   {{workflow.param}}                   the run's parameter (given when it was triggered; else the
//                                        workflow's)
//   {{workflow.run_id}}                  the run's id
//   {{parents.<key>.output[.<path>]}},   the result of the parent node <key>, as {{parent.…}} above
//   {{parents.<key>.handle_msg}}, {{parents.<key>.log_id}}
//   {{parent.…}}                         the same, when the node has exactly one parent
// A parent that did not succeed (an ALWAYS or FAILURE edge) is not in `parents`: its references resolve to
// '' with a note. Other {{...}} text is kept as it is.
struct WorkflowRefs {
  std::int64_t run_id = 0;
  std::string workflow_param;
  std::map<std::string, ParentResult> parents;  // by node key: the parents that succeeded
};
// True when `param` may hold a reference ("{{").
bool HasWorkflowRefs(std::string_view param);
ResolvedParam ResolveWorkflowRefs(std::string_view param, const WorkflowRefs& refs);

}  // namespace cronwheel::admin
