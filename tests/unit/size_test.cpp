#include "core/size.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace commscale {
namespace {

TEST(ParseSize, PlainAndSuffixed) {
  EXPECT_EQ(parse_size("8", "-b").count(), 8u);
  EXPECT_EQ(parse_size("0", "-b").count(), 0u);
  EXPECT_EQ(parse_size("64K", "-b").count(), 65536u);  // 64 * 1024
  EXPECT_EQ(parse_size("64k", "-b").count(), 65536u);
  EXPECT_EQ(parse_size("128M", "-b").count(), 134217728u);  // 128 * 2^20
  EXPECT_EQ(parse_size("4G", "-b").count(), 4294967296u);   // 4 * 2^30
  EXPECT_EQ(parse_size("1T", "-b").count(), 1099511627776u);
  EXPECT_EQ(parse_size("4GiB", "-b").count(), 4294967296u);
  EXPECT_EQ(parse_size("2KB", "-b").count(), 2048u);  // nccl-tests reads KB as KiB too
  EXPECT_EQ(parse_size("16B", "-b").count(), 16u);
}

TEST(ParseSize, RejectsWithFlagAndExpectation) {
  for (const char* bad : {"", "K", "12X", "1.5M", "-3", "4GG", "G4", " 8", "8 ", "0x10"}) {
    try {
      (void)parse_size(bad, "-e/--maxbytes");
      FAIL() << "accepted \"" << bad << "\"";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("-e/--maxbytes: ", 0), 0u) << message;
      EXPECT_NE(message.find("expected a byte count"), std::string::npos) << message;
      EXPECT_EQ(e.code(), ExitCode::kUsage);
    }
  }
}

TEST(ParseSize, RejectsOverflow) {
  EXPECT_THROW((void)parse_size("99999999999999999999", "-e"), InputError);
  EXPECT_THROW((void)parse_size("17179869184G", "-e"), InputError);  // 2^34 * 2^30 = 2^64
}

TEST(FormatSize, PicksLargestBinaryUnit) {
  EXPECT_EQ(format_size(Bytes(8)), "8 B");
  EXPECT_EQ(format_size(Bytes(1024)), "1 KiB");
  EXPECT_EQ(format_size(Bytes(1536)), "1.5 KiB");
  EXPECT_EQ(format_size(Bytes(4 * kGiB)), "4 GiB");
}

TEST(SizeSweep, FactorAndStep) {
  // -b 8 -e 64 -f 2: 8, 16, 32, 64.
  const auto doubling = size_sweep(Bytes(8), Bytes(64), 2, Bytes(kMiB));
  ASSERT_EQ(doubling.size(), 4u);
  EXPECT_EQ(doubling.back().count(), 64u);
  // -b 8 -e 100 -f 4: 8, 32 (128 is past the end).
  EXPECT_EQ(size_sweep(Bytes(8), Bytes(100), 4, Bytes(1)).size(), 2u);
  // -b 1K -e 4K -i 1K: 1K, 2K, 3K, 4K.
  const auto stepped = size_sweep(Bytes(1024), Bytes(4096), 1, Bytes(1024));
  ASSERT_EQ(stepped.size(), 4u);
  EXPECT_EQ(stepped[2].count(), 3072u);
  // One size.
  EXPECT_EQ(size_sweep(Bytes(32 * kMiB), Bytes(32 * kMiB), 1, Bytes(kMiB)).size(), 1u);
}

TEST(SizeSweep, RejectsEmptyOrEndless) {
  EXPECT_THROW((void)size_sweep(Bytes(64), Bytes(8), 2, Bytes(1)), InputError);
  EXPECT_THROW((void)size_sweep(Bytes(8), Bytes(64), 1, Bytes(0)), InputError);
  EXPECT_THROW((void)size_sweep(Bytes(0), Bytes(64), 2, Bytes(1)), InputError);
}

TEST(SizeSweep, StopsBeforeOverflow) {
  const auto sizes = size_sweep(Bytes(1ull << 62), Bytes(~0ull), 2, Bytes(1));
  ASSERT_EQ(sizes.size(), 2u);  // 2^62, 2^63; 2^64 overflows
  EXPECT_EQ(sizes.back().count(), 1ull << 63);
}

}  // namespace
}  // namespace commscale
