/*
 * cli.h — conventions shared by every kiln verb: exit codes, the
 * "kiln: error: ..." message form, and small helpers.
 */
#ifndef KILN_TOOLS_CLI_H
#define KILN_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

enum {
    CLI_OK = 0,       /* success */
    CLI_FAILED = 1,   /* the check or run failed, or the input was rejected */
    CLI_USAGE = 2,    /* the command line itself was wrong */
};

/* Set by --quiet/-q on any verb: no progress, no chatter, only results and errors. */
extern bool cli_quiet;

/* Print "kiln: error: <message>" to stderr, every %s and %c argument
 * escaped by term_escape (term.h): library messages quote artifacts.
 * @return CLI_FAILED. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "kiln: warning: <message>" to stderr, escaped as by cli_error;
 * for what the user must know though the verb succeeded. */
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Warn that a rewrite removed `removed`, the signature the file had
 * (nothing when it had none): the new digest is not signed. */
void cli_warn_signature_removed(const kiln_signature_info *removed);

/* For a file that is not a kiln artifact (KILN_ERR_BAD_MAGIC): when its
 * name or first bytes show it is an ONNX model, a text program or a .npy
 * array, print a "kiln: hint:" naming the command that makes an artifact
 * of it (import-onnx, asm) or takes it (run --input). */
void cli_hint_not_artifact(const char *path);

/* Print "kiln: error: PATH: <message>" for a problem with the file at
 * `path`, or just the message when it already names the file (messages of
 * I/O errors quote the path themselves: said once, not twice).
 * @return CLI_FAILED. */
int cli_file_error(const char *path, const char *message);

/* Print "kiln: error: PATH: <err's message>" for an artifact that could not
 * be loaded, and cli_hint_not_artifact's hint when it is not one.
 * @return CLI_FAILED. */
int cli_load_error(const char *path, const kiln_error *err);

/* Print "kiln: error: <message>" (escaped as by cli_error) and a hint to
 * run --help. @return CLI_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The verbs read their command line with an option table (options.h);
 * import-onnx and onnx-test still call this one option at a time.
 *
 * If argv[*index] is `--name VALUE` or `--name=VALUE`, store VALUE, advance
 * *index past it and return 1; return 0 if the option is another one;
 * return -1 (after printing a usage error) if the value is missing.
 */
int cli_take_value(const char *verb, int argc, char **argv, int *index, const char *name,
                   const char **value);

/* @return true if argv[i] is -h or --help. */
bool cli_is_help(const char *arg);

/* Creates directory DIR unless it already exists as a directory; reports the
 * error itself. @return CLI_OK or CLI_FAILED. */
int cli_make_directory(const char *dir);

/* Creates directory DIR and any of its parents that do not exist (mkdir -p);
 * a part of the path that exists but is not a directory is an error naming
 * it, reported here. @return CLI_OK or CLI_FAILED. */
int cli_make_directories(const char *dir);

/* A verb: its name, one-line summary, usage text, and entry point. */
typedef struct cli_verb {
    const char *name;
    const char *summary;
    const char *usage;
    int (*main)(int argc, char **argv); /* argv[0] is the verb name */
} cli_verb;

/*
 * Read a whole text file of at most `max_size` bytes into a NUL-terminated
 * heap string. @return CLI_OK, or CLI_FAILED after printing the error.
 */
int cli_read_text_file(const char *path, size_t max_size, char **out);

/* A whole number >= 0 spelled by exactly the digits in [text, end), without
 * overflow. @return false for anything else (empty, a sign, other characters). */
bool cli_parse_whole(const char *text, const char *end, int64_t *out);

/* Lower-case hex of `size` bytes into `out` (2 * size + 1 chars). */
void cli_hex(const uint8_t *bytes, size_t size, char *out);

extern const cli_verb cli_verb_inspect;
extern const cli_verb cli_verb_run;
extern const cli_verb cli_verb_verify;
extern const cli_verb cli_verb_keygen;
extern const cli_verb cli_verb_sign;
extern const cli_verb cli_verb_version;
extern const cli_verb cli_verb_evidence;
extern const cli_verb cli_verb_check;
extern const cli_verb cli_verb_probe;
extern const cli_verb cli_verb_bench;
extern const cli_verb cli_verb_generate;

/* The text format: cmd_asm.c, cmd_disasm.c. */
extern const cli_verb cli_verb_asm;
extern const cli_verb cli_verb_disasm;

/* Inspection: cmd_dot.c, cmd_diff.c (cmd_inspect.c above). */
extern const cli_verb cli_verb_dot;
extern const cli_verb cli_verb_diff;

/* The ONNX importer (meson feature 'onnx'): cmd_import_onnx.c, cmd_onnx_test.c. */
extern const cli_verb cli_verb_import_onnx;
extern const cli_verb cli_verb_onnx_test;

#endif
