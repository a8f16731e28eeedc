#include "cli/reliability_options.hpp"

#include <charconv>

#include <fmt/format.h>

#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/jsonl_file.hpp"

namespace commscale {
namespace {

constexpr std::string_view kSkipExpected =
    "RANK:INDEX, e.g. 1:3 (rank 1 issues no collective from its call 3 on, counted from 0)";

template <class T>
bool parse_whole(std::string_view text, T* value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

void add_reliability_options(CLI::App& command, ReliabilityArguments* args, const std::string& what) {
  mark_output_file(command.add_option(
      "--jsonl", args->jsonl_path,
      fmt::format("append {} to this file as JSON Lines as the run goes (default with -J: the -J file with .jsonl "
                  "for .json); a new run starts it afresh",
                  what)));
  command
      .add_option("--debug-skip-collective", args->skip,
                  "testing: RANK:INDEX, rank RANK issues no collective from its INDEX-th call on (from 0), so "
                  "the others wait for it; with -T/--timeout the run ends with exit code 4 naming the rank")
      ->group("Testing");
}

CollectiveSkip parse_collective_skip(const std::string& text, const std::string& where) {
  const std::size_t colon = text.find(':');
  CollectiveSkip skip;
  if (colon == std::string::npos || !parse_whole(std::string_view(text).substr(0, colon), &skip.rank) ||
      !parse_whole(std::string_view(text).substr(colon + 1), &skip.index) || skip.rank < 0) {
    throw InputError(where, fmt::format("\"{}\" is not RANK:INDEX", text), kSkipExpected);
  }
  return skip;
}

void check_testing_rank(const MpiComm& world, int rank, const std::string& flag, const std::string& value) {
  if (rank < world.size()) return;
  fail_on_all_ranks(
      world, InputError(flag, fmt::format("{} names rank {}, and the job has {} rank(s)", value, rank, world.size()),
                        fmt::format("a rank below {}, so that the test does something", world.size())));
}

std::string resolve_jsonl_path(const ReliabilityArguments& args, const std::string& json_path) {
  if (!args.jsonl_path.empty()) return args.jsonl_path;
  // Beside a file only: -J /dev/null or -J - has no "beside" (and /dev/null.jsonl is no place for it).
  if (json_path.empty() || !replaced_atomically(json_path)) return {};
  return jsonl_path_beside(json_path);
}

std::string jsonl_flag(const ReliabilityArguments& args) {
  return args.jsonl_path.empty() ? "--jsonl (by default beside -J)" : "--jsonl";
}

}  // namespace commscale
