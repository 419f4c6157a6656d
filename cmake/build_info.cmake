# cmake -DSOURCE_DIR=... -DOUT=.../build_info.cc -P cmake/build_info.cmake
# Writes OUT, which defines sift::build_commit() (core/provenance.h) as the git commit of
# SOURCE_DIR, marked when the tree has local changes; rewrites it only when that changed,
# so that a build after a new commit recompiles this one small file and relinks.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown (not built from a git checkout)")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty STREQUAL "")
    string(APPEND commit " + local changes")
  endif()
endif()
string(CONCAT text "// Written by cmake/build_info.cmake at build time: do not edit.\n"
       "#include \"core/provenance.h\"\n\n"
       "const char* sift::build_commit() { return \"${commit}\"; }\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
