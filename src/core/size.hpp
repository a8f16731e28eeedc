#pragma once

// Byte sizes as users write them on the command line, as nccl-tests reads them: a whole number with
// an optional K, M, G or T suffix, each a power of 1024 ("64K" = 65536). "KiB", "MiB", ... and a
// trailing "B" are accepted too; the letters are case-insensitive.

#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace commscale {

// Parses `text`; on failure throws InputError naming `where` (the flag or key being parsed).
[[nodiscard]] Bytes parse_size(std::string_view text, std::string_view where);

// "8 B", "64 KiB", "1.5 MiB", "4 GiB": the largest binary unit that keeps the number at or above 1.
[[nodiscard]] std::string format_size(Bytes size);

// The most sizes one sweep may hold: a linear -i/--stepbytes sweep is refused beyond it.
inline constexpr std::uint64_t kMaxSweepSizes = 100000;

// The sizes of a sweep from `min` to `max` inclusive, as nccl-tests steps them: multiplied by
// `factor` when it is above 1, else increased by `step`. Throws InputError naming the flags when the
// sweep is empty, would never end or holds more than kMaxSweepSizes sizes.
[[nodiscard]] std::vector<Bytes> size_sweep(Bytes min, Bytes max, std::uint64_t factor, Bytes step);

}  // namespace commscale
