#include "admin/schedule/node_lease.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cronwheel/mutex.hpp"

namespace cronwheel::admin {

int NodeLease::LockKey(std::string_view node_id) {
  std::uint32_t h = 2166136261U;  // FNV-1a
  for (const char ch : node_id) {
    const auto c = static_cast<unsigned char>(ch);
    h ^= c;
    h *= 16777619U;
  }
  return static_cast<int>(h & 0x7fffffffU);
}

NodeLease::NodeLease(Settings settings, ringwheel::Clock& clock, LeaseStore& store, OnRecovered on_recovered)
    : settings_(std::move(settings)),
      clock_(clock),
      store_(store),
      on_recovered_(std::move(on_recovered)),
      lock_key_(LockKey(settings_.node_id)) {}

NodeLease::~NodeLease() {
  Stop();
  try {
    store_.ReleaseLock();  // as a process that ends: live nodes take its fires once its lock is gone
  } catch (const std::exception& e) {
    spdlog::warn("node {}: releasing its lock failed: {}", settings_.node_id, e.what());
  }
}

void NodeLease::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

void NodeLease::Heartbeat() {
  const auto now = clock_.NowMs();
  store_.Heartbeat(settings_.node_id, lock_key_, settings_.address, now, now + settings_.lease.count());
}

void NodeLease::TakeAll(FireOwner whose, const std::string& owner, std::vector<ClaimedFire>& out) {
  for (;;) {
    auto batch =
        store_.TakeFires(settings_.node_id, whose, owner, settings_.claim_batch, settings_.lease.count());
    const bool more = static_cast<int>(batch.size()) == settings_.claim_batch;
    std::move(batch.begin(), batch.end(), std::back_inserter(out));
    if (!more) break;
  }
}

void NodeLease::Start() {
  store_.HoldLock(settings_.node_id, lock_key_);
  Heartbeat();
  {
    cronwheel::MutexLock lock(tick_mu_);
    in_contact_since_ = clock_.SteadyNow();
  }
  // Rows a previous run of this node left pending are ours again: send or misfire them now.
  std::vector<ClaimedFire> own;
  TakeAll(FireOwner::kSelf, settings_.node_id, own);
  if (!own.empty()) {
    spdlog::info("node {}: taking back {} pending fire(s) from its previous run", settings_.node_id,
                 own.size());
    on_recovered_(std::move(own));
  }
  thread_ = std::jthread([this](const std::stop_token& st) { Loop(st); });
}

void NodeLease::Loop(const std::stop_token& stop) {
  while (clock_.WaitFor(settings_.heartbeat, stop))
    Tick();
}

void NodeLease::Tick() {
  cronwheel::MutexLock lock(tick_mu_);
  try {
    store_.HoldLock(settings_.node_id, lock_key_);
    Heartbeat();
    const auto now = clock_.SteadyNow();
    if (!in_contact_since_) in_contact_since_ = now;
    Recover(now - *in_contact_since_ >= settings_.judge_after.value_or(settings_.lease));
    failures_.Success();
  } catch (const NodeConflict& e) {
    in_contact_since_.reset();
    // The connection holding our lock broke and someone else holds it now: only possible if another
    // process uses our node id. Keep trying; log loudly.
    if (const auto n = failures_.Failure(clock_.SteadyNow())) {
      spdlog::error("{} ({} time(s) in a row)", e.what(), *n);
    }
  } catch (const std::exception& e) {
    store_.ReleaseLock();
    in_contact_since_.reset();
    if (const auto n = failures_.Failure(clock_.SteadyNow())) {
      spdlog::warn("node heartbeat failed ({} time(s) in a row), retrying: {}", *n, e.what());
    }
  }
}

void NodeLease::Recover(bool judge_peers) {
  const auto now = clock_.NowMs();
  std::vector<std::string> dead;
  if (judge_peers) dead = store_.DeadNodes(settings_.node_id, now, now - settings_.lock_grace.count());
  std::vector<ClaimedFire> recovered;
  TakeAll(FireOwner::kHandedOver, "", recovered);
  for (const auto& node : dead) {
    TakeAll(FireOwner::kDeadNode, node, recovered);
    store_.ForgetNode(node, now - 60'000);  // a node gone for a minute, once its fires are all taken
  }
  if (!recovered.empty()) {
    spdlog::info("node {}: re-owned {} pending fire(s) of {} dead node(s) / hand-overs", settings_.node_id,
                 recovered.size(), dead.size());
    on_recovered_(std::move(recovered));
  }
}

bool NodeLease::AnotherNodeAlive() {
  const auto now = clock_.NowMs();
  return store_.AnotherNodeAlive(settings_.node_id, now, now - settings_.lock_grace.count());
}

std::size_t NodeLease::HandOver(std::span<const std::int64_t> log_ids) {
  Stop();
  cronwheel::MutexLock lock(tick_mu_);
  return store_.HandOver(settings_.node_id, log_ids);
}

}  // namespace cronwheel::admin
