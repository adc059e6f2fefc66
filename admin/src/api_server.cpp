#include "admin/api_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <pqxx/pqxx>

#include "executor/protocol.hpp"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message,
               const FieldErrors& errors = {}) {
  json body{{"error", message}};
  if (!errors.empty()) body["errors"] = ToJson(errors);
  SendJson(res, status, body);
}

void SendEnvelope(httplib::Response& res, const protocol::Envelope& e) {
  res.status = 200;
  res.set_content(protocol::ToJson(e).dump(), "application/json;charset=UTF-8");
}

std::optional<json> ParseBody(const httplib::Request& req, httplib::Response& res, bool allow_empty) {
  if (req.body.empty() && allow_empty) return json::object();
  try {
    return json::parse(req.body);
  } catch (const json::parse_error& e) {
    SendError(res, 400, fmt::format("the body is not valid JSON: {}", e.what()));
    return std::nullopt;
  }
}

// A path id: decimal digits only, within the column's range.
template <class Int>
std::optional<Int> ParseId(const std::string& text) {
  Int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v <= 0) return std::nullopt;
  return v;
}

// Optional integer query parameter; records an error when present but invalid.
template <class Int>
std::optional<Int> QueryInt(const httplib::Request& req, const char* name, Int min, Int max,
                            FieldErrors& errors) {
  if (!req.has_param(name)) return std::nullopt;
  const auto text = req.get_param_value(name);
  Int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < min || v > max) {
    errors.push_back(
        {name, fmt::format("'{}' is not valid: an integer from {} to {}", text.substr(0, 40), min, max)});
    return std::nullopt;
  }
  return v;
}

template <class T>
bool IsErrors(const Validated<T>& v) {
  return std::holds_alternative<FieldErrors>(v);
}

}  // namespace

ApiServer::ApiServer(Settings settings, Services services, ringwheel::Clock& clock)
    : settings_(std::move(settings)),
      services_(std::move(services)),
      clock_(clock),
      server_(std::make_unique<httplib::Server>()) {
  const int threads = settings_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  server_->set_tcp_nodelay(true);
  server_->set_keep_alive_timeout(2);
  server_->set_keep_alive_max_count(100'000);
  server_->set_payload_max_length(settings_.max_body_bytes);
  server_->set_read_timeout(10);
  server_->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        int status = 500;
        try {
          std::rethrow_exception(ep);
        } catch (const pqxx::broken_connection& e) {
          what = fmt::format("the database is unavailable: {}", e.what());
          status = 503;
        } catch (const PoolExhausted& e) {
          what = e.what();
          status = 503;
        } catch (const std::exception& e) {
          what = e.what();
        }
        spdlog::error("{} {}: {}", req.method, req.path, what);
        if (req.path.find("/api/v1/") != std::string::npos) {
          SendError(res, status, what);
        } else {
          SendEnvelope(res, protocol::Envelope::Fail(fmt::format("request error: {}", what)));
        }
      });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      SendError(res, 413, "the body is larger than the limit");
    } else if (res.status == 404) {
      SendError(res, 404, fmt::format("no such resource: {} {}", req.method, req.path.substr(0, 200)));
    } else if (res.status == 405) {
      SendError(res, 405, fmt::format("method {} not allowed on {}", req.method, req.path.substr(0, 200)));
    } else {
      SendError(res, res.status, "request failed");
    }
  });
  RegisterExecutorApi("");
  RegisterExecutorApi("/xxl-job-admin");
  RegisterRestApi();
}

ApiServer::~ApiServer() {
  Stop();
}

bool ApiServer::Start() {
  if (settings_.port == 0) {
    port_ = server_->bind_to_any_port(settings_.host);
  } else {
    port_ = server_->bind_to_port(settings_.host, settings_.port) ? settings_.port : -1;
  }
  if (port_ <= 0) {
    spdlog::error("cannot listen on {}:{}", settings_.host, settings_.port);
    return false;
  }
  thread_ = std::jthread([this] { server_->listen_after_bind(); });
  while (!server_->is_running())
    std::this_thread::yield();
  return true;
}

