#include "xxljob/protocol.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::xxljob {
namespace {

using cronwheel::IsBlank;
using cronwheel::ParseJson;
using cronwheel::Shown;
using nlohmann::json;

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

absl::StatusOr<json> ParseObject(std::string_view body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) return parsed.status();
  json j = *std::move(parsed);
  if (!j.is_object()) {
    return absl::InvalidArgumentError(fmt::format("body must be a JSON object, got {}", Shown(j)));
  }
  return j;
}

template <class T>
absl::StatusOr<T> Finish(const FieldReader& r, T value) {
  if (!r.ok()) return absl::InvalidArgumentError(r.error());
  return value;
}

// Ids are positive (XXL-JOB's are database keys); instants are epoch ms from 1970 to the end of 9999.
constexpr std::int64_t kMaxInstantMs = 253'402'300'799'999;
// A clock offset (or its error) beyond a year is no clock worth measuring.
constexpr std::int64_t kMaxClockOffsetMs = 31'536'000'000;

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

absl::StatusOr<HandleCallbackParam> ReadCallback(const json& item, const std::string& prefix) {
  if (!item.is_object()) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' must be an object, got {}", prefix.substr(0, prefix.size() - 1), Shown(item)));
  }
  FieldReader r(item, prefix);
  HandleCallbackParam p;
  r.Integer({"logId"}, p.log_id, true);
  r.Integer({"logDateTim", "logDateTime"}, p.log_date_tim, false);
  r.Integer({"handleCode"}, p.handle_code, true);
  r.String({"handleMsg"}, p.handle_msg, false);
  r.Integer({"handleStartTime"}, p.handle_start_ms, false);
  CheckInstant(r, {"handleStartTime"}, p.handle_start_ms);
  if (const json* output = r.Find({"output"})) p.output = *output;
  if (const json* log = r.Find({"jobLog"}); log != nullptr && r.ok()) {
    if (!log->is_object()) {
      r.Fail(fmt::format(R"(expected an object {{"content", "bytes", "leftOut"}}, got {})", Shown(*log)));
      return Finish(r, std::move(p));
    }
    FieldReader lr(*log, prefix + "jobLog.");
    HandleCallbackParam::JobLog l;
    lr.String({"content"}, l.content, true);
    l.bytes = static_cast<std::int64_t>(l.content.size());
    lr.Integer({"bytes"}, l.bytes, false);
    lr.Integer({"leftOut"}, l.left_out, false);
    if (lr.ok() && (l.left_out < 0 || l.left_out > l.bytes)) {
      lr.Find({"leftOut"});
      lr.Fail(fmt::format("must be from 0 to bytes ({}), got {}", l.bytes, l.left_out));
    }
    if (!lr.ok()) return absl::InvalidArgumentError(lr.error());
    p.job_log = std::move(l);
  }
  return Finish(r, std::move(p));
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
  json j{{"jobId", p.job_id},
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
  if (p.run_at_ms > 0) j["runAtMs"] = p.run_at_ms;
  if (p.replace_held) j["replaceHeld"] = true;
  return j;
}

nlohmann::json ToJson(const JobIdParam& p) {
  return {{"jobId", p.job_id}};
}

nlohmann::json ToJson(const CancelParam& p) {
  return {{"logIds", p.log_ids}};
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
  json j{{"logId", p.log_id},
         {"logDateTim", p.log_date_tim},
         {"handleCode", p.handle_code},
         {"handleMsg", p.handle_msg}};
  if (p.handle_start_ms > 0) j["handleStartTime"] = p.handle_start_ms;
  if (p.output && !p.output->is_null()) j["output"] = *p.output;
  if (p.job_log) {
    j["jobLog"] = {
        {"content", p.job_log->content}, {"bytes", p.job_log->bytes}, {"leftOut", p.job_log->left_out}};
  }
  return j;
}

nlohmann::json ToJson(const RegistryParam& p) {
  json j{{"registryGroup", p.registry_group},
         {"registryKey", p.registry_key},
         {"registryValue", p.registry_value}};
  if (p.run_at) j["runAt"] = true;
  if (p.clock_offset_ms) {
    j["clockOffsetMs"] = *p.clock_offset_ms;
    j["clockErrorMs"] = p.clock_error_ms;
  }
  return j;
}

nlohmann::json ToJson(const std::vector<HandleCallbackParam>& list) {
  json arr = json::array();
  for (const auto& p : list)
    arr.push_back(ToJson(p));
  return arr;
}

// --- Parsing
// ------------------------------------------------------------------------------------------------

absl::StatusOr<Envelope> ParseEnvelope(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
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
  return Finish(r, std::move(e));
}

namespace {

// A TriggerParam out of `obj`; `prefix` locates it in the body ("" or "runs[3].").
absl::StatusOr<TriggerParam> ReadTriggerParam(const json& obj, std::string prefix) {
  FieldReader r(obj, std::move(prefix));
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
  r.Integer({"runAtMs"}, p.run_at_ms, false);
  r.Boolean({"replaceHeld"}, p.replace_held);
  CheckId(r, "jobId", p.job_id);
  CheckId(r, "logId", p.log_id);
  CheckInstant(r, {"logDateTime", "logDateTim"}, p.log_date_time);
  CheckInstant(r, {"runAtMs"}, p.run_at_ms);
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
  return Finish(r, std::move(p));
}

}  // namespace

absl::StatusOr<TriggerParam> ParseTriggerParam(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  return ReadTriggerParam(*j, "");
}

nlohmann::json ToJson(std::span<const TriggerParam> runs) {
  json list = json::array();
  for (const auto& p : runs)
    list.push_back(ToJson(p));
  return json{{"runs", std::move(list)}};
}

