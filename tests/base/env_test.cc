// Copyright 2026 The cuhal Authors.
// Tests of the environment parser (core/base/env.h): every acceptance and every rejection, and
// that each error names the variable, the value and what is accepted.
#include "core/base/env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "core/base/uuid.h"

namespace cuhal::env {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// A fake environment.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  Lookup lookup() const { return MapLookup(vars); }
};

TEST(EnvParseUnsignedTest, AcceptsDecimalDigitsInRange) {
  EXPECT_EQ(ParseUnsigned("V", "0").value(), 0u);
  EXPECT_EQ(ParseUnsigned("V", "42").value(), 42u);
  EXPECT_EQ(ParseUnsigned("V", "007").value(), 7u);
  EXPECT_EQ(ParseUnsigned("V", "18446744073709551615").value(), kMax);
  EXPECT_EQ(ParseUnsigned("V", "5", 5, 5).value(), 5u);
}

TEST(EnvParseUnsignedTest, RejectsEveryMalformedValue) {
  for (std::string_view bad : {"", "-1", "-0", "+1", " 1", "1 ", "1x", "0x10", "1.5", "1e3", "one",
                               "18446744073709551616", "99999999999999999999"}) {
    StatusOr<std::uint64_t> r = ParseUnsigned("FAKENCCL_TIMEOUT_TICKS", bad, 1, kMax);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' was accepted as " << r.value();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              "FAKENCCL_TIMEOUT_TICKS='" + std::string(bad) +
                  "': expected a decimal integer in [1, 18446744073709551615]");
  }
}

TEST(EnvParseUnsignedTest, RejectsValuesOutsideTheRange) {
  EXPECT_FALSE(ParseUnsigned("V", "0", 1, 10).ok());
  EXPECT_FALSE(ParseUnsigned("V", "11", 1, 10).ok());
  EXPECT_THAT(ParseUnsigned("V", "999", 1000, 99999).status().message(),
              HasSubstr("in [1000, 99999]"));
}

TEST(EnvParseBoolTest, AcceptsTheUsualSpellingsInAnyCase) {
  for (std::string_view yes : {"1", "true", "TRUE", "True", "yes", "YES", "on", "On"}) {
    StatusOr<bool> r = ParseBool("V", yes);
    ASSERT_TRUE(r.ok()) << yes << ": " << r.status();
    EXPECT_TRUE(*r) << yes;
  }
  for (std::string_view no : {"0", "false", "FALSE", "no", "No", "off", "OFF"}) {
    StatusOr<bool> r = ParseBool("V", no);
    ASSERT_TRUE(r.ok()) << no << ": " << r.status();
    EXPECT_FALSE(*r) << no;
  }
}

TEST(EnvParseBoolTest, RejectsEverythingElse) {
  for (std::string_view bad : {"", "2", "-1", "y", "n", "t", "f", "enable", " 1", "true ", "01"}) {
    StatusOr<bool> r = ParseBool("CUHAL_REAL_REQUIRED", bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "CUHAL_REAL_REQUIRED='" + std::string(bad) +
                                        "': expected a boolean: 1/0, true/false, yes/no or on/off");
  }
}

TEST(EnvParseChoiceTest, AcceptsAListedWordInAnyCase) {
  constexpr std::string_view kWords[] = {"eager", "adversarial"};
  EXPECT_EQ(ParseChoice("V", "eager", kWords).value(), 0u);
  EXPECT_EQ(ParseChoice("V", "Adversarial", kWords).value(), 1u);
  EXPECT_EQ(ParseChoice("V", "EAGER", kWords).value(), 0u);
}

TEST(EnvParseChoiceTest, RejectsUnlistedWordsAndNamesTheChoices) {
  constexpr std::string_view kWords[] = {"eager", "adversarial"};
  for (std::string_view bad : {"", "lazy", "eager ", "eage", "eagerly", "0"}) {
    StatusOr<std::size_t> r = ParseChoice("FAKECUDA_POLICY", bad, kWords);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(r.status().message(), "FAKECUDA_POLICY='" + std::string(bad) +
                                        "': expected one of 'eager', 'adversarial'");
  }
}

