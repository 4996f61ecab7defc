/*
 * artifact_view.h — one artifact as the inspection verbs (inspect, dot,
 * diff) see it: the loaded program when this runtime can run it,
 * otherwise a container-level description and the report saying why not.
 */
#ifndef KILN_TOOLS_ARTIFACT_VIEW_H
#define KILN_TOOLS_ARTIFACT_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

typedef struct artifact_view {
    const char *path;
    kiln_program *program;                 /* NULL when it cannot run here */
    kiln_report *report;                   /* every problem found loading (NULL only when out of memory) */
    kiln_artifact_description description; /* valid when `described` */
    bool described;                        /* program is NULL, but the container is intact */
    kiln_error error;                      /* why it could not be read, when neither */
} artifact_view;

/*
 * Load `path` with a report; if it cannot run here, describe its container.
 * @return true if the artifact could be read (program or description);
 *         false with view->error set otherwise (missing, damaged, other major).
 */
bool artifact_view_open(artifact_view *view, const char *path);
void artifact_view_close(artifact_view *view);

/* Container facts, from the program or the description. */
void view_format_version(const artifact_view *view, uint16_t *major, uint16_t *minor);
void view_digest(const artifact_view *view, uint8_t out[32]);
void view_signature(const artifact_view *view, kiln_signature_info *out);
uint32_t view_section_count(const artifact_view *view);
void view_section(const artifact_view *view, uint32_t index, kiln_section_info *out);
/* @return the index of the first section of `type` (e.g. "WDAT"), or -1. */
int64_t view_find_section(const artifact_view *view, const char *type);
/* Size of the file in bytes. */
uint64_t view_file_size(const artifact_view *view);

/* The value of metadata `key`, or NULL. */
const char *program_metadata_value(const kiln_program *program, const char *key);

/* Ops in order of first use, with the number of nodes using each. */
typedef struct op_use {
    const char *name;
    uint32_t version;
    uint32_t nodes;
} op_use;

/* @return the number of distinct (op, version) pairs, *out allocated (free it), or -1 when out of memory. */
int64_t program_op_histogram(const kiln_program *program, op_use **out);

/* A shape text "[a, 2*n + 1]" split into its axes. Axis expressions
 * contain no commas (spec/text-format.md §3.2), so splitting is exact. */
#define AXIS_TEXT_SIZE 512
typedef struct shape_axes {
    uint32_t rank;
    char axis[KILN_MAX_RANK][AXIS_TEXT_SIZE];
} shape_axes;

void shape_axes_parse(const char *text, shape_axes *out);

/* @return the index of the dim called `name`, or -1. */
int64_t program_find_dim(const kiln_program *program, const char *name);

/* "blake2b-256:<64 hex>" and its 16-character short form. */
#define IDENTITY_TEXT_SIZE 80
void identity_text(const uint8_t digest[32], char out[IDENTITY_TEXT_SIZE]);
void identity_short(const uint8_t digest[32], char out[17]);

const char *signature_state_name(kiln_signature_state state);
const char *weight_kind_name(kiln_weight_kind kind);
const char *problem_severity_name(kiln_severity severity);

#endif
