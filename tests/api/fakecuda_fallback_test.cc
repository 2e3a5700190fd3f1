// Copyright 2026 The cuhal Authors.
// The generated fallbacks inside cuhal::fakecuda (linked statically, no drop-in): the table
// cuGetProcAddress consults (fakecuda/entry/fallback.h) is the build's list of cuda.h and
// cudaProfiler.h (${CMAKE_BINARY_DIR}/api/cuda_modelled.txt) row for row, the in-process
// cuGetProcAddress resolves every plain name, and a fallback answers through the entry prologue:
// counted and logged by the fault injector under its plain name, failed by a fault rule, refused
// before cuInit and with no driver installed, CUDA_ERROR_NOT_SUPPORTED otherwise.
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fakecuda/entry/fallback.h"
#include "fakecuda/fake_driver.h"

namespace fakecuda {
namespace {

struct ListedRow {
  std::string symbol;
  std::string kind;
  std::string plain;
  std::string status;
};

const std::string kModelledList = CUHAL_API_DIR "/cuda_modelled.txt";

std::vector<ListedRow> ReadModelled() {
  std::vector<ListedRow> rows;
  std::ifstream in(kModelledList);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ListedRow row;
    if (fields >> row.symbol >> row.kind >> row.plain >> row.status) rows.push_back(row);
  }
  return rows;
}

const char* KindName(ApiKind kind) {
  switch (kind) {
    case ApiKind::k_current:
      return "current";
    case ApiKind::k_per_thread:
      return "per_thread";
    case ApiKind::k_older:
      return "older";
  }
  return "?";
}

using Fallback = CUresult (*)();

Fallback AsFallback(void (*address)()) {
  Fallback fn = nullptr;
  std::memcpy(&fn, &address, sizeof(fn));
  return fn;
}

// The first fallback of the table, which the tests below call: a current form if one is left,
// else any (every current entry point of cuda.h 13.0 is modelled now; older ABIs and per-thread
// forms may still fall back). nullptr when every entry point is modelled.
const ApiEntry* FirstFallback() {
  for (bool any_kind : {false, true}) {
    for (int i = 0; i < kApiEntryCount; ++i) {
      if (!kApiEntries[i].modelled && (any_kind || kApiEntries[i].kind == ApiKind::k_current)) {
        return &kApiEntries[i];
      }
    }
  }
  return nullptr;
}

TEST(FakecudaFallbackTest, TableIsTheBuildsListOfCudaH) {
  std::vector<ListedRow> listed = ReadModelled();
  // The list also has the "extra" rows (older ABIs cuda.h does not declare); the table has not.
  listed.erase(std::remove_if(listed.begin(), listed.end(),
                              [](const ListedRow& r) { return r.kind == "extra"; }),
               listed.end());
  ASSERT_GT(listed.size(), 400u) << kModelledList;
  ASSERT_EQ(static_cast<size_t>(kApiEntryCount), listed.size());
  for (int i = 0; i < kApiEntryCount; ++i) {
    const ApiEntry& e = kApiEntries[i];
    const ListedRow& r = listed[i];
    EXPECT_EQ(e.symbol, r.symbol);
    EXPECT_EQ(e.plain, r.plain) << e.symbol;
    EXPECT_STREQ(KindName(e.kind), r.kind.c_str()) << e.symbol;
    EXPECT_EQ(e.modelled, r.status == "modelled") << e.symbol;
    EXPECT_NE(e.address, nullptr) << e.symbol;
  }
}

TEST(FakecudaFallbackTest, CuGetProcAddressResolvesEveryPlainName) {
  ScopedDriver driver;
  ASSERT_TRUE(driver.ok()) << driver.error();
  int resolved = 0;
  for (int i = 0; i < kApiEntryCount; ++i) {
    const ApiEntry& e = kApiEntries[i];
    if (e.kind != ApiKind::k_current) continue;
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    ASSERT_EQ(cuGetProcAddress(e.plain, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status),
              CUDA_SUCCESS)
        << e.plain;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << e.plain;
    EXPECT_NE(pfn, nullptr) << e.plain;
    if (!e.modelled) {
      void* own = nullptr;
      std::memcpy(&own, &e.address, sizeof(own));
      EXPECT_EQ(pfn, own) << e.plain << ": a fallback resolves to itself";
    }
    ++resolved;
  }
  EXPECT_EQ(resolved, 452) << "cuda.h 13.0 declares 449 functions and cudaProfiler.h 3; a new "
                              "header changes this";
}

TEST(FakecudaFallbackTest, NoDriverInstalledIsNotInitialized) {
  ASSERT_EQ(Installed(), nullptr);
  const ApiEntry* fallback = FirstFallback();
  if (fallback == nullptr) GTEST_SKIP() << "every entry point is modelled: no fallback";
  EXPECT_EQ(AsFallback(fallback->address)(), CUDA_ERROR_NOT_INITIALIZED);
}

TEST(FakecudaFallbackTest, AnswersThroughTheEntryPrologue) {
  const ApiEntry* first = FirstFallback();
  if (first == nullptr) GTEST_SKIP() << "every entry point is modelled: no fallback";
  const ApiEntry& fallback = *first;
  const Fallback call = AsFallback(fallback.address);
  ScopedDriver driver;
  ASSERT_TRUE(driver.ok()) << driver.error();
  driver->faults().EnableCallLog(true);
  std::string error;
  ASSERT_TRUE(driver->faults().AddRulesFromSpec(
      std::string(fallback.plain) + ":nth:2:CUDA_ERROR_OUT_OF_MEMORY", &error))
      << error;

  EXPECT_EQ(call(), CUDA_ERROR_NOT_INITIALIZED) << fallback.symbol << " before cuInit";
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ(call(), CUDA_ERROR_OUT_OF_MEMORY) << fallback.symbol << ": the injected 2nd call";
  EXPECT_EQ(call(), CUDA_ERROR_NOT_SUPPORTED) << fallback.symbol;
  EXPECT_EQ(driver->faults().calls(fallback.plain), 3u);
  const std::vector<std::string> log = driver->faults().CallLog();
  EXPECT_EQ(std::count(log.begin(), log.end(), std::string(fallback.plain)), 3) << fallback.plain;

  // Every other fallback, once initialized.
  for (int i = 0; i < kApiEntryCount; ++i) {
    if (!kApiEntries[i].modelled) {
      EXPECT_EQ(AsFallback(kApiEntries[i].address)(), CUDA_ERROR_NOT_SUPPORTED)
          << kApiEntries[i].symbol;
    }
  }
}

}  // namespace
}  // namespace fakecuda
