#include "callback_sender.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cronwheel/mutex.hpp"
#include "posix_util.hpp"

namespace cronwheel::executor {
namespace {

std::string Dump(const std::vector<xxljob::HandleCallbackParam>& batch) {
  return xxljob::ToJson(batch).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// About the bytes a callback adds to a batch's body.
std::size_t BodyBytes(const xxljob::HandleCallbackParam& cb) {
  constexpr std::size_t kFields = 160;  // logId, logDateTim, handleCode, handleStartTime, names, quotes
  return kFields + cb.handle_msg.size() + (cb.job_log ? cb.job_log->content.size() : 0) +
         (cb.output ? 256 : 0);
}

bool HasJobLogs(const std::vector<xxljob::HandleCallbackParam>& batch) {
  return std::any_of(batch.begin(), batch.end(), [](const auto& cb) { return cb.job_log.has_value(); });
}

}  // namespace

CallbackSender::CallbackSender(Settings settings, AdminClient& admin, JobLogFiles* logs,
                               ringwheel::Clock& clock)
    : settings_(std::move(settings)), admin_(admin), logs_(logs), clock_(clock) {
  settings_.batch_size = std::max<std::size_t>(settings_.batch_size, 1);
}

CallbackSender::~CallbackSender() {
  Stop();
}

void CallbackSender::Start() {
  MakePrivateDir(settings_.spool_dir);
  sender_ = std::jthread([this](const std::stop_token& st) { SendLoop(st); });
  retrier_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Settings{
          .name = "callback retry",
          .interval = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.retry_interval)},
      clock_, [this] { RetryRound(); });
}

void CallbackSender::Push(xxljob::HandleCallbackParam callback) {
  {
    cronwheel::MutexLock lock(mu_);
    if (!stopped_) {
      queue_.push_back(std::move(callback));
      cv_.notify_all();
      return;
    }
  }
  SendOrSpool({std::move(callback)}, false);
}

std::size_t CallbackSender::pending() {
  cronwheel::MutexLock lock(mu_);
  return queue_.size();
}

void CallbackSender::Stop() {
  retrier_.reset();
  if (sender_.joinable()) {
    sender_.request_stop();
    sender_.join();
  }
  std::deque<xxljob::HandleCallbackParam> rest;
  {
    cronwheel::MutexLock lock(mu_);
    stopped_ = true;
    rest.swap(queue_);
    cv_.notify_all();
  }
  while (!rest.empty()) {  // pushed after the sender's last look, or never started
    SendOrSpool(TakeBatch(rest), false);
  }
}

std::vector<xxljob::HandleCallbackParam> CallbackSender::TakeBatch(
    std::deque<xxljob::HandleCallbackParam>& queue) const {
  std::vector<xxljob::HandleCallbackParam> batch;
  std::size_t bytes = 0;
  while (!queue.empty() && batch.size() < settings_.batch_size) {
    const auto next = BodyBytes(queue.front());
    if (!batch.empty() && bytes + next > settings_.batch_bytes) break;
    bytes += next;
    batch.push_back(std::move(queue.front()));
    queue.pop_front();
  }
  return batch;
}

AdminReply CallbackSender::CallAdmin(std::vector<xxljob::HandleCallbackParam>& batch, bool& dropped) {
  dropped = false;
  auto reply = admin_.Call("callback", xxljob::ToJson(batch));
  if (reply.ok || !reply.too_large || !HasJobLogs(batch)) return reply;
  // The results must get through: without the logs, which the admin reads from /log instead.
  spdlog::warn(
      "callback: an admin refused {} callbacks with their job logs as too large ({}); sending them "
      "without",
      batch.size(), reply.detail);
  for (auto& cb : batch)
    cb.job_log.reset();
  dropped = true;
  return admin_.Call("callback", xxljob::ToJson(batch));
}

bool CallbackSender::AwaitIdle(std::chrono::milliseconds timeout) {
  cronwheel::MutexLock lock(mu_);
  return cv_.wait_for(lock.native(), timeout,
                      [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !sending_; });
}

bool CallbackSender::AwaitRetryRounds(std::uint64_t n, std::chrono::milliseconds timeout) {
  cronwheel::MutexLock lock(mu_);
  return cv_.wait_for(lock.native(), timeout,
                      [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return retry_rounds_ >= n; });
}

