/*
 * kiln/text.h — the kiln text format: a readable, round-trip-exact spelling
 * of a program (spec/text-format.md).
 *
 *   kiln_text_assemble     text -> builder (then kiln_builder_save seals it)
 *   kiln_text_disassemble  loaded program -> canonical text (+ .npy files)
 *   kiln_check_spec_parse  "x: range 0..1, finite" -> input name + check
 *
 * Text -> artifact -> text is a fixed point after one step, and
 * artifact -> text (with a weights directory) -> artifact gives the same
 * bytes.
 */
#ifndef KILN_TEXT_H
#define KILN_TEXT_H

#include <stddef.h>

#include <kiln/kiln.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse the whole of `text` (`size` bytes, need not be NUL-terminated) and
 * replay it on a new builder through the public builder API: dims (with
 * multiple_of and derived dims), inputs, semantic input checks, weights,
 * ops with their attributes, outputs and evidence cases. Weight and evidence files named
 * by `file "PATH"` are read relative to `base_dir` (NULL: the current
 * directory) and only from inside it: absolute paths, `..` components and
 * symbolic links resolving outside it are refused, and so are files that
 * are not regular (FIFOs, devices, directories) and files larger than a
 * .npy of the declared type can be (spec/text-format.md §4, "Files").
 *
 * Errors name the place as "SOURCE:LINE:COLUMN: message", where SOURCE is
 * `source_name` (NULL: "<text>"), LINE and COLUMN count from 1 and COLUMN
 * counts characters (UTF-8 code points). Parsing stops at the first error.
 * The static contract check is completed when the builder is sealed
 * (kiln_builder_encode / kiln_builder_save).
 *
 * @return KILN_OK with *out a builder to free with kiln_builder_free, or an
 *         error with *out NULL: KILN_ERR_MALFORMED (the text breaks the
 *         grammar), KILN_ERR_UNSUPPORTED_VERSION (header other than
 *         `kiln 1.0` and `kiln 1.1`), KILN_ERR_UNSUPPORTED_OP,
 *         KILN_ERR_INVALID_PROGRAM (names, literals, attributes the op
 *         registry refuses, files and evidence that disagree with their
 *         declaration, paths leaving base_dir, checks the input's dtype
 *         cannot take or with an empty or NaN range), KILN_ERR_IO / KILN_ERR_NPY
 *         (weight and evidence files), KILN_ERR_LIMIT (among others, a
 *         file too large for its declaration), KILN_ERR_OUT_OF_MEMORY, or
 *         any builder error.
 */
KILN_API KILN_NODISCARD kiln_status kiln_text_assemble(const char *text, size_t size,
                                                       const char *source_name,
                                                       const char *base_dir, kiln_builder **out,
                                                       kiln_error *err);

/**
 * Print `program` in canonical text form. Small constants (at most 16
 * elements) are written inline; every other weight is referenced as
 * `file "NAME.npy"`. Evidence tensors are referenced as
 * `file "evidence-CASE-NAME.npy"` (sanitised, made unique). With
 * `weights_dir` (an existing directory) every such file is written there
 * and every evidence tensor is a file, so the text reassembles to the same
 * bytes; with NULL nothing is written, small evidence tensors are inline
 * with their type, and each file line ends in a comment giving the first
 * 16 hex digits of the BLAKE2b-256 of the tensor's bytes.
 *
 * @return KILN_OK with *text a NUL-terminated string to free(), or an error
 *         with *text NULL: KILN_ERR_IO or KILN_ERR_NPY writing a file,
 *         KILN_ERR_OUT_OF_MEMORY, or KILN_ERR_INVALID_ARGUMENT for a NULL
 *         argument or a program the text cannot spell exactly (an evidence
 *         case whose outputs have different comparison rules, a float
 *         attribute with no literal, an empty float-list attribute).
 */
KILN_API KILN_NODISCARD kiln_status kiln_text_disassemble(const kiln_program *program,
                                                          const char *weights_dir, char **text,
                                                          kiln_error *err);

/*
 * A semantic check written on one line, as a tool takes it from its user
 * (`kiln import-onnx --check`, `kiln check add`): the input's name, then
 * the rules in the grammar of the text format's `check` statement
 * (spec/text-format.md §3.1), e.g.
 *
 *   x: range 0..1, finite
 *   ids: categories 0, 1, 2
 *   v: range -10..10, unit m/s, description "wind speed"
 */
typedef struct kiln_check_spec {
    char *input;            /* the input's name */
    kiln_input_check check; /* its categories, unit and description belong to the spec */
} kiln_check_spec;

/**
 * Parse `spec` (NUL-terminated, one line): NAME ':' then at least one rule,
 * rules separated by ',' or blanks. The input's dtype is not known here;
 * kiln_builder_set_input_check and kiln_artifact_add_input_checks judge
 * the check against it.
 *
 * Errors say what was wrong, where and how to fix it, as
 * "check 'SPEC': column C: message", e.g. an unknown rule, a missing ':',
 * a range whose MIN exceeds its MAX, a NaN bound, a rule given twice.
 *
 * @return KILN_OK with *out to free with kiln_check_spec_free, or an
 *         error with *out empty: KILN_ERR_MALFORMED (the grammar),
 *         KILN_ERR_INVALID_PROGRAM (an empty or NaN range, no categories),
 *         KILN_ERR_INVALID_ARGUMENT (NULL arguments),
 *         KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_check_spec_parse(const char *spec, kiln_check_spec *out,
                                                          kiln_error *err);

/** Free what kiln_check_spec_parse allocated and empty `spec` (NULL and empty specs are fine). */
KILN_API void kiln_check_spec_free(kiln_check_spec *spec);

#ifdef __cplusplus
}
#endif

#endif /* KILN_TEXT_H */
