# Writes the generated version.cpp at build time, so that a build directory that lives across commits
# records the commit it built (at configure time it kept the first one). Run by the commscale_version
# target before commscale_core compiles: cmake -DSOURCE_DIR= -DGIT_SHA= -DPROJECT_VERSION= -DIN= -DOUT= -P
# version.cmake. configure_file rewrites OUT only when its text changes, so an unchanged commit
# rebuilds nothing. GIT_SHA (the COMMSCALE_GIT_SHA cache entry) wins when given: a copy of the sources
# without .git.
set(_git_sha "${GIT_SHA}")
if(NOT _git_sha)
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE _git_sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE _git_dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT _git_sha)
    set(_git_sha "unknown")
  elseif(_git_dirty)
    string(APPEND _git_sha "-dirty")
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
