#include "admin/results/output_puller.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "cronwheel/head_tail.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin {
namespace {

// Pages of one log at most, whatever the executor answers (an executor answering pages of one line).
constexpr int kMaxPages = 100'000;

// The executor's answer to /log for a file it does not have (XXL-JOB and cronwheel-executor).
bool NoSuchLog(const xxljob::LogResult& r) {
  return r.is_end && r.to_line_num == 0 && r.log_content.starts_with("readLog fail");
}

}  // namespace

ArchivedLog KeepLog(std::string content, std::int64_t log_bytes, std::int64_t left_out_before,
                    std::size_t max_bytes) {
  content = WithoutNulBytes(std::move(content));  // PostgreSQL's text holds no NUL byte
  ArchivedLog out;
  out.log_bytes = std::max<std::int64_t>(log_bytes, static_cast<std::int64_t>(content.size()));
  out.left_out = left_out_before;
  // What the sender kept within the same cap carries its marker line beyond it: not cut again.
  if (content.size() <= std::max(max_bytes, HeadAndTail::kMinCap) + kMarkerBytes) {
    out.content = std::move(content);
  } else {
    auto kept = KeepHeadAndTail(content, max_bytes);
    out.content = std::move(kept.text);
    out.left_out += static_cast<std::int64_t>(kept.left_out);
  }
  return out;
}

PullResult PullLog(ExecutorClient& client, const std::string& token, const OutputPull& pull,
                   std::size_t max_bytes, std::size_t max_transfer) {
  PullResult out;
  if (pull.executor_address.empty()) {
    out.error = "the fire has no executor address (it was never accepted by one): there is no log to read";
    out.final = true;
    return out;
  }
  HeadAndTail keep(max_bytes);
  int from = 1;
  bool cut_short = false;
  for (int page = 0; page < kMaxPages; ++page) {
    const auto env = client.Log(
        pull.executor_address, token,
        xxljob::LogParam{.log_date_tim = pull.log_date_ms, .log_id = pull.log_id, .from_line_num = from});
    if (!env.ok()) {
      out.error = fmt::format("the executor {} did not return the log: {}", pull.executor_address,
                              env.msg.value_or("no message"));
      return out;
    }
    const auto r = xxljob::ParseLogResult(env.content);
    if (!r.ok()) {
      out.error = fmt::format("the executor {} returned the log in a form not understood: {}",
                              pull.executor_address, std::string(r.status().message()));
      return out;
    }
    if (page == 0 && NoSuchLog(*r)) {
      out.error =
          fmt::format("the executor {} has no log of this fire: {}", pull.executor_address, r->log_content);
      out.final = true;
      return out;
    }
    keep.Append(r->log_content);
    // The end: the executor says so, or nothing new came (the fire has ended: no line is still to come).
    if (r->is_end || r->log_content.empty() || r->to_line_num < from) break;
    from = r->to_line_num + 1;
    if (keep.size() >= max_transfer) {
      cut_short = true;
      break;
    }
  }
  const auto read = static_cast<std::int64_t>(keep.size());
  auto kept = keep.Take();
  out.log = KeepLog(std::move(kept.text), read, static_cast<std::int64_t>(kept.left_out), max_bytes);
  if (cut_short) {
    out.log.content += fmt::format(
        "----------- the rest of this log was not read: the admin reads at most {} bytes of a fire's log "
        "from "
        "its executor -----------\n",
        max_transfer);
  }
  out.ok = true;
  return out;
}

OutputPuller::OutputPuller(Settings settings, ringwheel::Clock& clock, ResultStore& store,
                           ExecutorClient& client, std::string global_token)
    : settings_(settings),
      clock_(clock),
      store_(store),
      client_(client),
      global_token_(std::move(global_token)) {
  settings_.concurrency = std::max(settings_.concurrency, 1);
  settings_.batch = std::max(settings_.batch, 1);
  settings_.max_attempts = std::max(settings_.max_attempts, 1);
  settings_.transfer_factor = std::max<std::size_t>(settings_.transfer_factor, 1);
}

std::int64_t OutputPuller::RetryAt(int attempts, std::int64_t now_ms) const {
  if (attempts >= settings_.max_attempts) return 0;
  std::int64_t delay = settings_.first_retry.count();
  for (int i = 1; i < attempts; ++i)
    delay *= 3;
  return now_ms + delay;
}

PulledOutput OutputPuller::Pull(const OutputPull& pull, std::int64_t now_ms) {
  PulledOutput out{.log_id = pull.log_id, .scheduled_ms = pull.scheduled_ms};
  auto r = PullLog(client_, pull.group_token.value_or(global_token_), pull, settings_.max_bytes,
                   settings_.max_bytes * settings_.transfer_factor);
  if (r.ok) {
    (r.log.left_out > 0 ? truncated_ : archived_).fetch_add(1, std::memory_order_relaxed);
    out.log = std::move(r.log);
    return out;
  }
  out.retry_at_ms = r.final ? 0 : RetryAt(pull.attempts, now_ms);
  if (out.retry_at_ms > 0) {
    out.error = std::move(r.error);
    retried_.fetch_add(1, std::memory_order_relaxed);
  } else {
    out.error =
        r.final ? std::move(r.error) : fmt::format("{} (after {} attempt(s))", r.error, pull.attempts);
    failed_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("fire {}: its output could not be archived: {}", pull.log_id, out.error);
  }
  return out;
}

int OutputPuller::RunOnce() {
  int handled = 0;
  for (;;) {
    const auto now = clock_.NowMs();
    const auto claimed = store_.ClaimOutputPulls(now, settings_.lease.count(), settings_.batch);
    if (claimed.empty()) break;
    std::vector<PulledOutput> done(claimed.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (auto i = next.fetch_add(1); i < claimed.size(); i = next.fetch_add(1))
        done[i] = Pull(claimed[i], now);
    };
    {
      std::vector<std::jthread> threads;
      const auto n = std::min<std::size_t>(static_cast<std::size_t>(settings_.concurrency), claimed.size());
      for (std::size_t t = 1; t < n; ++t)
        threads.emplace_back(work);
      work();  // this thread is one of them
    }
    store_.FinishOutputPulls(done, clock_.NowMs());
    handled += static_cast<int>(claimed.size());
    if (claimed.size() < static_cast<std::size_t>(settings_.batch)) break;
  }
  return handled;
}

OutputPuller::Stats OutputPuller::stats() const {
  return {.archived = archived_.load(std::memory_order_relaxed),
          .truncated = truncated_.load(std::memory_order_relaxed),
          .retried = retried_.load(std::memory_order_relaxed),
          .failed = failed_.load(std::memory_order_relaxed)};
}

}  // namespace cronwheel::admin
