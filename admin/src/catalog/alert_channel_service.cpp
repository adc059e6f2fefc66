#include "admin/catalog/alert_channel_service.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace cronwheel::admin {
namespace {

FieldError NameTaken(const std::string& name) {
  return {"name", fmt::format("a channel named '{}' exists already", name), "exists", {{"value", name}}};
}

Error NoChannel(int id) {
  return Error::NotFound(fmt::format("alert channel {} not found", id));
}

}  // namespace

template <class T, class F>
Result<T> AlertChannelService::InTransaction(F&& body) {
  std::optional<Result<T>> out;
  store_.Transact([&](AlertChannelStore::Tx& tx) {
    out.emplace(body(tx));
    return out->ok();
  });
  return *std::move(out);
}

Result<AlertChannel> AlertChannelService::Create(const AlertChannel& channel) {
  return InTransaction<AlertChannel>([&](AlertChannelStore::Tx& tx) -> Result<AlertChannel> {
    if (tx.NameTaken(channel.name, 0))
      return Error::Invalid("the alert channel is not valid", {NameTaken(channel.name)});
    return tx.InsertChannel(channel, clock_.NowMs());
  });
}

Result<AlertChannel> AlertChannelService::Update(int id, const Edit& edit) {
  return InTransaction<AlertChannel>([&](AlertChannelStore::Tx& tx) -> Result<AlertChannel> {
    auto channel = tx.LockChannel(id);
    if (!channel) return NoChannel(id);
    if (auto edited = edit(*channel); !edited) return edited.error();
    channel->id = id;
    if (tx.NameTaken(channel->name, id))
      return Error::Invalid("the alert channel is not valid", {NameTaken(channel->name)});
    return tx.UpdateChannel(*channel, clock_.NowMs());
  });
}

Result<void> AlertChannelService::Delete(int id) {
  auto deleted = InTransaction<bool>([&](AlertChannelStore::Tx& tx) -> Result<bool> {
    if (!tx.DeleteChannel(id)) return NoChannel(id);
    // The jobs' and groups' lists lose it in the same transaction: none names a channel that is gone.
    tx.RemoveFromJobs(id);
    tx.RemoveFromGroups(id);
    return true;
  });
  if (!deleted) return deleted.error();
  return {};
}

std::optional<AlertChannel> AlertChannelService::Get(int id) {
  return store_.Get(id);
}

std::vector<AlertChannel> AlertChannelService::List() {
  return store_.List();
}

std::vector<AlertEntry> AlertChannelService::ListAlerts(std::optional<int> job_id,
                                                        const std::optional<std::vector<int>>& group_ids,
                                                        int limit) {
  return store_.ListAlerts(job_id, group_ids, limit);
}

}  // namespace cronwheel::admin
