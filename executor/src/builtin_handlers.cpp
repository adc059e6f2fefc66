#include "executor/builtin_handlers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/http_client.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0)
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0)
    s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

struct SplitUrl {
  cronwheel::net::HttpAddress origin;  // scheme://host[:port]
  std::string target;                  // /path?query (at least "/")
};

// The URL's origin and target, or an InvalidArgument status saying what is wrong with it.
absl::StatusOr<SplitUrl> Split(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return absl::InvalidArgumentError("the URL must start with http:// or https://");
  }
  const auto path_start = url.find_first_of("/?#", scheme_end + 3);
  SplitUrl s;
  auto origin = cronwheel::net::ParseHttpAddress(url.substr(0, path_start));
  if (!origin.ok()) return origin.status();
  s.origin = *std::move(origin);
  s.target = path_start == std::string_view::npos ? "/" : std::string(url.substr(path_start));
  if (s.target.front() != '/') s.target.insert(0, "/");
  if (const auto hash = s.target.find('#'); hash != std::string::npos) s.target.resize(hash);
  return s;
}

}  // namespace

bool UrlAllowed(std::string_view url, const std::vector<std::string>& prefixes) {
  if (!url.starts_with("http://") && !url.starts_with("https://")) return false;
  const std::string lower = Lower(url);
  if (url.find('\\') != std::string_view::npos || lower.find("%2e") != std::string::npos ||
      lower.find("%2f") != std::string::npos || lower.find("%5c") != std::string::npos) {
    return false;
  }
  const auto authority_start = url.find("://") + 3;
  const auto authority_end = url.find_first_of("/?#", authority_start);
  if (url.substr(authority_start, authority_end - authority_start).find('@') != std::string_view::npos)
    return false;
  if (authority_end != std::string_view::npos) {
    const auto path = url.substr(authority_end, url.find_first_of("?#", authority_end) - authority_end);
    if (path.find("/../") != std::string_view::npos || path.ends_with("/..") ||
        path.find("/./") != std::string_view::npos || path.ends_with("/.")) {
      return false;
    }
  }
  for (const auto& p : prefixes) {
    if (p.empty() || !url.starts_with(p)) continue;
    if (p.back() == '/' || url.size() == p.size()) return true;
    const char next = url[p.size()];
    if (next == '/' || next == '?') return true;
  }
  return false;
}

JobHandler DemoJobHandler() {
  return [](JobContext& ctx) {
    ctx.Log("demoJobHandler: param '{}'", ctx.param());
    const std::string_view text = Trim(ctx.param());
    double seconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(seconds) ||
        seconds < 0 || seconds > 604800) {
      ctx.SetOutput({{"param", ctx.param()}, {"slept_ms", 0}});
      return;  // not a number of seconds: nothing to wait for
    }
    const auto total =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
    std::chrono::milliseconds done{0};
    int beat = 0;
    while (done < total) {
      const auto step = std::min<std::chrono::milliseconds>(std::chrono::seconds(1), total - done);
      if (!ctx.SleepFor(step)) {
        ctx.Log("demoJobHandler: stopped after {} ms", done.count());
        return;
      }
      done += step;
      ctx.Log("demoJobHandler: beat {} at {} ms", ++beat, done.count());
    }
    ctx.SetOutput({{"param", ctx.param()}, {"slept_ms", total.count()}});
    ctx.Succeed(fmt::format("slept {} ms", total.count()));
  };
}

JobHandler ShardingJobHandler() {
  return [](JobContext& ctx) {
    ctx.Log("shardingJobHandler: shard index = {}, total = {}", ctx.shard_index(), ctx.shard_total());
  };
}

JobHandler NoopJobHandler() {
  return [](JobContext&) {};
}

