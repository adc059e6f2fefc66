#include "executor/protocol.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sodium.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

namespace cronwheel::protocol {
namespace {

using nlohmann::json;

std::string Shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

void SetError(std::string* error, std::string msg) {
  if (error != nullptr) *error = std::move(msg);
}

// Reads typed fields out of one JSON object, recording the first error. `prefix` locates the object
// within the body ("" or "callbackList[2].").
class FieldReader {
 public:
  FieldReader(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  // Finds the first present, non-null field among `names`; nullptr if none.
  const json* Find(std::initializer_list<const char*> names) {
    for (const char* n : names) {
      auto it = obj_.find(n);
      if (it != obj_.end() && !it->is_null()) {
        used_ = n;
        return &*it;
      }
    }
    used_ = *names.begin();
    return nullptr;
  }

  template <class Int>
  void Integer(std::initializer_list<const char*> names, Int& out, bool required) {
    const json* v = Find(names);
    if (v == nullptr) {
      if (required) Fail("is required");
      return;
    }
    constexpr bool k32 = sizeof(Int) == 4;
    const char* what = k32 ? "a 32-bit integer" : "a 64-bit integer";
    std::int64_t value = 0;
    if (v->is_number_integer() && !v->is_number_unsigned()) {
      value = v->get<std::int64_t>();
    } else if (v->is_number_unsigned()) {
      const auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Fail(fmt::format("expected {}, got {}", what, Shown(*v)));
      }
      value = static_cast<std::int64_t>(u);
    } else if (v->is_number_float()) {
      const double d = v->get<double>();
      if (!std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 9.0e15) {
        return Fail(fmt::format("expected {}, got {}", what, Shown(*v)));
      }
      value = static_cast<std::int64_t>(d);
    } else if (v->is_string()) {  // Gson reads "123" into an int field
      const auto& s = v->get_ref<const std::string&>();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
      if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) {
        return Fail(fmt::format("expected {}, got {}", what, Shown(*v)));
      }
    } else {
      return Fail(fmt::format("expected {}, got {}", what, Shown(*v)));
    }
    if (value < std::numeric_limits<Int>::min() || value > std::numeric_limits<Int>::max()) {
      return Fail(fmt::format("expected {}, got {} (out of range)", what, value));
    }
    out = static_cast<Int>(value);
  }

  void String(std::initializer_list<const char*> names, std::string& out, bool required) {
    const json* v = Find(names);
    if (v == nullptr) {
      if (required) Fail("is required");
      return;
    }
    if (!v->is_string()) return Fail(fmt::format("expected a string, got {}", Shown(*v)));
    out = v->get<std::string>();
  }

  void Boolean(std::initializer_list<const char*> names, bool& out) {
    const json* v = Find(names);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(fmt::format("expected true or false, got {}", Shown(*v)));
    out = v->get<bool>();
  }

