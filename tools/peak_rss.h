/*
 * peak_rss.h — the peak resident memory of this process, for bench.
 *
 * Linux's VmHWM (/proc/self/status) first: getrusage's ru_maxrss is kept
 * across fork and exec, so a bench launched from a 1.2 GB Python process
 * reported 1.2 GB whatever it ran. getrusage only where /proc is missing.
 */
#ifndef KILN_TOOLS_PEAK_RSS_H
#define KILN_TOOLS_PEAK_RSS_H

#include <stdint.h>

/*
 * This process's peak resident set in bytes, with `*source` set to where
 * it came from: "VmHWM" or "getrusage" (a static string).
 * @return the bytes, or 0 (source "none") when neither can be read.
 */
uint64_t peak_rss_bytes(const char **source);

#endif
