#include "core/size.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

constexpr std::string_view kSizeExpected = "a byte count such as 8, 64K, 128M or 4G (K, M, G, T are powers of 1024)";

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Multiplier for a suffix such as "", "k", "kib", "kb"... ("kb" is read as KiB, as nccl-tests does).
bool suffix_multiplier(std::string_view suffix, std::uint64_t* multiplier) {
  static constexpr std::array<std::pair<char, std::uint64_t>, 4> kUnits = {
      {{'k', kKiB}, {'m', kMiB}, {'g', kGiB}, {'t', kTiB}}};
  if (suffix.empty() || suffix == "b") {
    *multiplier = 1;
    return true;
  }
  for (const auto& [letter, value] : kUnits) {
    if (suffix[0] != letter) continue;
    const std::string_view rest = suffix.substr(1);
    if (rest.empty() || rest == "b" || rest == "ib") {
      *multiplier = value;
      return true;
    }
  }
  return false;
}

}  // namespace

Bytes parse_size(std::string_view text, std::string_view where) {
  const std::string lower = lowercase(text);
  std::uint64_t number = 0;
  const char* begin = lower.data();
  const char* end = lower.data() + lower.size();
  const auto [stop, ec] = std::from_chars(begin, end, number);
  if (ec == std::errc::result_out_of_range) {
    throw InputError(where, fmt::format("\"{}\" is too large", text), kSizeExpected);
  }
  std::uint64_t multiplier = 1;
  if (ec != std::errc() || stop == begin || !suffix_multiplier(std::string_view(stop, end), &multiplier)) {
    throw InputError(where, fmt::format("\"{}\" is not a size", text), kSizeExpected);
  }
  if (number > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    throw InputError(where, fmt::format("\"{}\" is too large", text), kSizeExpected);
  }
  return Bytes(number * multiplier);
}

std::string format_size(Bytes size) {
  static constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kUnits = {
      {{kTiB, "TiB"}, {kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}}};
  for (const auto& [unit, name] : kUnits) {
    if (size.count() < unit) continue;
    const double value = static_cast<double>(size.count()) / static_cast<double>(unit);
    return size.count() % unit == 0 ? fmt::format("{} {}", size.count() / unit, name) : fmt::format("{:.3g} {}", value, name);
  }
  return fmt::format("{} B", size.count());
}

std::vector<Bytes> size_sweep(Bytes min, Bytes max, std::uint64_t factor, Bytes step) {
  if (min > max) {
    throw InputError("-b/--minbytes", fmt::format("{} is larger than -e/--maxbytes {}", min.count(), max.count()),
                     "a minimum size at or below the maximum");
  }
  if (factor <= 1 && step.count() == 0 && min < max) {
    throw InputError("-i/--stepbytes", "a step of 0 bytes never reaches -e/--maxbytes", "a step of at least 1 byte");
  }
  if (factor > 1 && min.count() == 0) {
    throw InputError("-b/--minbytes", "0 bytes never grows with -f/--stepfactor", "a minimum size of at least 1 byte");
  }
  if (factor <= 1 && step.count() > 0) {
    // Counted before anything is allocated: a linear sweep of 2^40 sizes would exhaust memory.
    const std::uint64_t count = (max.count() - min.count()) / step.count() + 1;
    if (count > kMaxSweepSizes) {
      throw InputError("-i/--stepbytes",
                       fmt::format("{} to {} bytes in steps of {} is {} sizes", min.count(), max.count(),
                                   step.count(), count),
                       fmt::format("at most {} sizes: a larger step, or -f/--stepfactor above 1", kMaxSweepSizes));
    }
  }
  std::vector<Bytes> sizes;
  for (std::uint64_t size = min.count(); size <= max.count();) {
    sizes.push_back(Bytes(size));
    const std::uint64_t next = factor > 1 ? size * factor : size + step.count();
    if (next <= size || (factor > 1 && next / factor != size)) break;  // overflow or no progress
    size = next;
  }
  return sizes;
}

}  // namespace commscale
