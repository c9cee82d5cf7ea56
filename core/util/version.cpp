#include "core/util/version.h"

#ifndef KVSCOPE_VERSION
#define KVSCOPE_VERSION "unknown"
#endif

namespace kvs {

const char* kvscope_version() {
    return KVSCOPE_VERSION;
}

}  // namespace kvs