  void Fail(const std::string& msg) {
    if (error_.empty()) error_ = fmt::format("field '{}{}': {}", prefix_, used_, msg);
  }
  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  const json& obj_;
  std::string prefix_;
  const char* used_ = "";
  std::string error_;
};

std::optional<json> ParseObject(std::string_view body, std::string* error) {
  auto parsed = ParseJson(body, error);
  if (!parsed) return std::nullopt;
  json j = std::move(*parsed);
  if (!j.is_object()) {
    SetError(error, fmt::format("body must be a JSON object, got {}", Shown(j)));
    return std::nullopt;
  }
  return j;
}

template <class T>
std::optional<T> Finish(const FieldReader& r, T value, std::string* error) {
  if (!r.ok()) {
    SetError(error, r.error());
    return std::nullopt;
  }
  return value;
}

std::optional<HandleCallbackParam> ReadCallback(const json& item, const std::string& prefix,
                                                std::string* error) {
  if (!item.is_object()) {
    SetError(error,
             fmt::format("'{}' must be an object, got {}", prefix.substr(0, prefix.size() - 1), Shown(item)));
    return std::nullopt;
  }
  FieldReader r(item, prefix);
  HandleCallbackParam p;
  r.Integer({"logId"}, p.log_id, true);
  r.Integer({"logDateTim", "logDateTime"}, p.log_date_tim, false);
  r.Integer({"handleCode"}, p.handle_code, true);
  r.String({"handleMsg"}, p.handle_msg, false);
  return Finish(r, std::move(p), error);
}

// Ids are positive (XXL-JOB's are database keys); instants are epoch ms from 1970 to the end of 9999.
constexpr std::int64_t kMaxInstantMs = 253'402'300'799'999;

void CheckId(FieldReader& r, const char* name, std::int64_t v) {
  if (r.ok() && v <= 0) {
    r.Find({name});
    r.Fail(fmt::format("must be a positive id, got {}", v));
  }
}

void CheckInstant(FieldReader& r, std::initializer_list<const char*> names, std::int64_t v) {
  if (r.ok() && (v < 0 || v > kMaxInstantMs)) {
    r.Find(names);
    r.Fail(fmt::format("must be epoch milliseconds from 0 to {} (the end of year 9999), got {}",
                       kMaxInstantMs, v));
  }
}

bool IsBlank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

// --- Serialising ------------------------------------------------------------------------------------------

nlohmann::json ToJson(const Envelope& e) {
  json j{{"code", e.code}};
  j["msg"] = e.msg ? json(*e.msg) : json(nullptr);
  if (!e.content.is_null()) {
    j["content"] = e.content;
    j["data"] = e.content;
  }
  return j;
}

nlohmann::json ToJson(const TriggerParam& p) {
  return {{"jobId", p.job_id},
          {"executorHandler", p.executor_handler},
          {"executorParams", p.executor_params},
          {"executorBlockStrategy", p.executor_block_strategy},
          {"executorTimeout", p.executor_timeout},
          {"logId", p.log_id},
          {"logDateTime", p.log_date_time},
          {"glueType", p.glue_type},
          {"glueSource", p.glue_source},
          {"glueUpdatetime", p.glue_updatetime},
          {"broadcastIndex", p.broadcast_index},
          {"broadcastTotal", p.broadcast_total}};
}

nlohmann::json ToJson(const JobIdParam& p) {
  return {{"jobId", p.job_id}};
}

nlohmann::json ToJson(const LogParam& p) {
  return {{"logDateTim", p.log_date_tim}, {"logId", p.log_id}, {"fromLineNum", p.from_line_num}};
}

nlohmann::json ToJson(const LogResult& r) {
  return {{"fromLineNum", r.from_line_num},
          {"toLineNum", r.to_line_num},
          {"logContent", r.log_content},
          {"isEnd", r.is_end}};
}

nlohmann::json ToJson(const HandleCallbackParam& p) {
  return {{"logId", p.log_id},
          {"logDateTim", p.log_date_tim},
          {"handleCode", p.handle_code},
          {"handleMsg", p.handle_msg}};
}

nlohmann::json ToJson(const RegistryParam& p) {
  return {{"registryGroup", p.registry_group},
          {"registryKey", p.registry_key},
          {"registryValue", p.registry_value}};
}

nlohmann::json ToJson(const std::vector<HandleCallbackParam>& list) {
  json arr = json::array();
  for (const auto& p : list)
    arr.push_back(ToJson(p));
  return arr;
}

// --- Parsing
// ------------------------------------------------------------------------------------------------

bool HasUnreadBody(std::string_view method, bool has_transfer_encoding, std::string_view content_length) {
  if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") return false;
  return has_transfer_encoding || (!content_length.empty() && content_length != "0");
}

bool RaiseListenBacklog(int port, int backlog) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port) return ::listen(fd, backlog) == 0;
  }
  return false;
}

std::optional<nlohmann::json> ParseJson(std::string_view body, std::string* error) {
  // nlohmann's parser keeps its own stack (it does not recurse); its callback sees the depth of every
  // array and object as it starts (0 for the outermost), so the parse stops at the first one too deep.
  struct TooDeep {};
  const json::parser_callback_t limit = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    return json::parse(body.begin(), body.end(), limit);
  } catch (const TooDeep&) {
    SetError(error, fmt::format("body nests JSON arrays and objects deeper than {} levels", kMaxJsonDepth));
    return std::nullopt;
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large (406)
    SetError(error, fmt::format("body is not valid JSON: {}", e.what()));
    return std::nullopt;
  }
}

std::optional<Envelope> ParseEnvelope(std::string_view body, std::string* error) {
  auto j = ParseObject(body, error);
  if (!j) return std::nullopt;
  FieldReader r(*j, "");
  Envelope e;
  e.code = 0;
  r.Integer({"code"}, e.code, true);
  std::string msg;
  if (const auto it = j->find("msg"); it != j->end() && !it->is_null()) {
    r.String({"msg"}, msg, false);
    e.msg = msg;
  }
  if (const auto it = j->find("content"); it != j->end() && !it->is_null()) {
    e.content = *it;
  } else if (const auto d = j->find("data"); d != j->end()) {
    e.content = *d;
  }
  return Finish(r, std::move(e), error);
}

