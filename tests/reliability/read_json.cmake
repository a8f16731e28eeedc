# Checks that a result file is one whole JSON document: cmake -DFILE=out.json -P read_json.cmake
cmake_minimum_required(VERSION 3.25)
file(READ "${FILE}" text)
string(JSON kind ERROR_VARIABLE problem GET "${text}" schema_version)
if(problem)
  message(FATAL_ERROR "${FILE} is not a complete JSON result (${problem})")
endif()
message(STATUS "${FILE}: a complete JSON document (schema_version ${kind})")
