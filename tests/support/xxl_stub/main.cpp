// xxl-stub: an XXL-JOB-protocol executor (dialect A/B, docs/xxl-job-protocol.md §1-§3, §9) that behaves
// like the executors users run rather than like cronwheel's own: a small server on Debian's cpp-httplib 0.11
// with that library's listen backlog of 5 unless told otherwise, a handful of server threads, a short
// keep-alive timeout, and log ids de-duplicated only while queued or running (XXL-JOB's Java executor) or
// not at all. It speaks the protocol with nlohmann_json alone (not cronwheel's protocol library), so what
// the admin gets from it is what a foreign executor sends. Used by the e2e tests of how the admin opens
// and reuses connections, and by the benchmarks as the minimal executor.
//
// Options (all optional):
//   --host H / --port P          where to listen (port 0 = any free port; "listening on <port>" is printed)
//   --threads N                  server worker threads (default 8)
//   --listen-backlog N           accept queue (default 5, cpp-httplib 0.11's fixed value; another value
//                                calls listen() again on the bound socket)
//   --keep-alive-timeout-s S     idle keep-alive connections are closed after S seconds (default 2)
//   --keep-alive-max-count N     requests per connection before the server closes it (default 100; XXL-JOB's
//                                Netty server has no such cap, cpp-httplib's default is 5)
//   --dedupe running|none        refuse a log id while it is queued or running (default), or never
//   --workers N                  threads running fires (default 4); one job's fires run one at a time
//   --run-ms MS                  how long a fire runs (default 0)
//   --admin URL[,URL...]         admin base URLs: results are called back to <URL>/api/callback in batches,
//                                trying each admin in turn until one takes them (as XXL-JOB's executor does)
//   --access-token T             checked on requests (XXL-JOB-ACCESS-TOKEN) and sent on callbacks
//   --app-name A                 with --admin: registers at start and every --heartbeat-s (default 30)
//   --trace-file F               one line per /run: "<logId> <jobId> <received epoch ms> <outcome>" where
//                                outcome is accepted, duplicate, refused or invalid
//   --minimal                    the reference server of the benchmarks: /run parses the body and queues a
//                                success callback, nothing else (no job queues, no de-duplication)
// SIGTERM or SIGINT: deregister, flush callbacks and the trace, print "connections accepted: N", exit 0.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cwtest/httplib_server.hpp"

namespace {

using json = nlohmann::json;

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Envelope(int code, const std::string& msg) {
  return json{{"code", code}, {"msg", msg.empty() ? json(nullptr) : json(msg)}, {"content", nullptr}}.dump();
}

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  int threads = 8;
  int backlog = 5;
  int keep_alive_s = 2;
  int keep_alive_max = 100;
  std::string dedupe = "running";
  int workers = 4;
  int run_ms = 0;
  std::string admin;
  std::string token;
  std::string app_name;
  int heartbeat_s = 30;
  std::string trace_file;
  bool minimal = false;
};

// An admin's origin ("http://h:p") and path prefix ("" or "/xxl-job-admin"), from its base URL.
struct AdminTarget {
  std::string origin;
  std::string base;
};

std::vector<AdminTarget> AdminTargets(const std::string& list) {
  std::vector<AdminTarget> out;
  std::size_t from = 0;
  while (from < list.size()) {
    auto comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    const std::string url = list.substr(from, comma - from);
    from = comma + 1;
    if (url.empty()) continue;
    const auto scheme = url.find("://");
    const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    AdminTarget t{url.substr(0, slash), slash == std::string::npos ? "" : url.substr(slash)};
    while (!t.base.empty() && t.base.back() == '/')
      t.base.pop_back();
    out.push_back(std::move(t));
  }
  return out;
}

// The admins, with one keep-alive connection each: POSTs to <admin>/api/<api> on each admin in turn until one
// answers 200. One thread at a time.
class AdminLink {
 public:
  AdminLink(const std::string& list, const std::string& token) {
    for (auto& t : AdminTargets(list)) {
      auto client = std::make_unique<httplib::Client>(t.origin);
      client->set_keep_alive(true);
      client->set_tcp_nodelay(true);
      client->set_connection_timeout(1, 0);
      if (!token.empty()) client->set_default_headers({{"XXL-JOB-ACCESS-TOKEN", token}});
      admins_.emplace_back(std::move(t), std::move(client));
    }
  }
  bool Post(const std::string& api, const std::string& body) {
    for (auto& [target, client] : admins_) {
      const auto res = client->Post(target.base + "/api/" + api, body, "application/json");
      if (res && res->status == 200) return true;
    }
    return false;
  }

 private:
  std::vector<std::pair<AdminTarget, std::unique_ptr<httplib::Client>>> admins_;
};

struct Fire {
  std::int64_t log_id = 0;
  int job_id = 0;
  std::int64_t log_date_time = 0;
};

