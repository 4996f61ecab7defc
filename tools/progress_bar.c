/* progress_bar.c — the stderr progress bar (see progress_bar.h). */
#include "progress_bar.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *label)
{
    p->label = label;
    p->next_label = NULL;
    p->enabled = !cli_quiet && isatty(STDERR_FILENO);
    p->drawn = false;
    p->pass_start = now_seconds();
    p->last_draw = 0;
    p->last_done = 0;
}

void cli_progress_then(cli_progress *p, const char *label)
{
    p->next_label = label;
}

static void human_bytes(double bytes, char *out, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024 && unit < 4) {
        bytes /= 1024;
        unit++;
    }
    snprintf(out, size, "%.1f %s", bytes, units[unit]);
}

/* Draw the bar at `fraction` (0..1) with `detail` after the percentage,
 * at most ten times a second unless `final`. */
static void draw(cli_progress *p, double now, double fraction, const char *detail, bool final)
{
    if (!final && now - p->last_draw < 0.1)
        return;
    p->last_draw = now;
    fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    char bar[31];
    int filled = (int)(fraction * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r%-10s [%s] %3d%%  %s ", p->label, bar, (int)(fraction * 100), detail);
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_update(void *user, uint64_t done, uint64_t total)
{
    cli_progress *p = user;
    double now = now_seconds();
    if (!p->enabled || total < CLI_PROGRESS_MIN_BYTES)
        return;
    if (done < p->last_done) {
        /* A new pass: keep the finished one on its own line. */
        if (p->drawn)
            fputc('\n', stderr);
        p->drawn = false;
        if (p->next_label)
            p->label = p->next_label;
        p->pass_start = now;
    }
    p->last_done = done;
    /* Redraw at most ten times a second, and always at the end. */
    bool final = done >= total;
    if (!final && now - p->last_draw < 0.1)
        return;
    char done_text[32], total_text[32], rate_text[32], detail[128];
    double elapsed = now - p->pass_start;
    human_bytes((double)done, done_text, sizeof done_text);
    human_bytes((double)total, total_text, sizeof total_text);
    human_bytes(elapsed > 0 ? (double)done / elapsed : 0, rate_text, sizeof rate_text);
    snprintf(detail, sizeof detail, "%s of %s  %s/s", done_text, total_text, rate_text);
    draw(p, now, total ? (double)(done < total ? done : total) / (double)total : 1.0, detail, final);
}

void cli_progress_step(cli_progress *p, double fraction, const char *detail)
{
    double now = now_seconds();
    if (!p->enabled || now - p->pass_start < CLI_PROGRESS_MIN_SECONDS)
        return;
    draw(p, now, fraction, detail, fraction >= 1);
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn)
        fputc('\n', stderr);
    p->drawn = false;
}
