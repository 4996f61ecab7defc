/*
 * version.h — kiln's version. meson.build's project() version is the one
 * the build, the library's soname, pkg-config and the wheel carry; meson
 * refuses to configure when these macros differ from it
 * (include/kiln/meson.build), and tests/api/version_places.sh checks the
 * man page, `kiln --version` and kiln_version_number() against it.
 * Included by <kiln/kiln.h>.
 */
#ifndef KILN_VERSION_H
#define KILN_VERSION_H

#define KILN_VERSION_MAJOR 1
#define KILN_VERSION_MINOR 0
#define KILN_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH: compare it (`#if KILN_VERSION_NUMBER >= 10200`). */
#define KILN_VERSION_NUMBER (KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH)

#define KILN_VERSION_STR2_(x) #x
#define KILN_VERSION_STR_(x) KILN_VERSION_STR2_(x)
/** "MAJOR.MINOR.PATCH", as kiln_version() returns it. */
#define KILN_VERSION_STRING \
    KILN_VERSION_STR_(KILN_VERSION_MAJOR) "." KILN_VERSION_STR_(KILN_VERSION_MINOR) "." KILN_VERSION_STR_(KILN_VERSION_PATCH)

#endif
