/* peak_rss.c — this process's peak resident memory (see peak_rss.h). */
#include "peak_rss.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* The "VmHWM:   1234 kB" line of /proc/self/status, in bytes. */
static bool read_vm_hwm(uint64_t *bytes)
{
    FILE *status = fopen("/proc/self/status", "r");
    if (!status)
        return false;
    char line[256];
    bool found = false;
    while (!found && fgets(line, sizeof line, status)) {
        unsigned long long kib;
        char unit[8];
        if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%llu %7s", &kib, unit) == 2 &&
            strcmp(unit, "kB") == 0 && kib <= UINT64_MAX / 1024) {
            *bytes = (uint64_t)kib * 1024;
            found = true;
        }
    }
    fclose(status);
    return found;
}

uint64_t peak_rss_bytes(const char **source)
{
    uint64_t bytes;
    if (read_vm_hwm(&bytes)) {
        *source = "VmHWM";
        return bytes;
    }
    /* ru_maxrss is in bytes on macOS (which has no /proc), in KiB elsewhere. */
#ifdef __APPLE__
    const uint64_t unit = 1;
#else
    const uint64_t unit = 1024;
#endif
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0 && usage.ru_maxrss >= 0 &&
        (uint64_t)usage.ru_maxrss <= UINT64_MAX / unit) {
        *source = "getrusage";
        return (uint64_t)usage.ru_maxrss * unit;
    }
    *source = "none";
    return 0;
}
