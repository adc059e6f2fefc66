#pragma once
// Handlers that cronwheel-executor registers (and any embedding program may): demos, a sharding probe,
// an HTTP caller with an allow-list, and a no-op for benchmarks. XXL-JOB's sample executor has similar
// demoJobHandler/shardingJobHandler/httpJobHandler; these are cronwheel's own, with these rules:
//  * demoJobHandler: logs its param; if the param is a number of seconds (0..604800, fractions allowed) it
//    sleeps that long on the executor's clock, logging a beat each second, and stops early (no result)
//    when its stop token is requested.
//  * shardingJobHandler: logs "shard index = I, total = T".
//  * httpJobHandler: param is a URL, or {"url": ..., "method": "GET|POST|PUT|DELETE|PATCH|HEAD",
//    "body": ..., "contentType": ...} (url, method and contentType strings; JSON nested deeper than
//    cronwheel::kMaxJsonDepth, 64 levels, is refused, 500, as every JSON body is; so is an object that
//    names a key twice, which readers resolve differently: security review 2, N3). Refused (500) unless the
//    URL is under one of `http_allow` (default: none, so the handler is inert until configured — XXL-JOB's
//    sample calls any URL, an SSRF hole). Redirects are not followed; https certificates are verified against
//    the system's trust store; an answer's body over `http_body_max_bytes` fails the run. Logs the status and
//    at most `http_log_body_bytes` of the body; 2xx = 200, else 500. Sent by cronwheel/net/http_client.hpp,
//    one connection per run.
//  * noopJobHandler: returns at once (200).
// Thread-safety: the handlers hold no state; each call is independent.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "executor/executor.hpp"
#include "executor/job_context.hpp"

namespace cronwheel::executor {

struct BuiltinHandlerOptions {
  std::vector<std::string> http_allow;            // URL prefixes, e.g. "https://api.example.com/hooks/"
  std::chrono::milliseconds http_timeout{10000};  // connect, read and write, each
  std::size_t http_log_body_bytes = 2000;
  std::size_t http_body_max_bytes = std::size_t{16} * 1024 * 1024;  // the largest answer read
};

JobHandler DemoJobHandler();
JobHandler ShardingJobHandler();
JobHandler HttpJobHandler(BuiltinHandlerOptions options);
JobHandler NoopJobHandler();

// Registers the four handlers above under their names. Throws like Executor::Register.
void RegisterBuiltinHandlers(Executor& executor, const BuiltinHandlerOptions& options);

// Whether `url` (http or https) is under one of `prefixes`: it starts with the prefix and the prefix
// ends in '/' or the URL continues with '/', '?' or ends there (so "http://a.com" does not allow
// "http://a.com.evil.net/"). URLs with user info, backslashes, ".." path segments or encoded dots are
// never allowed.
bool UrlAllowed(std::string_view url, const std::vector<std::string>& prefixes);

}  // namespace cronwheel::executor
