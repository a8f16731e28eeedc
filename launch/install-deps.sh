#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages commscale needs that are missing, and nothing else.
#
# usage: launch/install-deps.sh [build|test]   (test adds GoogleTest, Slurm, munge, PMIx, shellcheck,
#                                               chromium, python3, strace, clang and libFuzzer)
#
# A tool already on the PATH in a recent enough version (cmake from pip, say) counts as present.
# The CUDA toolkit (with NCCL) is not installed here: commscale finds it under /usr/local/cuda and
# builds its CPU backend alone without it.
set -euo pipefail

purpose="${1:-build}"
packages=(g++ cmake ninja-build git openmpi-bin libopenmpi-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libopenblas-dev libhwloc-dev)
# The tests also start a one-node Slurm cluster (srun --mpi=pmix), two nodes of network namespaces
# (ip netns), shellcheck the scripts, load `commscale report`'s page in headless chromium, run
# the analysis scripts of launch/ (python3), and count a run's flushes to disk (strace).
if [ "$purpose" = test ]; then
  packages+=(libgtest-dev slurm-wlm munge libpmix-dev shellcheck iproute2 chromium python3 strace)
fi
# The fuzz targets and the sanitizer build of the tests (tests/run.sh): clang with libFuzzer (Debian 12).
if [ "$purpose" = test ]; then packages+=(clang libclang-rt-14-dev); fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# cmake >= 3.25 and ninja may come from elsewhere (pip, a module system).
cmake_ok() {
  command -v cmake >/dev/null 2>&1 || return 1
  local version
  version=$(cmake --version | head -n 1 | sed 's/[^0-9.]*//')
  [ "$(printf '%s\n3.25\n' "$version" | sort -V | head -n 1)" = 3.25 ]
}

missing=()
for p in "${packages[@]}"; do
  case "$p" in
    cmake) cmake_ok && continue ;;
    ninja-build) command -v ninja >/dev/null 2>&1 && continue ;;
    g++) command -v g++ >/dev/null 2>&1 && continue ;;
    git) command -v git >/dev/null 2>&1 && continue ;;
    python3) command -v python3 >/dev/null 2>&1 && continue ;;
  esac
  installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing ${missing[*]}; install them as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -q && "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; }; then
  echo "install-deps: could not install ${missing[*]} (no package registry?)" >&2
  exit 1
fi
