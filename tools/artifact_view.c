/* artifact_view.c — an artifact as the inspection verbs see it (see artifact_view.h). */
#include "artifact_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load_args.h"

bool artifact_view_open(artifact_view *view, const char *path)
{
    const load_args full = {.verb = "open", .verify = KILN_VERIFY_FULL};
    kiln_load_options options;
    cli_progress progress;
    load_args_options(&full, &options, &progress);
    bool opened = artifact_view_open_with_options(view, path, &options);
    cli_progress_finish(&progress);
    return opened;
}

bool artifact_view_open_with_options(artifact_view *view, const char *path, const kiln_load_options *options)
{
    memset(view, 0, sizeof *view);
    view->path = path;
    if (kiln_artifact_open(path, options, &view->artifact, &view->error) != KILN_OK)
        return false;
    view->program = kiln_artifact_program(view->artifact);
    view->report = kiln_artifact_report(view->artifact);
    return true;
}

void artifact_view_close(artifact_view *view)
{
    kiln_artifact_free(view->artifact);
    memset(view, 0, sizeof *view);
}

void identity_text(const uint8_t digest[32], char out[IDENTITY_TEXT_SIZE])
{
    char hex[65];
    cli_hex(digest, 32, hex);
    snprintf(out, IDENTITY_TEXT_SIZE, "blake2b-256:%s", hex);
}

void identity_short(const uint8_t digest[32], char out[17])
{
    cli_hex(digest, 8, out);
}

const char *signature_state_name(kiln_signature_state state)
{
    switch (state) {
    case KILN_SIGNATURE_VERIFIED: return "verified";
    case KILN_SIGNATURE_UNVERIFIED: return "unverified";
    case KILN_SIGNATURE_NONE: break;
    }
    return "unsigned";
}

const char *weight_kind_name(kiln_weight_kind kind)
{
    switch (kind) {
    case KILN_WEIGHT_BUFFER: return "buffer";
    case KILN_WEIGHT_CONSTANT: return "constant";
    case KILN_WEIGHT_PARAMETER: break;
    }
    return "parameter";
}

const char *problem_severity_name(kiln_severity severity)
{
    return severity == KILN_SEVERITY_ERROR ? "error" : "warning";
}
