/*
 * progress_bar.h — a progress bar on stderr for long passes: over large
 * artifacts (verifying, signing, compressing, writing), counted in bytes,
 * and over repeated runs (bench's warm-up and timed runs), counted in
 * steps. Drawn only when stderr is a terminal, the pass is large or slow,
 * and --quiet was not given.
 */
#ifndef KILN_TOOLS_PROGRESS_BAR_H
#define KILN_TOOLS_PROGRESS_BAR_H

#include <stdbool.h>
#include <stdint.h>

/* Passes smaller than this finish too fast to be worth a bar. */
#define CLI_PROGRESS_MIN_BYTES ((uint64_t)64 << 20)

/* A pass counted in steps gets a bar only once it has lasted this long, so
 * a bench of a small program never flickers one onto the terminal. */
#define CLI_PROGRESS_MIN_SECONDS 0.5

typedef struct cli_progress {
    const char *label;
    const char *next_label; /* the label of the passes after the first (NULL: the same) */
    bool enabled;
    bool drawn;       /* something is on the line */
    double pass_start;
    double last_draw;
    uint64_t last_done;
} cli_progress;

/* Prepare a bar labelled `label` (e.g. "verifying"). */
void cli_progress_init(cli_progress *progress, const char *label);

/* Label the passes after the first `label` (e.g. "writing" after "verifying"). */
void cli_progress_then(cli_progress *progress, const char *label);

/* A kiln_progress_fn; `user` is the cli_progress. A drop in `done` starts a
 * new pass (e.g. writing after verifying) on a new line. */
void cli_progress_update(void *user, uint64_t done, uint64_t total);

/*
 * Report a pass counted in steps rather than bytes: `fraction` of it is
 * done (clamped to 0..1) and `detail` follows the percentage (e.g. "42 of
 * 100 runs"). Drawn like the byte bar, once the pass (since
 * cli_progress_init) has lasted CLI_PROGRESS_MIN_SECONDS.
 */
void cli_progress_step(cli_progress *progress, double fraction, const char *detail);

/* End the bar's line, if one was drawn. */
void cli_progress_finish(cli_progress *progress);

#endif
