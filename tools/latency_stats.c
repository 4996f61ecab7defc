/* latency_stats.c — summary statistics of run times (see latency_stats.h). */
#include "latency_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* qsort order for doubles (no NaN: they are measured times). */
static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The `q` quantile (0..1) of `count` sorted values, linear between ranks. */
static double quantile(const double *sorted, size_t count, double q)
{
    double position = q * (double)(count - 1);
    size_t below = (size_t)position;
    if (below + 1 >= count)
        return sorted[count - 1];
    double weight = position - (double)below;
    return sorted[below] + (sorted[below + 1] - sorted[below]) * weight;
}

void latency_stats_compute(double *times, size_t count, latency_stats *out)
{
    qsort(times, count, sizeof *times, compare_doubles);
    double total = 0;
    for (size_t r = 0; r < count; r++)
        total += times[r];
    double mean = total / (double)count, squares = 0;
    /* Two passes (mean first) rather than sum of squares minus square of
     * sums, which cancels badly when runs barely vary. */
    for (size_t r = 0; r < count; r++)
        squares += (times[r] - mean) * (times[r] - mean);
    out->min = times[0];
    out->median = quantile(times, count, 0.5);
    out->mean = mean;
    out->p90 = quantile(times, count, 0.9);
    out->p99 = quantile(times, count, 0.99);
    out->max = times[count - 1];
    out->stddev = sqrt(squares / (double)count);
    out->total = total;
}

const char *latency_text(double ms, char *buffer, size_t size)
{
    if (ms >= 1)
        snprintf(buffer, size, "%.3f ms", ms);
    else if (ms >= 1e-3)
        snprintf(buffer, size, "%.3f us", ms * 1e3);
    else
        snprintf(buffer, size, "%.0f ns", ms * 1e6);
    return buffer;
}
