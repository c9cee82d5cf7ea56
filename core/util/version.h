#pragma once
// The version both programs answer --version with and a trace records (CMake's project
// version, defined on core/version.cpp alone).
namespace kvs {

const char* kvscope_version();

}  // namespace kvs
