// The console's static files (web/), and the security headers of every response of the admin's server.
#include <fstream>
#include <sstream>

#include "api/routes.hpp"
#include "embedded.hpp"

namespace cronwheel::admin::api {
namespace {

// Pages may load only what this server serves: no inline script or style, no framing, no plug-ins.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

bool SafePath(const std::string& path) {
  if (path.empty() || path.size() > 200 || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const auto seg = path.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == ".." || seg.front() == '.') return false;
    for (char c : seg) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

const char* MimeType(const std::string& path) {
  const auto dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js" || ext == "mjs") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "json") return "application/json";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "ico") return "image/x-icon";
  return "text/plain; charset=utf-8";
}

// FNV-1a: a validator for If-None-Match, not a security measure.
std::string ETag(const std::string& data) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char ch : data) {
    const auto c = static_cast<unsigned char>(ch);
    h ^= c;
    h *= 1099511628211ULL;
  }
  char out[24];
  std::snprintf(out, sizeof out, "\"%016llx\"", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace

std::optional<std::string> WebAsset(const std::string& web_dir, const std::string& path) {
  if (!SafePath(path)) return std::nullopt;
  if (!web_dir.empty()) {
    std::ifstream in(web_dir + "/" + path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  for (const auto& f : EmbeddedWebFiles()) {
    if (f.path == path) return std::string(f.data);
  }
  return std::nullopt;
}

void RegisterWebAssets(net::HttpServer& server, const std::string& web_dir) {
  server.SetPostRoutingHandler([](const net::Request& req, net::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    if (req.path.rfind("/api/v1/", 0) == 0) res.set_header("Cache-Control", "no-store");
  });
  // Everything under "/" but the APIs. The console routes by the URL fragment (#/jobs), so every page is
  // index.html and there is no server-side fall-back.
  server.Get(R"(/(?!api/|xxl-job-admin/)(.*))", [web_dir](const net::Request& req, net::Response& res) {
    std::string path = req.matches[1];
    if (path.empty()) path = "index.html";
    const auto data = WebAsset(web_dir, path);
    if (!data) return SendError(res, 404, fmt::format("no such page: {}", req.path.substr(0, 200)));
    const auto tag = ETag(*data);
    res.set_header("ETag", tag);
    res.set_header("Cache-Control", "no-cache");  // revalidate: the files change with the binary
    if (req.get_header_value("If-None-Match") == tag) {
      res.status = 304;
      return;
    }
    res.set_content(*data, MimeType(path));
  });
}

}  // namespace cronwheel::admin::api
