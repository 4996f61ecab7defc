/*
 * cmd_disasm.c — `kiln disasm FILE [-o DIR]`: print an artifact's program
 * in canonical text form, or write it with its weight and evidence files into
 * a directory from which `kiln asm` rebuilds the artifact byte for byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/text.h>

#include <kiln/util.h>

#include "cli.h"
#include "load_args.h"
#include "options.h"
#include "term.h"

static int cmd_disasm(int argc, char **argv);

const cli_verb cli_verb_disasm = {
    "disasm",
    "print an artifact as a text program, or write text + weights to a directory",
    "usage: kiln disasm FILE [-o DIR]\n\n"
    "Verify and load the artifact FILE and print its program in canonical text\n"
    "form (spec/text-format.md). Constants of at most 16 elements are written\n"
    "inline. Without -o the text goes to standard output, evidence tensors of at\n"
    "most 16 elements are inline too, other weights and evidence tensors are not\n"
    "written, and their lines end in a comment with the digest of their bytes.\n"
    "With -o, DIR (created if missing) receives NAME.ktxt, NAME being the\n"
    "program name made safe as a file name, every other weight as WEIGHT.npy\n"
    "and every evidence tensor as evidence-CASE-TENSOR.npy; 'kiln asm\n"
    "DIR/NAME.ktxt -o FILE' then rebuilds FILE exactly. The path of the text\n"
    "file is printed. An artifact the text cannot spell exactly (an evidence\n"
    "case with a different rule per output) is refused.\n\n"
    "options:\n"
    "  -o, --output-dir DIR   write NAME.ktxt, the weight and the evidence files into DIR\n",
    cmd_disasm,
};

/* Longest file name stem made from a program name (file systems allow 255 bytes). */
#define MAX_STEM 200

/* The program name as a file name: [A-Za-z0-9_.-] kept, anything else '_',
 * no leading '.', never empty. */
static char *file_stem(const char *name)
{
    size_t length = strlen(name);
    if (length > MAX_STEM)
        length = MAX_STEM;
    char *stem = malloc(length + sizeof "program");
    if (!stem)
        return NULL;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || (c == '.' && i > 0);
        stem[i] = safe ? c : '_';
    }
    stem[length] = '\0';
    if (length == 0)
        strcpy(stem, "program");
    return stem;
}

/* The text goes in atomically, like the artifacts and weight files. */
static int write_text(const char *path, const char *text)
{
    kiln_error err;
    if (kiln_write_file_atomic(path, text, strlen(text), &err) != KILN_OK)
        return cli_error("%s", err.message);
    return CLI_OK;
}

/* Disassemble into DIR: weights first (by the library), then the text. */
static int write_directory(const kiln_program *program, const char *dir)
{
    kiln_error err;
    char *text = NULL, *stem = NULL, *path = NULL;
    int rc = cli_make_directory(dir);
    if (rc != CLI_OK)
        return rc;
    if (kiln_text_disassemble(program, dir, &text, &err) != KILN_OK)
        return cli_error("%s", err.message);
    stem = file_stem(kiln_program_name(program));
    size_t length = strlen(dir) + (stem ? strlen(stem) : 0) + sizeof "/.ktxt";
    path = stem ? malloc(length) : NULL;
    if (!path) {
        rc = cli_error("out of memory");
    } else {
        snprintf(path, length, "%s/%s.ktxt", dir, stem);
        rc = write_text(path, text);
        if (rc == CLI_OK)
            term_printf(stdout, "%s\n", path);
    }
    free(path);
    free(stem);
    free(text);
    return rc;
}

typedef struct disasm_args {
    const char *dir;
} disasm_args;

static const cli_option disasm_option_list[] = {
    {.name = "--output-dir", .short_name = "-o", .arity = CLI_VALUE, .repeat = CLI_ONCE,
     .twice = "the output directory is given twice", .offset = offsetof(disasm_args, dir)},
};

static const cli_options disasm_options = CLI_OPTIONS("disasm", disasm_option_list, 1);

static int cmd_disasm(int argc, char **argv)
{
    disasm_args args = {NULL};
    const char *path = NULL;
    int operands;
    int rc = cli_parse_options(&disasm_options, argc, argv, &args, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("disasm", "missing FILE");
    const char *dir = args.dir;

    kiln_program *program = NULL;
    kiln_error err;
    const load_args full = {.verb = "disasm", .verify = KILN_VERIFY_FULL};
    if (load_args_load(&full, path, &program) != CLI_OK)
        return CLI_FAILED;
    if (dir) {
        rc = write_directory(program, dir);
    } else {
        char *text = NULL;
        if (kiln_text_disassemble(program, NULL, &text, &err) != KILN_OK) {
            rc = cli_file_error(path, err.message);
        } else {
            rc = fputs(text, stdout) < 0 || fflush(stdout) != 0 ? cli_error("cannot write the text") : CLI_OK;
        }
        free(text);
    }
    kiln_program_free(program);
    return rc;
}
