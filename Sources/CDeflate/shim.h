#ifndef HAPPY_CDEFLATE_SHIM_H
#define HAPPY_CDEFLATE_SHIM_H

/* libdeflate from Debian's libdeflate-dev: whole-buffer zlib compression and CRC-32 for the PNG writer. */

#include <libdeflate.h>

#endif
