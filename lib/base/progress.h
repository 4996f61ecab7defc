/*
 * progress.h — reporting how far a long pass over bytes has come. Passes
 * over large buffers work in KILN_PROGRESS_STEP pieces and advance the
 * shared counter after each, so a caller can draw a progress bar.
 */
#ifndef KILN_BASE_PROGRESS_H
#define KILN_BASE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

#define KILN_PROGRESS_STEP ((uint64_t)16 << 20)

typedef struct kiln_progress {
    kiln_progress_fn fn; /* NULL: nobody is listening */
    void *user;
    uint64_t done;  /* bytes processed so far */
    uint64_t total; /* bytes to process */
    /*
     * 0: report `done` of `total`. Otherwise report the work done scaled to
     * this many bytes: a pass that reads the same bytes twice (a section's
     * CRC of the stored bytes, then the hash of the raw ones) shows the
     * file's bytes, not twice as many (a 1 GiB file verified read "2.0 GiB").
     */
    uint64_t shown_total;
} kiln_progress;

static inline void kiln_progress_advance(kiln_progress *p, uint64_t bytes)
{
    if (p && p->fn) {
        p->done += bytes;
        if (p->shown_total && p->total)
            p->fn(p->user, (uint64_t)((double)p->done / (double)p->total * (double)p->shown_total), p->shown_total);
        else
            p->fn(p->user, p->done, p->total);
    }
}

#endif