absl::StatusOr<std::vector<absl::StatusOr<TriggerParam>>> ParseTriggerBatch(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  const auto it = j->find("runs");
  if (it == j->end() || !it->is_array() || it->empty()) {
    return absl::InvalidArgumentError(fmt::format("field 'runs': expected a non-empty array of runs, got {}",
                                                  it == j->end() ? std::string("nothing") : Shown(*it)));
  }
  if (it->size() > kMaxBatchRuns) {
    return absl::InvalidArgumentError(
        fmt::format("field 'runs': at most {} runs, got {}", kMaxBatchRuns, it->size()));
  }
  std::vector<absl::StatusOr<TriggerParam>> out;
  out.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const auto& run = (*it)[i];
    if (!run.is_object()) {
      out.emplace_back(absl::InvalidArgumentError(
          fmt::format("field 'runs[{}]': expected a TriggerParam object, got {}", i, Shown(run))));
      continue;
    }
    out.push_back(ReadTriggerParam(run, fmt::format("runs[{}].", i)));
  }
  return out;
}

absl::StatusOr<JobIdParam> ParseJobIdParam(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  FieldReader r(*j, "");
  JobIdParam p;
  r.Integer({"jobId"}, p.job_id, true);
  CheckId(r, "jobId", p.job_id);
  return Finish(r, p);
}

absl::StatusOr<CancelParam> ParseCancelParam(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  const auto it = j->find("logIds");
  if (it == j->end() || !it->is_array()) {
    return absl::InvalidArgumentError(fmt::format("field 'logIds': expected an array of log ids, got {}",
                                                  it == j->end() ? std::string("nothing") : Shown(*it)));
  }
  if (it->size() > kMaxCancelLogIds) {
    return absl::InvalidArgumentError(
        fmt::format("field 'logIds': at most {} log ids, got {}", kMaxCancelLogIds, it->size()));
  }
  CancelParam p;
  p.log_ids.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const auto& v = (*it)[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0) {
      return absl::InvalidArgumentError(
          fmt::format("field 'logIds[{}]': expected a positive log id, got {}", i, Shown(v)));
    }
    p.log_ids.push_back(v.get<std::int64_t>());
  }
  return p;
}

absl::StatusOr<LogParam> ParseLogParam(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  FieldReader r(*j, "");
  LogParam p;
  r.Integer({"logDateTim", "logDateTime"}, p.log_date_tim, false);
  r.Integer({"logId"}, p.log_id, true);
  r.Integer({"fromLineNum"}, p.from_line_num, false);
  CheckId(r, "logId", p.log_id);
  CheckInstant(r, {"logDateTim", "logDateTime"}, p.log_date_tim);
  if (r.ok() && p.from_line_num < 1) p.from_line_num = 1;  // XXL-JOB clients send 0 for "from the start"
  return Finish(r, p);
}

absl::StatusOr<LogResult> ParseLogResult(const nlohmann::json& content) {
  if (!content.is_object()) {
    return absl::InvalidArgumentError(fmt::format("log result must be an object, got {}", Shown(content)));
  }
  FieldReader r(content, "");
  LogResult res;
  r.Integer({"fromLineNum"}, res.from_line_num, false);
  r.Integer({"toLineNum"}, res.to_line_num, false);
  r.String({"logContent"}, res.log_content, false);
  r.Boolean({"isEnd", "end"}, res.is_end);
  return Finish(r, std::move(res));
}

absl::StatusOr<std::vector<HandleCallbackParam>> ParseCallbackList(std::string_view body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) return parsed.status();
  const json j = *std::move(parsed);
  const json* list = &j;
  std::string name;
  if (j.is_object()) {
    auto it = j.find("callbackList");
    if (it == j.end() || !it->is_array()) {
      return absl::InvalidArgumentError("body must be an array of callbacks or {\"callbackList\": [...]}");
    }
    list = &*it;
    name = "callbackList";
  } else if (!j.is_array()) {
    return absl::InvalidArgumentError(
        fmt::format("body must be an array of callbacks or {{\"callbackList\": [...]}}, got {}", Shown(j)));
  }
  std::vector<HandleCallbackParam> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto p = ReadCallback((*list)[i], fmt::format("{}[{}].", name, i));
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
  }
  return out;
}

absl::StatusOr<RegistryParam> ParseRegistryParam(std::string_view body) {
  auto j = ParseObject(body);
  if (!j.ok()) return j.status();
  FieldReader r(*j, "");
  RegistryParam p;
  r.String({"registryGroup"}, p.registry_group, false);
  r.String({"registryKey"}, p.registry_key, true);
  r.String({"registryValue"}, p.registry_value, true);
  r.Boolean({"runAt"}, p.run_at);
  if (const auto it = j->find("clockOffsetMs"); it != j->end() && !it->is_null()) {
    std::int64_t offset = 0;
    r.Integer({"clockOffsetMs"}, offset, false);
    r.Integer({"clockErrorMs"}, p.clock_error_ms, true);
    if (r.ok() && (offset < -kMaxClockOffsetMs || offset > kMaxClockOffsetMs)) {
      r.Find({"clockOffsetMs"});
      r.Fail(fmt::format("must be within +-{} ms (a year), got {}", kMaxClockOffsetMs, offset));
    }
    if (r.ok() && (p.clock_error_ms < 0 || p.clock_error_ms > kMaxClockOffsetMs)) {
      r.Find({"clockErrorMs"});
      r.Fail(fmt::format("must be from 0 to {} ms, got {}", kMaxClockOffsetMs, p.clock_error_ms));
    }
    p.clock_offset_ms = offset;
  }
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
  return Finish(r, std::move(p));
}

}  // namespace cronwheel::xxljob
