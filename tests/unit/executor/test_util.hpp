#pragma once
// Helpers for the executor's unit tests: a temporary directory, a recording callback sink and a scripted
// admin client. They synchronise on condition variables (bounded real-time waits), never on sleeps.

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "admin_client.hpp"
#include "job_dispatcher.hpp"
#include "xxljob/protocol.hpp"

namespace cwtest {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cw-executor-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets the process's umask to 0 for one test (the most permissive: a mode the executor asks for is what a
// file gets) and restores it after.
class ZeroUmask {
 public:
  ZeroUmask() : old_(::umask(0)) {}
  ~ZeroUmask() { ::umask(old_); }
  ZeroUmask(const ZeroUmask&) = delete;
  ZeroUmask& operator=(const ZeroUmask&) = delete;

 private:
  mode_t old_;
};

// Every file and folder under `root` (itself included) that its group or others may read, write or enter,
// as "path mode" lines; empty when all are the owner's only.
inline std::vector<std::string> NotOwnerOnly(const std::filesystem::path& root) {
  std::vector<std::string> found;
  const auto check = [&](const std::filesystem::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;
    if ((st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      found.push_back(p.string() + " " + mode);
    }
  };
  check(root);
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    check(e.path());
  return found;
}

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Records callbacks; WaitFor(n) blocks until n have arrived.
class RecordingSink final : public cronwheel::executor::CallbackSink {
 public:
  void Push(cronwheel::xxljob::HandleCallbackParam cb) override {
    std::lock_guard lock(mu_);
    got_.push_back(std::move(cb));
    cv_.notify_all();
  }
  bool WaitFor(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return got_.size() >= n; });
  }
  std::vector<cronwheel::xxljob::HandleCallbackParam> Get() {
    std::lock_guard lock(mu_);
    return got_;
  }
  // The callback for `log_id` (code -1 if none).
  cronwheel::xxljob::HandleCallbackParam For(std::int64_t log_id) {
    std::lock_guard lock(mu_);
    for (const auto& c : got_) {
      if (c.log_id == log_id) return c;
    }
    return {log_id, 0, -1, ""};
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<cronwheel::xxljob::HandleCallbackParam> got_;
};

// An AdminClient whose answer the test sets; records every call.
class ScriptedAdmin final : public cronwheel::executor::AdminClient {
 public:
  struct Request {
    std::string api;
    nlohmann::json body;
  };
  cronwheel::executor::AdminReply Call(std::string_view api, const nlohmann::json& body) override {
    std::lock_guard lock(mu_);
    calls_.push_back({std::string(api), body});
    if (api == "callback" && refuse_logs_) {
      for (const auto& cb : body) {
        if (cb.contains("jobLog")) {
          cv_.notify_all();
          return {.ok = false, .detail = "HTTP status 413", .too_large = true};
        }
      }
    }
    if (api == "callback" && up_) {
      for (const auto& cb : body)
        accepted_.push_back(cb.at("logId").get<std::int64_t>());
    }
    cv_.notify_all();
    return up_ ? cronwheel::executor::AdminReply{true, "fake"}
               : cronwheel::executor::AdminReply{false, "admin down"};
  }
  [[nodiscard]] bool HasAdmins() const override { return true; }

  void SetUp(bool up) {
    std::lock_guard lock(mu_);
    up_ = up;
  }
  // Callback bodies carrying a job log are refused as too large (HTTP 413), as by an admin's body limit.
  void SetRefuseLogs(bool refuse) {
    std::lock_guard lock(mu_);
    refuse_logs_ = refuse;
  }
  std::vector<Request> Calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  // Log ids in accepted callback batches, in arrival order.
  std::vector<std::int64_t> Accepted() {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  bool WaitAccepted(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return accepted_.size() >= n; });
  }
  bool WaitCalls(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return calls_.size() >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool up_ = true;
  bool refuse_logs_ = false;
  std::vector<Request> calls_;
  std::vector<std::int64_t> accepted_;
};

}  // namespace cwtest

// The names the executor's unit tests share: `using namespace cwtest::executor_test;` at the top of a test
// file brings the executor's and the protocol's types, the chrono literals, HasSubstr, and kDay.
namespace cwtest::executor_test {
using namespace cronwheel::executor;
using namespace cronwheel::xxljob;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
// 2026-01-01T00:00:00Z in epoch milliseconds: where the tests' fake clocks start.
inline constexpr std::int64_t kDay = 1767225600000;
}  // namespace cwtest::executor_test
