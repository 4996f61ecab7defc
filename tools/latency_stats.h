/*
 * latency_stats.h — the summary of a bench's timed runs, as TFLite's
 * benchmark_model and onnxruntime's perf_test report them: min, median,
 * mean, p90, p99, max and standard deviation.
 */
#ifndef KILN_TOOLS_LATENCY_STATS_H
#define KILN_TOOLS_LATENCY_STATS_H

#include <stddef.h>

/* Seconds, like the times they summarise. */
typedef struct latency_stats {
    double min, median, mean, p90, p99, max;
    double stddev; /* population standard deviation: the runs are all there is, not a sample of them */
    double total;  /* the sum of the times */
} latency_stats;

/*
 * Summarise `count` (>= 1) run times in seconds, sorting `times` in place.
 * Percentiles interpolate linearly between the two nearest ranks (numpy's
 * default), so min <= median <= p90 <= p99 <= max always holds and the
 * median of an even count is the mean of the middle two.
 */
void latency_stats_compute(double *times, size_t count, latency_stats *out);

/* `ms` milliseconds as people read a latency: "12.345 ms", "8.452 us" or
 * "90 ns", three decimals at most (the clock's noise is below them).
 * @return buffer. */
const char *latency_text(double ms, char *buffer, size_t size);

#endif
