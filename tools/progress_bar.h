/*
 * progress_bar.h — a progress bar on stderr for long passes over large
 * artifacts (verifying, signing, compressing, writing). Drawn only when
 * stderr is a terminal, the pass is large, and --quiet was not given.
 */
#ifndef KILN_TOOLS_PROGRESS_BAR_H
#define KILN_TOOLS_PROGRESS_BAR_H

#include <stdbool.h>
#include <stdint.h>

/* Passes smaller than this finish too fast to be worth a bar. */
#define CLI_PROGRESS_MIN_BYTES ((uint64_t)64 << 20)

typedef struct cli_progress {
    const char *label;
    bool enabled;
    bool drawn;       /* something is on the line */
    double pass_start;
    double last_draw;
    uint64_t last_done;
} cli_progress;

/* Prepare a bar labelled `label` (e.g. "verifying"). */
void cli_progress_init(cli_progress *progress, const char *label);

/* A kiln_progress_fn; `user` is the cli_progress. A drop in `done` starts a
 * new pass (e.g. writing after verifying) on a new line. */
void cli_progress_update(void *user, uint64_t done, uint64_t total);

/* End the bar's line, if one was drawn. */
void cli_progress_finish(cli_progress *progress);

#endif