void ApiServer::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

void ApiServer::RegisterExecutorApi(const std::string& prefix) {
  auto& s = *server_;
  // registry and registryRemove: {"registryGroup","registryKey","registryValue"}.
  auto registry = [this](bool remove) {
    return [this, remove](const httplib::Request& req, httplib::Response& res) {
      std::string error;
      const auto p = protocol::ParseRegistryParam(req.body, &error);
      if (!p) return SendEnvelope(res, protocol::Envelope::Fail(error));
      const auto token = req.get_header_value(protocol::kAccessTokenHeader);
      const auto group_token = services_.registry.GroupToken(p->registry_key);
      if (!protocol::TokenMatches(token, group_token.value_or(settings_.access_token))) {
        return SendEnvelope(res, protocol::Envelope::Fail("The access token is wrong."));
      }
      if (remove) {
        services_.registry.Remove(*p);
      } else {
        services_.registry.Register(*p);
      }
      SendEnvelope(res, protocol::Envelope::Success());
    };
  };
  s.Post(prefix + "/api/registry", registry(false));
  s.Post(prefix + "/api/registryRemove", registry(true));
  s.Post(prefix + "/api/callback", [this](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const auto list = protocol::ParseCallbackList(req.body, &error);
    if (!list) return SendEnvelope(res, protocol::Envelope::Fail(error));
    const auto token = req.get_header_value(protocol::kAccessTokenHeader);
    if (!services_.callbacks.Authorized(*list, token, settings_.access_token)) {
      return SendEnvelope(res, protocol::Envelope::Fail("The access token is wrong."));
    }
    services_.callbacks.Handle(*list);
    SendEnvelope(res, protocol::Envelope::Success());
  });
  // Anything else under the executor API: XXL-JOB's admin answers a code-500 envelope.
  s.Post(prefix + R"(/api/([^/]+))", [](const httplib::Request& req, httplib::Response& res) {
    SendEnvelope(res, protocol::Envelope::Fail(fmt::format("invalid request, uri-mapping({}) not found.",
                                                           req.path.substr(0, 200))));
  });
}

