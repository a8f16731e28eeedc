#pragma once

// Marks functions that pure headers share with CUDA kernels. No CUDA header is included: under nvcc
// the functions are compiled for host and device, elsewhere they are plain C++.
#if defined(__CUDACC__)
#define COMMSCALE_HD __host__ __device__
#else
#define COMMSCALE_HD
#endif