std::optional<TriggerParam> ParseTriggerParam(std::string_view body, std::string* error) {
  auto j = ParseObject(body, error);
  if (!j) return std::nullopt;
  FieldReader r(*j, "");
  TriggerParam p;
  r.Integer({"jobId"}, p.job_id, true);
  r.String({"executorHandler"}, p.executor_handler, false);
  r.String({"executorParams"}, p.executor_params, false);
  r.String({"executorBlockStrategy"}, p.executor_block_strategy, false);
  r.Integer({"executorTimeout"}, p.executor_timeout, false);
  r.Integer({"logId"}, p.log_id, true);
  r.Integer({"logDateTime", "logDateTim"}, p.log_date_time, false);
  r.String({"glueType"}, p.glue_type, false);
  r.String({"glueSource"}, p.glue_source, false);
  r.Integer({"glueUpdatetime"}, p.glue_updatetime, false);
  r.Integer({"broadcastIndex"}, p.broadcast_index, false);
  r.Integer({"broadcastTotal"}, p.broadcast_total, false);
  CheckId(r, "jobId", p.job_id);
  CheckId(r, "logId", p.log_id);
  CheckInstant(r, {"logDateTime", "logDateTim"}, p.log_date_time);
  if (r.ok() && p.executor_timeout < 0) {
    r.Find({"executorTimeout"});
    r.Fail(fmt::format("must be >= 0 seconds, got {}", p.executor_timeout));
  }
  if (r.ok() && (p.broadcast_index < 0 || p.broadcast_total < 0 ||
                 (p.broadcast_total > 0 && p.broadcast_index >= p.broadcast_total))) {
    r.Find({"broadcastIndex"});
    r.Fail(fmt::format("shard {}/{} is not valid: need 0 <= index < total", p.broadcast_index,
                       p.broadcast_total));
  }
  return Finish(r, std::move(p), error);
}

std::optional<JobIdParam> ParseJobIdParam(std::string_view body, std::string* error) {
  auto j = ParseObject(body, error);
  if (!j) return std::nullopt;
  FieldReader r(*j, "");
  JobIdParam p;
  r.Integer({"jobId"}, p.job_id, true);
  CheckId(r, "jobId", p.job_id);
  return Finish(r, p, error);
}

std::optional<LogParam> ParseLogParam(std::string_view body, std::string* error) {
  auto j = ParseObject(body, error);
  if (!j) return std::nullopt;
  FieldReader r(*j, "");
  LogParam p;
  r.Integer({"logDateTim", "logDateTime"}, p.log_date_tim, false);
  r.Integer({"logId"}, p.log_id, true);
  r.Integer({"fromLineNum"}, p.from_line_num, false);
  CheckId(r, "logId", p.log_id);
  CheckInstant(r, {"logDateTim", "logDateTime"}, p.log_date_tim);
  if (r.ok() && p.from_line_num < 1) p.from_line_num = 1;  // XXL-JOB clients send 0 for "from the start"
  return Finish(r, p, error);
}

std::optional<LogResult> ParseLogResult(const nlohmann::json& content, std::string* error) {
  if (!content.is_object()) {
    SetError(error, fmt::format("log result must be an object, got {}", Shown(content)));
    return std::nullopt;
  }
  FieldReader r(content, "");
  LogResult res;
  r.Integer({"fromLineNum"}, res.from_line_num, false);
  r.Integer({"toLineNum"}, res.to_line_num, false);
  r.String({"logContent"}, res.log_content, false);
  r.Boolean({"isEnd", "end"}, res.is_end);
  return Finish(r, std::move(res), error);
}

