#pragma once
// Registration of /api/v1 routes by their OpenAPI path template ("/api/v1/jobs/{id}/start"): the
// template is turned into the regular expression cpp-httplib matches ("{name}" -> one path segment) and
// recorded, so the routes served and the routes documented can be compared by a test.
#include <httplib.h>

#include <optional>
#include <string>
#include <vector>

#include "admin/api_server.hpp"
#include "admin/console.hpp"

namespace cronwheel::admin {

class Routes {
 public:
  Routes(httplib::Server& server, std::vector<RouteInfo>* record) : server_(server), record_(record) {}

  void Get(const std::string& path, httplib::Server::Handler h) { Add("GET", path, std::move(h)); }
  void Post(const std::string& path, httplib::Server::Handler h) { Add("POST", path, std::move(h)); }
  void Put(const std::string& path, httplib::Server::Handler h) { Add("PUT", path, std::move(h)); }
  void Delete(const std::string& path, httplib::Server::Handler h) { Add("DELETE", path, std::move(h)); }

  // "/api/v1/jobs/{id}" -> "/api/v1/jobs/([^/]+)"; '.' is literal.
  static std::string Pattern(const std::string& path) {
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '{') {
        i = path.find('}', i);
        out += "([^/]+)";
      } else if (path[i] == '.') {
        out += "\\.";
      } else {
        out += path[i];
      }
    }
    return out;
  }

 private:
  void Add(const char* method, const std::string& path, httplib::Server::Handler h) {
    const auto pattern = Pattern(path);
    const std::string m = method;
    if (m == "GET") {
      server_.Get(pattern, std::move(h));
    } else if (m == "POST") {
      server_.Post(pattern, std::move(h));
    } else if (m == "PUT") {
      server_.Put(pattern, std::move(h));
    } else {
      server_.Delete(pattern, std::move(h));
    }
    if (record_ != nullptr) record_->push_back({m, path});
  }

  httplib::Server& server_;
  std::vector<RouteInfo>* record_;
};

// api_console.cpp: the console's routes (see console.hpp).
void RegisterConsoleRoutes(Routes& routes, ApiServer::Services& services, const ApiServer::Settings& settings,
                           ringwheel::Clock& clock);
// web_assets.cpp: the pages of web/ at "/" (GET only), with the security headers of every response.
void RegisterWebAssets(httplib::Server& server, const std::string& web_dir);
// The bytes of web/<path> (from `web_dir` when set, else the copy compiled in); nullopt when there is no
// such file or the path is not a plain relative one ([A-Za-z0-9._-] segments, no "..").
std::optional<std::string> WebAsset(const std::string& web_dir, const std::string& path);

}  // namespace cronwheel::admin
