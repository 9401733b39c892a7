#ifndef HAPPY_VERSION_H
#define HAPPY_VERSION_H

/* The version of happyserver and happyclient: the one `make` passes in
 * HAPPY_VERSION (from `git describe`, see scripts/version.sh), or "0.0~dev"
 * for a plain `swift build`. */
const char *happy_version(void);

#endif