std::vector<std::filesystem::path> CallbackSender::SpoolFiles() const {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(settings_.spool_dir, ec)) {
    const auto name = e.path().filename().string();
    if (name.starts_with("callback-") && name.ends_with(".json")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void CallbackSender::SendLoop(const std::stop_token& stop) {
  bool drain_failed = false;  // while stopping, once a batch failed the rest go straight to the spool
  cronwheel::MutexLock lock(mu_);
  while (true) {
    cv_.wait(lock.native(), stop, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); });
    if (queue_.empty()) break;  // stopped, and everything queued has been handled
    auto batch = TakeBatch(queue_);
    sending_ = true;
    lock.Unlock();
    const bool try_send = !(stop.stop_requested() && drain_failed);
    bool ok = false;
    try {
      ok = SendOrSpool(std::move(batch), try_send);
    } catch (const std::exception& e) {
      spdlog::error("callback: {}", e.what());
    }
    if (!ok && stop.stop_requested()) drain_failed = true;
    lock.Lock();
    sending_ = false;
    cv_.notify_all();
  }
}

void CallbackSender::RetryRound() {
  try {
    RetrySpool();
  } catch (const std::exception& e) {
    spdlog::error("callback retry: {}", e.what());
  }
  cronwheel::MutexLock lock(mu_);
  ++retry_rounds_;
  cv_.notify_all();
}

bool CallbackSender::SendOrSpool(std::vector<xxljob::HandleCallbackParam> batch, bool try_send) {
  if (batch.empty()) return true;
  if (!admin_.HasAdmins()) {
    if (!warned_no_admin_.exchange(true)) {
      spdlog::warn("callback: no admin address is configured; results are not reported");
    }
    LogEach(batch, "----------- job callback skipped: no admin address is configured.");
    return true;
  }
  std::string why = "not sent: the executor is stopping and an admin already failed";
  if (try_send) {
    bool dropped = false;
    const auto reply = CallAdmin(batch, dropped);
    if (reply.ok) {
      LogEach(batch, dropped
                         ? "----------- job callback finish (without the job log, which the admin refused "
                           "as too large: it reads the log from /log)."
                         : "----------- job callback finish.");
      return true;
    }
    why = reply.detail;
  }
  Spool(batch, why);
  return false;
}

void CallbackSender::Spool(const std::vector<xxljob::HandleCallbackParam>& batch, const std::string& why) {
  const std::string name =
      fmt::format("callback-{}-{}-{}.json", batch.front().log_id, batch.size(), RandomHex());
  std::string err;
  try {
    MakePrivateDir(settings_.spool_dir);
    err = std::string(WriteFileAtomically(settings_.spool_dir / name, Dump(batch), 0600).message());
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!err.empty()) {
    spdlog::error("callback: {} callbacks could not be sent ({}) nor spooled ({}): they are lost",
                  batch.size(), why, err);
    LogEach(batch,
            fmt::format("----------- job callback fail, callbackResult: {}; spooling failed: {}", why, err));
    return;
  }
  spooled_.fetch_add(batch.size(), std::memory_order_relaxed);
  spdlog::warn("callback: {} callbacks not accepted ({}); spooled to {} for retry", batch.size(), why, name);
  LogEach(batch,
          fmt::format("----------- job callback fail, callbackResult: {}; kept in callbacklogs/{} for retry",
                      why, name));
}

void CallbackSender::RetrySpool() {
  if (!admin_.HasAdmins()) return;
  for (const auto& file : SpoolFiles()) {
    const absl::StatusOr<std::string> body = ReadFile(file);
    if (!body.ok()) {
      if (std::filesystem::exists(file)) {
        spdlog::error("callback retry: cannot read {}: {}", file.string(),
                      std::string(body.status().message()));
      }
      continue;
    }
    auto batch = xxljob::ParseCallbackList(*body);
    if (!batch.ok()) {
      auto bad = file;
      bad += ".bad";
      std::error_code ec;
      std::filesystem::rename(file, bad, ec);
      spdlog::error("callback retry: {} is not a callback list ({}); renamed to {}", file.string(),
                    std::string(batch.status().message()), bad.filename().string());
      continue;
    }
    bool dropped = false;
    const auto reply = CallAdmin(*batch, dropped);
    if (!reply.ok) {
      spdlog::warn("callback retry: {} still not accepted ({}); next try in {} s", file.filename().string(),
                   reply.detail, settings_.retry_interval.count());
      return;
    }
    std::error_code ec;
    std::filesystem::remove(file, ec);
    spdlog::info("callback retry: {} callbacks from {} accepted by {}", batch->size(),
                 file.filename().string(), reply.detail);
    LogEach(*batch, "----------- job callback finish (retried from the spool).");
  }
}

void CallbackSender::LogEach(const std::vector<xxljob::HandleCallbackParam>& batch, const std::string& line) {
  if (logs_ == nullptr) return;
  std::vector<JobLogFiles::Target> fires;
  fires.reserve(batch.size());
  for (const auto& cb : batch)
    fires.push_back(JobLogFiles::Target{cb.log_date_tim, cb.log_id});
  logs_->AppendEach(fires, line);
}

}  // namespace cronwheel::executor
