// JobCatalog's cache (dispatch/job_catalog.hpp) over an in-memory source: what it loads once, what a change
// drops, and how it reads the registry (live executors only, addresses normalised, sorted, unique). The
// LISTEN of PgCatalogSource is exercised by every pg and e2e test that changes a job.
#include "admin/dispatch/job_catalog.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cwtest/fake_clock.hpp"
#include "cwtest/memory_catalog_source.hpp"

namespace {

using namespace cronwheel::admin;
using ::testing::ElementsAre;

constexpr std::int64_t kT0 = 1767225600000;

Job JobOf(int id, std::string handler) {
  Job j;
  j.id = id;
  j.group_id = 1;
  j.handler = std::move(handler);
  return j;
}

TEST(JobCatalog, AJobIsLoadedOnceAndLoadedAgainOnlyAfterItChanged) {
  cwtest::FakeClock clock(kT0);
  cwtest::MemoryCatalogSource source;
  source.PutJob(JobOf(1, "before"));
  source.PutJob(JobOf(2, "other"));
  JobCatalog catalog({.listen = true}, clock, source);
  // The listener runs on a thread of its own and clears the cache when it starts listening; once it
  // listens, a change is delivered on the thread that announces it.
  source.WaitUntilListening();
  const int both[] = {1, 2, 1};
  catalog.Prefetch(both);
  EXPECT_EQ(source.job_loads(), 1) << "one load for the batch";
  EXPECT_EQ(catalog.GetJob(1)->handler, "before");
  EXPECT_EQ(catalog.GetJob(2)->handler, "other");
  EXPECT_EQ(source.job_loads(), 1) << "served from the cache";
  source.PutJob(JobOf(1, "after"));
  EXPECT_EQ(catalog.GetJob(1)->handler, "before") << "no change announced yet";
  source.Change("job", 1);
  EXPECT_EQ(catalog.GetJob(1)->handler, "after");
  EXPECT_EQ(catalog.GetJob(99), nullptr);
}

TEST(JobCatalog, TheRegistryHoldsLiveExecutorsNormalisedSortedAndOnce) {
  cwtest::FakeClock clock(kT0);
  cwtest::MemoryCatalogSource source;
  source.Register("app", "http://10.0.0.2:9999", kT0);
  source.Register("app", "http://10.0.0.1:9999/", kT0 - 1000);
  source.Register("app", "http://10.0.0.3:9999/", kT0 - 91'000);  // silent for longer than 90 s
  JobCatalog catalog({.listen = false}, clock, source);
  catalog.RefreshRegistry();
  JobGroup group;
  group.app_name = "app";
  EXPECT_THAT(catalog.Addresses(group), ElementsAre("http://10.0.0.1:9999/", "http://10.0.0.2:9999/"));
  group.address_type = AddressType::kManual;
  group.addresses = {"http://b:1", "http://a:1/", "http://b:1/"};
  EXPECT_THAT(catalog.Addresses(group), ElementsAre("http://a:1/", "http://b:1/"));
}

}  // namespace
