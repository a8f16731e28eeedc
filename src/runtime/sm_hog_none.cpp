// The SM hog of a build without CUDA: there is no GPU to hold.
#if !defined(COMMSCALE_HAVE_CUDA)

#include "core/error.hpp"
#include "runtime/sm_hog.hpp"

namespace commscale {

std::unique_ptr<SmHog> hold_sms(double) { throw RuntimeFailure("this commscale was built without the GPU backend"); }

}  // namespace commscale

#endif
