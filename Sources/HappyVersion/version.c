#include "happy_version.h"

/* Package.swift defines HAPPY_VERSION from the environment variable of that
 * name, which `make` sets; nothing else in the build depends on it, so a new
 * version recompiles this file and relinks, and nothing more. */
#ifndef HAPPY_VERSION
#define HAPPY_VERSION "0.0~dev"
#endif

const char *happy_version(void) {
    return HAPPY_VERSION;
}
