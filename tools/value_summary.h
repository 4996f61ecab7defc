/*
 * value_summary.h — a one-line summary of a tensor's values, for a person
 * reading `kiln run --summary`: the first few elements, the smallest and
 * largest, and for floats the mean and how many are NaN or infinite.
 */
#ifndef KILN_TOOLS_VALUE_SUMMARY_H
#define KILN_TOOLS_VALUE_SUMMARY_H

#include <stddef.h>

#include <kiln/kiln.h>

/* Elements listed at the start of a summary. */
#define VALUE_SUMMARY_FIRST 5

/*
 * Write the summary of `t` to `text` (truncated to `size`, like snprintf),
 * e.g. "3, 3, 3, 3, 3, ...  min 3  max 3  mean 3  nan 0  inf 0" for floats
 * (min and max over the values that are not NaN, the mean over the finite
 * ones; "-" where there are none) or "0, 1, 2  min 0  max 2" for integers
 * and bools (exact, also past 2^53), or "no elements".
 */
void value_summary_format(const kiln_tensor *t, char *text, size_t size);

#endif