TEST(EnvReadTest, UnsetGivesTheDefault) {
  FakeEnv env;
  EXPECT_EQ(ReadUnsigned("N", 30000, 1, kMax, env.lookup()).value(), 30000u);
  EXPECT_TRUE(ReadBool("B", true, env.lookup()).value());
  EXPECT_FALSE(ReadBool("B", false, env.lookup()).value());
  EXPECT_EQ(ReadChoice<int>("C", 7, {{"a", 1}, {"b", 2}}, env.lookup()).value(), 7);
  EXPECT_EQ(ReadString("S", env.lookup()), std::nullopt);
}

TEST(EnvReadTest, SetValuesAreParsedStrictly) {
  FakeEnv env;
  env.vars = {{"N", "12"}, {"B", "on"}, {"C", "B"}, {"S", "/some/path"}};
  EXPECT_EQ(ReadUnsigned("N", 30000, 1, kMax, env.lookup()).value(), 12u);
  EXPECT_TRUE(ReadBool("B", false, env.lookup()).value());
  EXPECT_EQ(ReadChoice<int>("C", 7, {{"a", 1}, {"b", 2}}, env.lookup()).value(), 2);
  EXPECT_EQ(ReadString("S", env.lookup()), "/some/path");
}

TEST(EnvReadTest, AnInvalidValueIsAnErrorNeverTheDefault) {
  FakeEnv env;
  env.vars = {{"N", "-1"}, {"B", "maybe"}, {"C", "c"}};
  EXPECT_THAT(ReadUnsigned("N", 30000, 1, kMax, env.lookup()).status().message(),
              HasSubstr("N='-1'"));
  EXPECT_THAT(ReadBool("B", false, env.lookup()).status().message(), HasSubstr("B='maybe'"));
  EXPECT_THAT((ReadChoice<int>("C", 7, {{"a", 1}, {"b", 2}}, env.lookup()).status().message()),
              HasSubstr("C='c': expected one of 'a', 'b'"));
}

TEST(EnvReadTest, EmptyIsAnErrorForTypedValuesAndUnsetForStrings) {
  FakeEnv env;
  env.vars = {{"N", ""}, {"B", ""}, {"C", ""}, {"S", ""}};
  EXPECT_FALSE(ReadUnsigned("N", 1, 0, kMax, env.lookup()).ok());
  EXPECT_FALSE(ReadBool("B", false, env.lookup()).ok());
  EXPECT_FALSE((ReadChoice<int>("C", 7, {{"a", 1}}, env.lookup()).ok()));
  EXPECT_EQ(ReadString("S", env.lookup()), std::nullopt);
}

TEST(EnvReadTest, MapLookupSeesLaterChangesAndOnlyItsVariables) {
  std::map<std::string, std::string> vars = {{"A", "1"}};
  const Lookup lookup = MapLookup(vars);
  EXPECT_STREQ(lookup("A"), "1");
  EXPECT_EQ(lookup("PATH"), nullptr) << "not the process environment";
  vars["B"] = "2";
  EXPECT_STREQ(lookup("B"), "2");
}

TEST(EnvReadTest, TheProcessEnvironmentIsTheDefaultLookup) {
  ASSERT_EQ(setenv("CUHAL_ENV_TEST_VARIABLE", "yes", 1), 0);
  EXPECT_TRUE(ReadBool("CUHAL_ENV_TEST_VARIABLE", false).value());
  ASSERT_EQ(unsetenv("CUHAL_ENV_TEST_VARIABLE"), 0);
  EXPECT_FALSE(ReadBool("CUHAL_ENV_TEST_VARIABLE", false).value());
}

TEST(GpuUuidTest, FormatsAsNvidiaSmiDoes) {
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 0x11);
  EXPECT_EQ(FormatGpuUuid(bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
  bytes.fill(0xFF);
  EXPECT_EQ(FormatGpuUuid(bytes), "GPU-ffffffff-ffff-ffff-ffff-ffffffffffff");
}

}  // namespace
}  // namespace cuhal::env
