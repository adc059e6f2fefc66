#pragma once
// The executor's API without HTTP: maps one call (path after any prefix, and body) to an envelope. The
// HTTP server (http_server.hpp) checks the method, the body size and the token and then calls Handle();
// unit tests call Handle() directly.
//
// Thread-safety: Handle() may be called from many threads at once.

#include <string_view>

#include "executor/protocol.hpp"
#include "job_dispatcher.hpp"
#include "job_log.hpp"

namespace cronwheel::executor {

// True when `provided` equals `expected`, in time independent of where they differ (and of their
// lengths: SHA-256 digests of both are compared with sodium_memcmp). An empty `expected` accepts all.
bool TokenMatches(std::string_view expected, std::string_view provided);

inline constexpr std::string_view kWrongTokenMsg = "The access token is wrong.";

class ExecutorService final {
 public:
  ExecutorService(JobDispatcher& dispatcher, JobLogFiles& logs) : dispatcher_(dispatcher), logs_(logs) {}

  // `method` is "/beat", "/idleBeat", "/run", "/trigger", "/kill" or "/log"; anything else is
  // 500 "invalid request, uri-mapping(<uri>) not found." (`uri` is what the client asked for).
  protocol::Envelope Handle(std::string_view method, std::string_view body, std::string_view uri);

 private:
  JobDispatcher& dispatcher_;
  JobLogFiles& logs_;
};

}  // namespace cronwheel::executor
