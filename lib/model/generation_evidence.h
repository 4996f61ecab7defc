/*
 * generation_evidence.h — generation cases stored with a program: a
 * prompt and the tokens a greedy generation of it must make (section
 * GENV, format 1.3, spec/format.md §7.15), as owned copies. Their encoding
 * is program/section_generation.h, their check against the program's
 * methods evidence_check.h, their replay runtime/generation_replay.c.
 */
#ifndef KILN_LIB_GENERATION_EVIDENCE_H
#define KILN_LIB_GENERATION_EVIDENCE_H

#include <stdint.h>

#include <kiln/kiln.h>

typedef struct kiln_generation_record {
    char *name;
    char *prefill_method, *decode_method;
    int64_t *prompt;
    uint32_t prompt_length;
    int64_t *tokens;
    uint32_t token_count;
    double margin;
} kiln_generation_record;

/* Release one case's contents (a zeroed record is fine). */
void kiln_generation_record_release(kiln_generation_record *c);

/*
 * Copy the caller's case into *out, the methods defaulted ("prefill",
 * "decode"). NULLs, an empty name or list and a margin that is negative
 * or not finite are refused (KILN_ERR_INVALID_ARGUMENT); the methods and
 * tokens are judged when the program is sealed (kiln_generation_check).
 */
kiln_status kiln_generation_record_from_case(const kiln_generation_case *c, kiln_generation_record *out,
                                             kiln_error *err);

/* A public view of a stored case (borrowing its strings and lists). */
void kiln_generation_record_view(const kiln_generation_record *c, kiln_generation_case *out);

#endif