std::optional<std::vector<HandleCallbackParam>> ParseCallbackList(std::string_view body, std::string* error) {
  auto parsed = ParseJson(body, error);
  if (!parsed) return std::nullopt;
  const json j = std::move(*parsed);
  const json* list = &j;
  std::string name;
  if (j.is_object()) {
    auto it = j.find("callbackList");
    if (it == j.end() || !it->is_array()) {
      SetError(error, "body must be an array of callbacks or {\"callbackList\": [...]}");
      return std::nullopt;
    }
    list = &*it;
    name = "callbackList";
  } else if (!j.is_array()) {
    SetError(error, fmt::format("body must be an array of callbacks or {{\"callbackList\": [...]}}, got {}",
                                Shown(j)));
    return std::nullopt;
  }
  std::vector<HandleCallbackParam> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto p = ReadCallback((*list)[i], fmt::format("{}[{}].", name, i), error);
    if (!p) return std::nullopt;
    out.push_back(std::move(*p));
  }
  return out;
}

std::optional<RegistryParam> ParseRegistryParam(std::string_view body, std::string* error) {
  auto j = ParseObject(body, error);
  if (!j) return std::nullopt;
  FieldReader r(*j, "");
  RegistryParam p;
  r.String({"registryGroup"}, p.registry_group, false);
  r.String({"registryKey"}, p.registry_key, true);
  r.String({"registryValue"}, p.registry_value, true);
  if (r.ok() && p.registry_group != "EXECUTOR" && p.registry_group != "ADMIN") {
    r.Find({"registryGroup"});
    r.Fail(fmt::format("'{}' is not valid: use EXECUTOR or ADMIN", p.registry_group));
  }
  if (r.ok() && IsBlank(p.registry_key)) {
    r.Find({"registryKey"});
    r.Fail("must not be blank");
  }
  if (r.ok() && IsBlank(p.registry_value)) {
    r.Find({"registryValue"});
    r.Fail("must not be blank");
  }
  if (r.ok() && (p.registry_key.size() > 255 || p.registry_value.size() > 255)) {
    r.Find({p.registry_key.size() > 255 ? "registryKey" : "registryValue"});
    r.Fail("must be at most 255 characters");
  }
  return Finish(r, std::move(p), error);
}

// --- Access token -------------------------------------------------------------------------------------

bool TokenMatches(std::string_view given, std::string_view expected) {
  if (expected.empty()) return true;
  static const int init = sodium_init();  // idempotent; selects the implementations
  (void)init;
  unsigned char a[crypto_hash_sha256_BYTES];
  unsigned char b[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(a, reinterpret_cast<const unsigned char*>(given.data()), given.size());
  crypto_hash_sha256(b, reinterpret_cast<const unsigned char*>(expected.data()), expected.size());
  return sodium_memcmp(a, b, sizeof a) == 0;
}

// --- Addresses ------------------------------------------------------------------------------------------

std::string HttpAddress::Path(std::string_view method) const {
  std::string out = base_path;
  out += '/';
  out += method;
  return out;
}

std::optional<HttpAddress> ParseHttpAddress(std::string_view address, std::string* error) {
  auto fail = [&](std::string_view why) -> std::optional<HttpAddress> {
    SetError(error, fmt::format("address '{}' is not valid: {}; expected http(s)://host[:port][/path]",
                                address.substr(0, 200), why));
    return std::nullopt;
  };
  HttpAddress a;
  std::string_view rest = address;
  int default_port = 0;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
    default_port = 80;
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    default_port = 443;
  } else {
    return fail("the scheme must be http:// or https://");
  }
  if (rest.find_first_of("?#@ \t\r\n\\") != std::string_view::npos) {
    return fail("user info, query, fragment, spaces and backslashes are not allowed");
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  std::string_view host;
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 literal");
    host = authority.substr(1, close - 1);
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("unexpected text after the IPv6 literal");
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return fail("an IPv6 host must be in brackets");
  }
  if (host.empty()) return fail("the host is empty");
  a.port = default_port;
  if (!port_text.empty() || authority.ends_with(':')) {
    int port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
      return fail("the port must be 1..65535");
    }
    a.port = port;
  }
  while (path.ends_with('/'))
    path.remove_suffix(1);
  if (path.find("//") != std::string_view::npos || path.find("/../") != std::string_view::npos ||
      path.ends_with("/..")) {
    return fail("the path must not contain '//' or '..'");
  }
  a.host = std::string(host);
  a.base_path = std::string(path);
  a.origin = std::string(address.substr(0, address.size() - rest.size())) + std::string(authority);
  return a;
}

std::string NormalizeAddress(std::string_view address) {
  const auto a = ParseHttpAddress(address, nullptr);
  if (!a) return std::string(address);
  return a->origin + a->base_path + "/";
}

}  // namespace cronwheel::protocol