void ApiServer::RegisterRestApi() {
  auto& s = *server_;
  auto& repo = services_.repository;

  s.Get("/api/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    json body{{"status", "ok"}, {"node_id", settings_.node_id}, {"now_ms", clock_.NowMs()}};
    try {
      services_.repository.ListGroups();  // the database answers
      if (services_.health_details) body.update(services_.health_details());
      SendJson(res, 200, body);
    } catch (const std::exception& e) {
      body["status"] = "unavailable";
      body["error"] = e.what();
      SendJson(res, 503, body);
    }
  });

  // --- groups ---
  s.Get("/api/v1/groups", [this, &repo](const httplib::Request&, httplib::Response& res) {
    json items = json::array();
    for (const auto& g : repo.ListGroups()) {
      auto j = ToJson(g);
      j["online_addresses"] = services_.catalog.Addresses(g);
      items.push_back(std::move(j));
    }
    SendJson(res, 200, {{"items", items}});
  });
  s.Post("/api/v1/groups", [&repo](const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = repo.CreateGroup(*body);
    if (IsErrors(v)) return SendError(res, 400, "the group is not valid", std::get<FieldErrors>(v));
    SendJson(res, 201, ToJson(std::get<JobGroup>(v)));
  });
  s.Get(R"(/api/v1/groups/([^/]+))", [this, &repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    const auto g = id ? repo.GetGroup(*id) : std::nullopt;
    if (!g)
      return SendError(res, 404,
                       fmt::format("group '{}' not found", std::string(req.matches[1]).substr(0, 40)));
    auto j = ToJson(*g);
    j["online_addresses"] = services_.catalog.Addresses(*g);
    SendJson(res, 200, j);
  });
  s.Put(R"(/api/v1/groups/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "group not found");
    auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = repo.UpdateGroup(*id, *body);
    if (!v) return SendError(res, 404, fmt::format("group {} not found", *id));
    if (IsErrors(*v)) return SendError(res, 400, "the group is not valid", std::get<FieldErrors>(*v));
    SendJson(res, 200, ToJson(std::get<JobGroup>(*v)));
  });
  s.Delete(R"(/api/v1/groups/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "group not found");
    std::string why;
    switch (repo.DeleteGroup(*id, &why)) {
      case Outcome::kOk:
        return SendJson(res, 200, {{"deleted", *id}});
      case Outcome::kNotFound:
        return SendError(res, 404, fmt::format("group {} not found", *id));
      default:
        return SendError(res, 409, why);
    }
  });

  // --- jobs ---
  s.Get("/api/v1/jobs", [&repo](const httplib::Request& req, httplib::Response& res) {
    FieldErrors errors;
    JobQuery q;
    q.group_id = QueryInt<int>(req, "group_id", 1, INT32_MAX, errors);
    q.offset = QueryInt<int>(req, "offset", 0, INT32_MAX, errors).value_or(0);
    q.limit = QueryInt<int>(req, "limit", 1, 1000, errors).value_or(50);
    if (req.has_param("enabled")) {
      const auto e = req.get_param_value("enabled");
      if (e == "true" || e == "false") {
        q.enabled = e == "true";
      } else {
        errors.push_back({"enabled", "use true or false"});
      }
    }
    if (req.has_param("q")) q.text = req.get_param_value("q").substr(0, 200);
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    const auto page = repo.ListJobs(q);
    json items = json::array();
    for (const auto& j : page.items)
      items.push_back(ToJson(j));
    SendJson(res, 200, {{"total", page.total}, {"items", items}});
  });
  s.Post("/api/v1/jobs", [&repo](const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = repo.CreateJob(*body);
    if (IsErrors(v)) return SendError(res, 400, "the job is not valid", std::get<FieldErrors>(v));
    SendJson(res, 201, ToJson(std::get<Job>(v)));
  });
  s.Get(R"(/api/v1/jobs/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    const auto j = id ? repo.GetJob(*id) : std::nullopt;
    if (!j)
      return SendError(res, 404,
                       fmt::format("job '{}' not found", std::string(req.matches[1]).substr(0, 40)));
    SendJson(res, 200, ToJson(*j));
  });
  s.Put(R"(/api/v1/jobs/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "job not found");
    auto body = ParseBody(req, res, false);
    if (!body) return;
    auto v = repo.UpdateJob(*id, *body);
    if (!v) return SendError(res, 404, fmt::format("job {} not found", *id));
    if (IsErrors(*v)) return SendError(res, 400, "the job is not valid", std::get<FieldErrors>(*v));
    SendJson(res, 200, ToJson(std::get<Job>(*v)));
  });
  s.Delete(R"(/api/v1/jobs/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id || repo.DeleteJob(*id) == Outcome::kNotFound) return SendError(res, 404, "job not found");
    SendJson(res, 200, {{"deleted", *id}});
  });
  s.Post(R"(/api/v1/jobs/([^/]+)/start)", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id) return SendError(res, 404, "job not found");
    FieldErrors errors;
    switch (repo.StartJob(*id, &errors)) {
      case Outcome::kOk:
        return SendJson(res, 200, ToJson(*repo.GetJob(*id)));
      case Outcome::kNotFound:
        return SendError(res, 404, fmt::format("job {} not found", *id));
      default:
        return SendError(res, 400, "the job cannot be started", errors);
    }
  });
  s.Post(R"(/api/v1/jobs/([^/]+)/stop)", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<int>(req.matches[1]);
    if (!id || repo.StopJob(*id) == Outcome::kNotFound) return SendError(res, 404, "job not found");
    SendJson(res, 200, ToJson(*repo.GetJob(*id)));
  });
  s.Post(R"(/api/v1/jobs/([^/]+)/trigger)",
         [this, &repo](const httplib::Request& req, httplib::Response& res) {
           const auto id = ParseId<int>(req.matches[1]);
           if (!id) return SendError(res, 404, "job not found");
           auto body = ParseBody(req, res, true);
           if (!body) return;
           FieldErrors errors;
           std::optional<std::string> param;
           std::optional<std::string> address;
           if (!body->is_object()) {
             errors.push_back({"", "the body must be a JSON object"});
           } else {
             for (const auto& [k, v] : body->items()) {
               if (k == "param" && (v.is_string() || v.is_null())) {
                 if (v.is_string()) param = v.get<std::string>();
                 if (param && param->size() > 64 * 1024)
                   errors.push_back({"param", "must be at most 65536 characters"});
               } else if (k == "address" && (v.is_string() || v.is_null())) {
                 if (v.is_string()) address = v.get<std::string>();
               } else if (k == "param" || k == "address") {
                 errors.push_back({k, "expected a string"});
               } else {
                 errors.push_back({k, "unknown field; the fields are: param, address"});
               }
             }
           }
           const auto job = repo.GetJob(*id);
           if (!job) return SendError(res, 404, fmt::format("job {} not found", *id));
           if (address) {
             // Only an address registered for or configured on the job's group (never one the caller typed).
             const auto group = services_.catalog.GetGroup(job->group_id);
             const auto allowed = group ? services_.catalog.Addresses(*group) : std::vector<std::string>{};
             const auto wanted = protocol::NormalizeAddress(*address);
             if (std::find(allowed.begin(), allowed.end(), wanted) == allowed.end()) {
               errors.push_back(
                   {"address", fmt::format("'{}' is not an online or configured address of the job's group",
                                           address->substr(0, 200))});
             }
           }
           if (!errors.empty()) return SendError(res, 400, "the trigger request is not valid", errors);
           const auto log_id = repo.CreateManualFire(*id, TriggerType::kManual, param, settings_.node_id);
           if (!log_id) return SendError(res, 404, fmt::format("job {} not found", *id));
           services_.scheduler.Submit({Fire{.log_id = *log_id,
                                            .job_id = *id,
                                            .scheduled_ms = clock_.NowMs(),
                                            .type = TriggerType::kManual,
                                            .param = param ? param : std::optional<std::string>(job->param),
                                            .address = address}});
           SendJson(res, 202, {{"log_id", *log_id}});
         });

  // --- logs ---
  s.Get("/api/v1/logs", [&repo](const httplib::Request& req, httplib::Response& res) {
    FieldErrors errors;
    LogQuery q;
    q.job_id = QueryInt<int>(req, "job_id", 1, INT32_MAX, errors);
    q.group_id = QueryInt<int>(req, "group_id", 1, INT32_MAX, errors);
    q.from_ms = QueryInt<std::int64_t>(req, "from_ms", 0, INT64_MAX, errors);
    q.to_ms = QueryInt<std::int64_t>(req, "to_ms", 0, INT64_MAX, errors);
    q.offset = QueryInt<int>(req, "offset", 0, INT32_MAX, errors).value_or(0);
    q.limit = QueryInt<int>(req, "limit", 1, 1000, errors).value_or(50);
    if (req.has_param("status")) {
      const auto st = req.get_param_value("status");
      if (st == "PENDING" || st == "RUNNING" || st == "SUCCESS" || st == "FAILED" || st == "SKIPPED") {
        q.status = st;
      } else {
        errors.push_back(
            {"status", fmt::format("'{}' is not valid; use PENDING, RUNNING, SUCCESS, FAILED or SKIPPED",
                                   st.substr(0, 40))});
      }
    }
    if (!errors.empty()) return SendError(res, 400, "invalid query", errors);
    const auto page = repo.ListLogs(q);
    json items = json::array();
    for (const auto& l : page.items)
      items.push_back(ToJson(l));
    SendJson(res, 200, {{"total", page.total}, {"items", items}});
  });
  s.Get(R"(/api/v1/logs/([^/]+))", [&repo](const httplib::Request& req, httplib::Response& res) {
    const auto id = ParseId<std::int64_t>(req.matches[1]);
    const auto l = id ? repo.GetLog(*id) : std::nullopt;
    if (!l)
      return SendError(res, 404,
                       fmt::format("log '{}' not found", std::string(req.matches[1]).substr(0, 40)));
    SendJson(res, 200, ToJson(*l));
  });
}

}  // namespace cronwheel::admin
