#pragma once

// Expects `body` to throw InputError whose message contains every one of `parts` (the flag or key it
// names, the offending value, what was expected).

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace commscale::testing {

template <class Body>
::testing::AssertionResult throws_input_error(Body&& body, std::initializer_list<std::string_view> parts) {
  try {
    body();
  } catch (const InputError& e) {
    const std::string message = e.what();
    for (std::string_view part : parts) {
      if (message.find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
      }
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no InputError thrown";
}

}  // namespace commscale::testing
