#pragma once
// The rules of alert channels (table alert_channel, sql/011_alert_channels.sql;
// admin/model/alert_channel.hpp): creation, updates and deletion, over an AlertChannelStore
// (catalog/alert_channel_store.hpp) that holds only statements. The REST API reads and checks a channel's
// fields first (ReadAlertChannelBody, CheckAlertChannel with the operator's webhook_allow, which the API
// holds); here is what needs the stored state: names are unique, and a deleted channel leaves every job and
// group that named it, in the same transaction, so no job or group names a channel that is gone.
//
// Time: now is read from the injected Clock once per call. Thread-safety: safe from any thread (the store's
// transactions serialise what must be). Errors: expected outcomes are Results (kInvalid with fields,
// kNotFound); database failures throw, and a refused call changes nothing.

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/alert_channel_store.hpp"
#include "admin/model/alert_channel.hpp"
#include "admin/model/result.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class AlertChannelService {
 public:
  // Edits a channel in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(AlertChannel&)>;

  AlertChannelService(ringwheel::Clock& clock, AlertChannelStore& store) : clock_(clock), store_(store) {}

  // `channel` already read and checked (ReadAlertChannelBody). kInvalid (code "exists" on name) when its
  // name is taken.
  Result<AlertChannel> Create(const AlertChannel& channel);
  // Applies `edit` to the stored channel (locked for update) and saves it. kNotFound, kInvalid as Create, or
  // the error `edit` returned.
  Result<AlertChannel> Update(int id, const Edit& edit);
  // Deletes it and takes it out of every job's and group's alert_channel_ids. kNotFound.
  Result<void> Delete(int id);
  std::optional<AlertChannel> Get(int id);
  // By name.
  std::vector<AlertChannel> List();
  // The newest `limit` alerts (1 or more), of job `job_id` when given, of jobs of `group_ids` when given
  // (nullopt = any, including deleted jobs'), newest first.
  std::vector<AlertEntry> ListAlerts(std::optional<int> job_id,
                                     const std::optional<std::vector<int>>& group_ids, int limit);

 private:
  // Runs `body` in one transaction of the store, committed when it returns a value (not an error).
  template <class T, class F>
  Result<T> InTransaction(F&& body);

  ringwheel::Clock& clock_;
  AlertChannelStore& store_;
};

}  // namespace cronwheel::admin
