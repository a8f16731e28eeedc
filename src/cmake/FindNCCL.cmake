# FindNCCL: locates NCCL's header and library and reads its version from nccl.h.
#
# Searched, in order: NCCL_ROOT / NCCL_HOME (CMake or environment variable), the CUDA toolkit's
# include and lib directories (NCCL ships there in CUDA images such as /usr/local/cuda), then the
# system default paths (Debian/Ubuntu's libnccl-dev installs into /usr).
#
# Provides NCCL::NCCL, NCCL_FOUND, NCCL_VERSION (e.g. 2.28.9), NCCL_INCLUDE_DIR, NCCL_LIBRARY.

set(_nccl_hints)
foreach(_var NCCL_ROOT NCCL_HOME)
  if(DEFINED ${_var})
    list(APPEND _nccl_hints "${${_var}}")
  elseif(DEFINED ENV{${_var}})
    list(APPEND _nccl_hints "$ENV{${_var}}")
  endif()
endforeach()
if(CUDAToolkit_FOUND)
  list(APPEND _nccl_hints "${CUDAToolkit_LIBRARY_ROOT}")
  get_filename_component(_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  list(APPEND _nccl_hints "${_cuda_root}")
endif()

find_path(NCCL_INCLUDE_DIR NAMES nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl HINTS ${_nccl_hints} PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${_part} +([0-9]+)" _match "${_nccl_version_lines}")
    set(NCCL_VERSION_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(NCCL_VERSION "${NCCL_VERSION_MAJOR}.${NCCL_VERSION_MINOR}.${NCCL_VERSION_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::NCCL)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
