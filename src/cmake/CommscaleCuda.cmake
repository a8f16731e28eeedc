# Decides whether the GPU backend is built and sets COMMSCALE_HAVE_CUDA.
#
# CMAKE_CUDA_ARCHITECTURES defaults to the compute capability of the visible GPU (nvidia-smi), else
# to the data-centre and consumer parts we model that CUDA 13 can build for: 80;86;89;90;120.

set(COMMSCALE_HAVE_CUDA OFF)
set(COMMSCALE_CUDA_SUMMARY "")
if(COMMSCALE_CUDA STREQUAL "OFF")
  return()
endif()

if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)

if(CMAKE_CUDA_COMPILER)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(_archs "80;86;89;90;120")
    find_program(NVIDIA_SMI nvidia-smi)
    if(NVIDIA_SMI)
      execute_process(COMMAND ${NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _caps RESULT_VARIABLE _smi_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_smi_rc EQUAL 0 AND _caps MATCHES "^[0-9]+\\.[0-9]+")
        string(REGEX MATCH "^[0-9]+\\.[0-9]+" _cap "${_caps}")
        string(REPLACE "." "" _archs "${_cap}")
      endif()
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_archs}" CACHE STRING "CUDA architectures to build for")
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc's C++20 flag (newer CMake does); the kernels include the C++20
  # core headers, so we tell it.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  find_package(NCCL)
  if(NCCL_FOUND AND NCCL_VERSION VERSION_LESS 2.18)
    message(WARNING "NCCL ${NCCL_VERSION} at ${NCCL_LIBRARY} is older than 2.18 (ncclCommSplit); GPU backend off")
  elseif(NCCL_FOUND AND TARGET CUDA::cublasLt)
    set(COMMSCALE_HAVE_CUDA ON)
    set(COMMSCALE_CUDA_SUMMARY " (CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  endif()
endif()

if(COMMSCALE_CUDA STREQUAL "ON" AND NOT COMMSCALE_HAVE_CUDA)
  message(FATAL_ERROR "COMMSCALE_CUDA=ON but the CUDA compiler, toolkit, cuBLASLt or NCCL >= 2.18 was not found "
                      "(set CUDACXX, CUDAToolkit_ROOT or NCCL_HOME)")
endif()
