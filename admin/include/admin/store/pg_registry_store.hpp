#pragma once
// RegistryStore (results/registry_store.hpp) on PostgreSQL: the one writer of executor_registry (the
// executors' heartbeats, XXL-JOB's xxl_job_registry); it reads job_group's access tokens, which
// store/pg_group_store.cpp writes.
//
// Thread-safety: safe from any thread (a pooled connection per call).

#include "admin/results/registry_store.hpp"

namespace cronwheel::admin {

class PgPool;

class PgRegistryStore final : public RegistryStore {
 public:
  explicit PgRegistryStore(PgPool& pool) : pool_(pool) {}

  void Upsert(const RegistryEntry& entry, std::int64_t now_ms) override;
  void Remove(const RegistryEntry& entry) override;
  std::size_t RemoveNotRenewedSince(std::int64_t updated_before_ms) override;
  std::optional<std::string> GroupToken(const std::string& app_name) override;
  std::vector<std::string> GroupTokens() override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin
