// JobContext's members that are more than an accessor (executor/job_context.hpp).
#include "executor/job_context.hpp"

#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

bool JobContext::SetOutput(nlohmann::json output) {
  if (output.is_null()) return false;
  // The size the admin will see: compact JSON, invalid UTF-8 replaced rather than thrown on.
  if (output.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() >
      xxljob::kMaxFireOutputBytes) {
    return false;
  }
  output_ = std::move(output);
  return true;
}

}  // namespace cronwheel::executor