// Results to the admin, in batches of up to 100, from one thread over one keep-alive connection.
class Callbacks {
 public:
  explicit Callbacks(const Options& o) : o_(o) {
    if (!o.admin.empty()) thread_ = std::thread([this] { Loop(); });
  }
  ~Callbacks() { Stop(); }
  void Push(const Fire& f, int code, const std::string& msg) {
    if (o_.admin.empty()) return;
    std::lock_guard lock(mu_);
    queue_.push_back(
        {{"logId", f.log_id}, {"logDateTim", f.log_date_time}, {"handleCode", code}, {"handleMsg", msg}});
    cv_.notify_one();
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    AdminLink admins(o_.admin, o_.token);
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      json batch = json::array();
      while (!queue_.empty() && batch.size() < 100) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      lock.unlock();
      bool sent = false;
      for (int attempt = 0; attempt < 5 && !sent; ++attempt) {
        sent = admins.Post("callback", batch.dump());
        if (!sent) std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
      }
      if (!sent) std::fprintf(stderr, "xxl-stub: %zu callbacks dropped\n", batch.size());
      lock.lock();
    }
  }
  const Options& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<json> queue_;
  bool stop_ = false;
  std::thread thread_;
};

// The fires: one serial queue per job, run by a fixed pool; the log ids queued or running.
class Runner {
 public:
  Runner(const Options& o, Callbacks& callbacks) : o_(o), callbacks_(callbacks) {
    for (int i = 0; i < o.workers; ++i)
      workers_.emplace_back([this] { Work(); });
  }
  ~Runner() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_)
      w.join();
  }
  // "", or why the fire is refused.
  std::string Accept(const Fire& f, const std::string& block_strategy) {
    std::lock_guard lock(mu_);
    if (o_.dedupe == "running" && active_.contains(f.log_id)) {
      return "repeat trigger job, logId:" + std::to_string(f.log_id);
    }
    auto& job = jobs_[f.job_id];
    const bool busy = job.running || !job.queue.empty();
    if (busy && block_strategy == "DISCARD_LATER") return "block strategy effect: Discard Later";
    if (busy && block_strategy == "COVER_EARLY") {
      for (const auto& q : job.queue)
        active_.erase(q.log_id);
      job.queue.clear();
    }
    job.queue.push_back(f);
    active_.insert(f.log_id);
    if (!job.running && job.queue.size() == 1) ready_.push_back(f.job_id);
    cv_.notify_one();
    return "";
  }
  bool Busy(int job_id) {
    std::lock_guard lock(mu_);
    const auto it = jobs_.find(job_id);
    return it != jobs_.end() && (it->second.running || !it->second.queue.empty());
  }
  void Kill(int job_id) {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return;
    for (const auto& q : it->second.queue)
      active_.erase(q.log_id);
    it->second.queue.clear();
  }

 private:
  struct Job {
    bool running = false;
    std::deque<Fire> queue;
  };
  void Work() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !ready_.empty(); });
      if (ready_.empty()) return;
      const int job_id = ready_.front();
      ready_.pop_front();
      auto& job = jobs_[job_id];
      if (job.queue.empty()) continue;
      const Fire f = job.queue.front();
      job.queue.pop_front();
      job.running = true;
      lock.unlock();
      if (o_.run_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o_.run_ms));
      callbacks_.Push(f, 200, "xxl-stub: done");
      lock.lock();
      job.running = false;
      active_.erase(f.log_id);
      if (!job.queue.empty()) {
        ready_.push_back(job_id);
        cv_.notify_one();
      }
    }
  }
  const Options& o_;
  Callbacks& callbacks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, Job> jobs_;
  std::deque<int> ready_;
  std::set<std::int64_t> active_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// "<logId> <jobId> <received ms> <outcome>" lines, flushed every 100 ms and at exit.
class Trace {
 public:
  explicit Trace(const std::string& path) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "ae");
    if (file_ == nullptr) throw std::runtime_error("cannot open " + path);
    flusher_ = std::thread([this] {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; }))
        std::fflush(file_);
    });
  }
  ~Trace() {
    if (file_ == nullptr) return;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    flusher_.join();
    std::fclose(file_);
  }
  void Line(std::int64_t log_id, int job_id, const char* outcome) {
    if (file_ == nullptr) return;
    std::lock_guard lock(mu_);
    std::fprintf(file_, "%lld %d %lld %s\n", static_cast<long long>(log_id), job_id,
                 static_cast<long long>(NowMs()), outcome);
  }

 private:
  std::FILE* file_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread flusher_;
};

