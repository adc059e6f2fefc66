#include "admin/model/workflow_access.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cronwheel::admin {

Result<void> MayFireNodes(const NodeFirer& who, std::span<const NodeJob> nodes, std::string_view doing) {
  if (who.admin) return {};
  for (const auto& n : nodes) {
    const auto grant = n.group_id
                           ? std::find_if(who.groups.begin(), who.groups.end(),
                                          [&](const GroupGrant& g) { return g.group_id == *n.group_id; })
                           : who.groups.end();
    if (grant == who.groups.end()) {
      return Error::NotFound(fmt::format("node '{}': job {} not found", n.key, n.job_id));
    }
    if (grant->role >= GroupRole::kOperator) continue;
    return Error{
        .kind = ErrorKind::kForbidden,
        .message = fmt::format("node '{}': job {} is in job group {}, where the role of {} is {}; {} "
                               "it needs OPERATOR (VIEWER < OPERATOR < DEVELOPER < ADMIN)",
                               n.key, n.job_id, *n.group_id, who.username, ToString(grant->role), doing),
        .fields = {
            {.field = "",
             .message = fmt::format("role {} is less than OPERATOR", ToString(grant->role)),
             .code = "role",
             .params = {
                 {"role", "OPERATOR"}, {"group_id", *n.group_id}, {"job_id", n.job_id}, {"node", n.key}}}}};
  }
  return {};
}

}  // namespace cronwheel::admin
