#include "executor_service.hpp"

#include <fmt/format.h>

namespace cronwheel::executor {

protocol::Envelope ExecutorService::Handle(std::string_view method, std::string_view body,
                                           std::string_view uri) {
  std::string error;
  if (method == "/beat") return protocol::Envelope::Success();
  if (method == "/idleBeat") {
    const auto p = protocol::ParseJobIdParam(body, &error);
    return p ? dispatcher_.IdleBeat(p->job_id) : protocol::Envelope::Fail(error);
  }
  if (method == "/run" || method == "/trigger") {
    const auto p = protocol::ParseTriggerParam(body, &error);
    if (p && trace_ != nullptr && clock_ != nullptr) trace_->Record(p->log_id, p->job_id, clock_->NowMs());
    return p ? dispatcher_.Run(*p) : protocol::Envelope::Fail(error);
  }
  if (method == "/kill") {
    const auto p = protocol::ParseJobIdParam(body, &error);
    return p ? dispatcher_.Kill(p->job_id) : protocol::Envelope::Fail(error);
  }
  if (method == "/log") {
    const auto p = protocol::ParseLogParam(body, &error);
    if (!p) return protocol::Envelope::Fail(error);
    return protocol::Envelope::Success(protocol::ToJson(logs_.Read(*p)));
  }
  return protocol::Envelope::Fail(
      fmt::format("invalid request, uri-mapping({}) not found.", uri.substr(0, 200)));
}

}  // namespace cronwheel::executor