void Register(const Options& o, const std::string& address, const char* api) {
  if (o.admin.empty() || o.app_name.empty()) return;
  AdminLink(o.admin, o.token)
      .Post(api, json{{"registryGroup", "EXECUTOR"}, {"registryKey", o.app_name}, {"registryValue", address}}
                     .dump());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "xxl-stub: an XXL-JOB-protocol executor that behaves like the ones users run (see the source)"};
  app.add_option("--host", o.host);
  app.add_option("--port", o.port);
  app.add_option("--threads", o.threads)->check(CLI::Range(1, 4096));
  app.add_option("--listen-backlog", o.backlog)->check(CLI::Range(1, 65535));
  app.add_option("--keep-alive-timeout-s", o.keep_alive_s)->check(CLI::Range(1, 3600));
  app.add_option("--keep-alive-max-count", o.keep_alive_max)->check(CLI::Range(1, 1'000'000));
  app.add_option("--dedupe", o.dedupe)->check(CLI::IsMember({"running", "none"}));
  app.add_option("--workers", o.workers)->check(CLI::Range(1, 1024));
  app.add_option("--run-ms", o.run_ms)->check(CLI::Range(0, 3'600'000));
  app.add_option("--admin", o.admin);
  app.add_option("--access-token", o.token);
  app.add_option("--app-name", o.app_name);
  app.add_option("--heartbeat-s", o.heartbeat_s)->check(CLI::Range(1, 3600));
  app.add_option("--trace-file", o.trace_file);
  app.add_flag("--minimal", o.minimal);
  CLI11_PARSE(app, argc, argv);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Trace trace(o.trace_file);
  Callbacks callbacks(o);
  Runner runner(o, callbacks);
  // Connections are told apart by the client's port (cpp-httplib 0.11 has no accept hook).
  std::mutex ports_mu;
  std::set<int> ports;
  const auto seen = [&](const httplib::Request& req) {
    std::lock_guard lock(ports_mu);
    ports.insert(req.remote_port);
  };
  httplib::Server server;
  server.new_task_queue = [n = static_cast<std::size_t>(o.threads)] { return new httplib::ThreadPool(n); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_timeout(o.keep_alive_s);
  server.set_keep_alive_max_count(static_cast<std::size_t>(o.keep_alive_max));
  const auto authorized = [&o](const httplib::Request& req) {
    return o.token.empty() || req.get_header_value("XXL-JOB-ACCESS-TOKEN") == o.token;
  };
  server.Post("/run", [&](const httplib::Request& req, httplib::Response& res) {
    seen(req);
    json body = json::parse(req.body, nullptr, false);
    Fire f;
    if (!authorized(req) || !body.is_object() || !body.contains("logId") ||
        !body["logId"].is_number_integer() || !body.contains("jobId") || !body["jobId"].is_number_integer()) {
      trace.Line(0, 0, "invalid");
      return res.set_content(
          Envelope(500, authorized(req) ? "bad trigger param" : "The access token is wrong."),
          "text/html;charset=UTF-8");
    }
    f.log_id = body["logId"].get<std::int64_t>();
    f.job_id = body["jobId"].get<int>();
    const auto& when = body.contains("logDateTime") ? body["logDateTime"] : body["logDateTim"];
    f.log_date_time = when.is_number_integer() ? when.get<std::int64_t>() : 0;
    if (o.minimal) {
      trace.Line(f.log_id, f.job_id, "accepted");
      callbacks.Push(f, 200, "");
      return res.set_content(Envelope(200, ""), "text/html;charset=UTF-8");
    }
    const auto why = runner.Accept(f, body.value("executorBlockStrategy", std::string()));
    trace.Line(f.log_id, f.job_id,
               why.empty() ? "accepted" : (why.starts_with("repeat") ? "duplicate" : "refused"));
    res.set_content(Envelope(why.empty() ? 200 : 500, why), "text/html;charset=UTF-8");
  });
  server.Post("/beat", [&](const httplib::Request& req, httplib::Response& res) {
    seen(req);
    res.set_content(authorized(req) ? Envelope(200, "") : Envelope(500, "The access token is wrong."),
                    "text/html;charset=UTF-8");
  });
  server.Post("/idleBeat", [&](const httplib::Request& req, httplib::Response& res) {
    const auto body = json::parse(req.body, nullptr, false);
    const int job = body.is_object() ? body.value("jobId", 0) : 0;
    res.set_content(
        runner.Busy(job) ? Envelope(500, "job thread is running or has trigger queue.") : Envelope(200, ""),
        "text/html;charset=UTF-8");
  });
  server.Post("/kill", [&](const httplib::Request& req, httplib::Response& res) {
    const auto body = json::parse(req.body, nullptr, false);
    runner.Kill(body.is_object() ? body.value("jobId", 0) : 0);
    res.set_content(Envelope(200, ""), "text/html;charset=UTF-8");
  });
  server.Post("/log", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        json{{"code", 200},
             {"msg", nullptr},
             {"content", {{"fromLineNum", 1}, {"toLineNum", 0}, {"logContent", ""}, {"isEnd", true}}}}
            .dump(),
        "text/html;charset=UTF-8");
  });

  cwtest::ServerThread listener(server, o.host, o.port, o.backlog == 5 ? 0 : o.backlog);
  const std::string address = "http://" + o.host + ":" + std::to_string(listener.port()) + "/";
  std::printf("listening on %d\n", listener.port());
  std::fflush(stdout);
  Register(o, address, "registry");
  std::thread beats([&] {
    timespec wait{o.heartbeat_s, 0};
    siginfo_t info;
    while (sigtimedwait(&signals, &info, &wait) < 0)
      Register(o, address, "registry");
  });
  beats.join();  // a signal arrived
  Register(o, address, "registryRemove");
  listener.Stop();
  callbacks.Stop();
  std::printf("connections accepted: %zu\n", ports.size());
  return 0;
}