JobHandler HttpJobHandler(BuiltinHandlerOptions options) {
  return [options = std::move(options)](JobContext& ctx) {
    std::string url;
    std::string method = "GET";
    std::string body;
    std::string content_type = "application/json;charset=UTF-8";
    const std::string_view param = Trim(ctx.param());
    if (param.starts_with('{')) {
      // Depth-bounded (kMaxJsonDepth): printing a body nested 400,000 levels deep recursed once per level
      // and overflowed the worker's stack (issue 21). A key named twice is refused: a param spliced from a
      // template and another job's output once named "url" and "method" twice, and the last ones won
      // (security review 2, N3).
      const auto j = ParseJson(param, "the param", DuplicateKeys::kRefuse);
      if (!j.ok()) {
        ctx.Fail(fmt::format(
            R"(httpJobHandler: {}; use a URL or {{"url": "...", "method": "GET", "body": "..."}})",
            std::string(j.status().message())));
        return;
      }
      if (!j->is_object() || !j->contains("url")) {
        ctx.Fail(
            R"(httpJobHandler: the param must be a URL or {"url": "...", "method": "GET", "body": "..."})");
        return;
      }
      for (const char* field : {"url", "method", "contentType"}) {
        if (const auto it = j->find(field); it != j->end() && !it->is_string()) {
          ctx.Fail(
              fmt::format("httpJobHandler: the param's '{}' is {}, not a string", field, Shown(*it, 40)));
          return;
        }
      }
      url = j->at("url").get<std::string>();
      if (const auto it = j->find("body"); it != j->end())
        body = it->is_string() ? it->get<std::string>() : DumpLossy(*it);
      method = j->value("method", body.empty() ? "GET" : "POST");
      content_type = j->value("contentType", content_type);
    } else {
      url = std::string(param);
    }
    for (auto& c : method)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!UrlAllowed(url, options.http_allow)) {
      ctx.Fail(fmt::format(
          "httpJobHandler: URL '{}' is not under an allowed prefix (setting http_handler_allow: {})",
          url.substr(0, 300),
          options.http_allow.empty() ? "empty, so no URL is allowed"
                                     : fmt::format("{}", fmt::join(options.http_allow, ", "))));
      return;
    }
    const auto split = Split(url);
    if (!split.ok()) {
      ctx.Fail("httpJobHandler: " + std::string(split.status().message()));
      return;
    }
    static constexpr std::string_view kMethods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
    if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
      ctx.Fail(
          fmt::format("httpJobHandler: method '{}' is not valid: use GET, HEAD, POST, PUT, PATCH or DELETE",
                      method.substr(0, 20)));
      return;
    }
    // A connection per run (Connection: close), no redirect followed.
    cronwheel::net::HttpClient client(split->origin, {.connect_timeout = options.http_timeout,
                                                      .timeout = options.http_timeout,
                                                      .body_max_bytes = options.http_body_max_bytes,
                                                      .user_agent = "cronwheel-executor httpJobHandler",
                                                      .keep_alive = false});
    cronwheel::net::ClientRequest request{.method = method, .target = split->target};
    if (method != "GET" && method != "HEAD") {
      request.body = body;
      request.content_type = content_type;
    }
    ctx.Log("httpJobHandler: {} {}", method, url);
    const auto res = client.Send(request);
    if (!res.ok()) {
      ctx.Fail(fmt::format("httpJobHandler: request failed: {}", std::string(res.status().message())));
      return;
    }
    const auto& b = res->body;
    ctx.Log("httpJobHandler: HTTP {}, {} bytes: {}{}", res->status, b.size(),
            b.substr(0, options.http_log_body_bytes), b.size() > options.http_log_body_bytes ? "..." : "");
    if (res->status >= 200 && res->status < 300) {
      ctx.Succeed(fmt::format("HTTP {}", res->status));
    } else {
      ctx.Fail(fmt::format("HTTP {}", res->status));
    }
  };
}

void RegisterBuiltinHandlers(Executor& executor, const BuiltinHandlerOptions& options) {
  executor.Register("demoJobHandler", DemoJobHandler());
  executor.Register("shardingJobHandler", ShardingJobHandler());
  executor.Register("httpJobHandler", HttpJobHandler(options));
  executor.Register("noopJobHandler", NoopJobHandler());
}

}  // namespace cronwheel::executor
