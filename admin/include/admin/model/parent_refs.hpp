#pragma once
// A child job's parameter naming its parent fire's result (issue 23, data passing; docs/operations.md,
// "Passing a result to child jobs"), and a workflow node's naming its run's and its parents' (docs/
// operations.md, "Workflows"). When a parent's success fires its child jobs, or a workflow node starts,
// its parameter is resolved against the parent fire(s) before the fire is written, so the executor receives
// the value in executorParams and an XXL-JOB executor needs nothing new:
//
//   {{parent.output}}          the parent's output (any JSON value)
//   {{parent.output.a.b.0}}    a member of it: object keys and array indexes separated by '.'
//   {{parent.handle_msg}}      the parent's handle message (its callback's handleMsg), a string
//   {{parent.log_id}}          the parent fire's id, a number
//
// For a broadcast parent, the output is the array of its shards' outputs by shard index (null for a shard
// that returned none) and the handle message is shard 0's. A reference that cannot be resolved (no output,
// no such member, an unknown name) has no value: it becomes '' (null where it stands alone as a JSON value),
// and a note saying which and why is returned for the fire's trigger message.
//
// How a value goes in (security review 2, N3: values are data, never text spliced into the parameter's
// syntax; the rules and examples are docs/operations.md, "Passing a result to child jobs"). A value's text
// is a JSON string's own text, and compact JSON for anything else. By the parameter's form (leading and
// trailing blanks aside):
//  * the parameter is one reference and nothing else: it becomes the value's text;
//  * JSON (it starts with '[', or with '{' not followed by '{': as httpJobHandler reads it): it must be JSON,
//    without duplicate keys, once each reference outside a string is taken as one value. A reference that
//    stands alone as a value becomes the value itself ({"rows": {{parent.output.rows}}} -> {"rows": 42}); one
//    inside a string puts its text in that string, JSON-escaped; a string that is exactly one reference
//    becomes the value's text. Inside a string that starts with http:// or https:// (a URL: httpJobHandler's
//    "url"), the text is percent-encoded (RFC 3986: all but A-Z a-z 0-9 - . _ ~), and a reference may stand
//    only after the host (in the path, query or fragment). A reference in an object key is refused. The
//    result is written back as compact JSON, keys in their order;
//  * a URL (it starts with http:// or https://): as a URL string in JSON above;
//  * other text: a value's text goes in only when it is made of A-Z a-z 0-9 and . _ - : / @ + (a number, a
//    name, a path, a date): anything else could change what the text says to whoever splits it.
// Where a rule refuses, the parameter is refused: CheckParamRefs says so when a job or node is saved, and
// ResolvedParam::refused when the fire is written (the fire then fails with that message and nothing is
// sent). Plain functions; no state; thread-safe.

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
  std::string param;               // the parameter with every reference replaced (as given when refused)
  std::vector<std::string> notes;  // one per reference that could not be resolved
  // Set when a value cannot go into the parameter by the rules above: the fire must fail with this message
  // (it names the reference and the rule) and nothing may be sent.
  std::optional<std::string> refused;
};

// True when `param` holds a reference ("{{parent."): only such parameters are resolved.
bool HasParentRefs(std::string_view param);

// `param` with its references to `parent` replaced. Complexity: O(size of param + size of the values).
ResolvedParam ResolveParentRefs(std::string_view param, const ParentResult& parent);

// A workflow node's parameter (admin/model/workflow.hpp; docs/operations.md, "Workflows") may name, besides
// text:
//   {{workflow.param}}                   the run's parameter (given when it was triggered; else the
//                                        workflow's), a string
//   {{workflow.run_id}}                  the run's id, a number
//   {{parents.<key>.output[.<path>]}},   the result of the parent node <key>, as {{parent.…}} above
//   {{parents.<key>.handle_msg}}, {{parents.<key>.log_id}}
//   {{parent.…}}                         the same, when the node has exactly one parent
// A parent that did not succeed (an ALWAYS or FAILURE edge) is not in `parents`: its references have no
// value, with a note. Other {{...}} text is kept as it is.
struct WorkflowRefs {
  std::int64_t run_id = 0;
  std::string workflow_param;
  std::map<std::string, ParentResult> parents;  // by node key: the parents that succeeded
};
// True when `param` may hold a reference ("{{").
bool HasWorkflowRefs(std::string_view param);
ResolvedParam ResolveWorkflowRefs(std::string_view param, const WorkflowRefs& refs);

// Whose references a parameter is read for: a child job's ({{parent.…}} only) or a workflow node's.
enum class ParamRefs { kChildJob, kWorkflowNode };
// At save: nullopt when every reference of `param` can take any value by the rules above; else why not
// (naming the reference or the JSON error and the rule), for a field error on the parameter. A parameter
// that passes is refused later only for a value a text parameter cannot take.
std::optional<std::string> CheckParamRefs(std::string_view param, ParamRefs whose);

}  // namespace cronwheel::admin
