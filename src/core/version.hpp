#pragma once

#include <string_view>

namespace commscale {

// The release version and the git commit the binary was configured from ("-dirty" when the work
// tree had uncommitted changes, "unknown" outside a git checkout).
[[nodiscard]] std::string_view version() noexcept;
[[nodiscard]] std::string_view git_sha() noexcept;

}  // namespace commscale
