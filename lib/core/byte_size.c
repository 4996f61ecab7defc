/* byte_size.c — byte counts in the units people read them in (kiln_format_bytes). */
#include <stdio.h>

#include <kiln/util.h>

int kiln_format_bytes(uint64_t bytes, char *buffer, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return snprintf(buffer, size, "%llu bytes", (unsigned long long)bytes);
    double value = (double)bytes / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
        value /= 1024.0;
        unit++;
    }
    /* 1023.96 KiB would print as "1024.0 KiB": say 1.0 MiB instead. */
    if (value >= 1023.95 && unit + 1 < sizeof units / sizeof units[0]) {
        value /= 1024.0;
        unit++;
    }
    return snprintf(buffer, size, "%.1f %s", value, units[unit]);
}
