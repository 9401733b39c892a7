#ifndef HAPPY_CCAIRO_SHIM_H
#define HAPPY_CCAIRO_SHIM_H

/* Cairo from Debian's libcairo2-dev (image surfaces, paths, toy text, PNG). */

#include <cairo.h>

#endif
