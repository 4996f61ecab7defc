/*
 * artifact_view.h — one artifact as the inspection verbs (inspect, dot,
 * diff) see it: the library's kiln_artifact with its parts at hand, and
 * the words the verbs print for identities, signatures and severities.
 */
#ifndef KILN_TOOLS_ARTIFACT_VIEW_H
#define KILN_TOOLS_ARTIFACT_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

typedef struct artifact_view {
    const char *path;
    kiln_artifact *artifact;               /* the library's opened artifact (NULL when unreadable) */
    kiln_program *program;                 /* NULL when it cannot run here */
    const kiln_report *report;             /* every problem found loading (NULL only when out of memory) */
    kiln_error error;                      /* why it could not be read (artifact NULL) */
} artifact_view;

/*
 * Open `path` for inspection (kiln_artifact_open).
 * @return true if the artifact could be read (program or description);
 *         false with view->error set otherwise (missing, damaged, other major).
 */
bool artifact_view_open(artifact_view *view, const char *path);

/* artifact_view_open under load `options` (a verify policy, a progress bar). */
bool artifact_view_open_with_options(artifact_view *view, const char *path, const kiln_load_options *options);
void artifact_view_close(artifact_view *view);

/* "blake2b-256:<64 hex>" and its 16-character short form. */
#define IDENTITY_TEXT_SIZE 80
void identity_text(const uint8_t digest[32], char out[IDENTITY_TEXT_SIZE]);
void identity_short(const uint8_t digest[32], char out[17]);

const char *signature_state_name(kiln_signature_state state);
const char *weight_kind_name(kiln_weight_kind kind);
const char *problem_severity_name(kiln_severity severity);

#endif
