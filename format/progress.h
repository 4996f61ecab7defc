/*
 * progress.h — reporting how far a long pass over bytes has come. Passes
 * over large buffers work in KILN_PROGRESS_STEP pieces and advance the
 * shared counter after each, so a caller can draw a progress bar.
 */
#ifndef KILN_FORMAT_PROGRESS_H
#define KILN_FORMAT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

#define KILN_PROGRESS_STEP ((uint64_t)16 << 20)

typedef struct kiln_progress {
    kiln_progress_fn fn; /* NULL: nobody is listening */
    void *user;
    uint64_t done;
    uint64_t total;
} kiln_progress;

static inline void kiln_progress_advance(kiln_progress *p, uint64_t bytes)
{
    if (p && p->fn) {
        p->done += bytes;
        p->fn(p->user, p->done, p->total);
    }
}

#endif
