/*
 * cmd_asm.c — `kiln asm TEXT -o FILE`: assemble the text format into a
 * sealed artifact. Parsing, the builder's checks and the static contract
 * check at sealing all happen before anything is written, and the write is
 * atomic, so a failed run leaves no FILE behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/text.h>

#include "arena_report.h"
#include "cli.h"
#include "options.h"
#include "progress_bar.h"

static int cmd_asm(int argc, char **argv);

const cli_verb cli_verb_asm = {
    "asm",
    "assemble a text program (.ktxt) into an artifact",
    "usage: kiln asm TEXT -o FILE [--compress[=LEVEL]] [--memory-plan] [--files-dir DIR]\n\n"
    "Parse the text program TEXT (spec/text-format.md), check it against the\n"
    "static shape contract, and seal it into the artifact FILE. Weight and\n"
    "evidence files named in TEXT (file \"PATH\") are read relative to TEXT's\n"
    "directory, and only from inside it: no absolute path, no '..', no link\n"
    "leading out, regular files only; 'kiln verify FILE' replays the evidence\n"
    "cases. When TEXT is '-', the text is read from standard input and paths\n"
    "are relative to the current directory. Nothing is written if parsing or a\n"
    "check fails; errors name the place as TEXT:LINE:COLUMN.\n\n"
    "options:\n"
    "  -o, --output FILE   the artifact to write (required)\n"
    "  --compress[=LEVEL]  store the weight data zlib-compressed at LEVEL 1..9\n"
    "                      (default 6); it is inflated into memory when loaded\n"
    "  --memory-plan       store the memory plan in the artifact (section PLAN,\n"
    "                      format 1.1); without it a loader plans the arena\n"
    "  --files-dir DIR     read the files the text names from inside DIR instead\n"
    "                      of TEXT's directory\n",
    cmd_asm,
};

/* Read all of `f` into a heap buffer; text programs have no size limit. */
static int read_all(FILE *f, const char *name, char **out, size_t *size)
{
    size_t capacity = 0, length = 0;
    char *data = NULL;
    for (;;) {
        if (length == capacity) {
            size_t wanted = capacity ? capacity * 2 : 65536;
            char *grown = wanted > capacity ? realloc(data, wanted) : NULL;
            if (!grown) {
                free(data);
                return cli_error("out of memory reading '%s'", name);
            }
            data = grown;
            capacity = wanted;
        }
        size_t got = fread(data + length, 1, capacity - length, f);
        length += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int read_errno = errno;
        free(data);
        return cli_error("cannot read '%s': %s", name, strerror(read_errno));
    }
    *out = data;
    *size = length;
    return CLI_OK;
}

/* The directory part of `path` ("." when it has none). */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

typedef struct asm_args {
    const char *output;
    const char *files_dir; /* NULL: TEXT's directory */
    int compression; /* 0: stored uncompressed */
    bool memory_plan;
} asm_args;

/* --compress (level 6) or --compress=LEVEL, LEVEL one digit 1..9. */
static int take_compress(void *args, const char *level)
{
    asm_args *a = args;
    if (!level) {
        a->compression = 6;
        return CLI_OK;
    }
    if (level[0] < '1' || level[0] > '9' || level[1] != '\0')
        return cli_usage_error("asm", "--compress takes a level from 1 to 9, got '%s'", level);
    a->compression = level[0] - '0';
    return CLI_OK;
}

static const cli_option asm_option_list[] = {
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .repeat = CLI_ONCE,
     .twice = "the output is given twice", .offset = offsetof(asm_args, output)},
    {.name = "--compress", .arity = CLI_OPTIONAL_VALUE, .handle = take_compress},
    {.name = "--memory-plan", .arity = CLI_FLAG, .offset = offsetof(asm_args, memory_plan)},
    {.name = "--files-dir", .arity = CLI_VALUE, .repeat = CLI_ONCE, .twice = "--files-dir is given twice",
     .offset = offsetof(asm_args, files_dir)},
};

static const cli_options asm_options = CLI_OPTIONS("asm", asm_option_list, 1);

static int parse_args(int argc, char **argv, const char **text_path, asm_args *args)
{
    int operands;
    *text_path = NULL;
    *args = (asm_args){NULL, NULL, 0, false};
    int rc = cli_parse_options(&asm_options, argc, argv, args, text_path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!*text_path)
        return cli_usage_error("asm", "missing TEXT");
    if (!args->output)
        return cli_usage_error("asm", "missing -o FILE");
    return CLI_OK;
}

static kiln_status save(const kiln_builder *builder, const char *output, int compression, bool memory_plan,
                        kiln_error *err)
{
    kiln_save_options options;
    cli_progress progress;
    kiln_save_options_default(&options);
    options.compression_level = compression;
    options.store_memory_plan = memory_plan;
    cli_progress_init(&progress, compression ? "compressing" : "sealing");
    options.progress = cli_progress_update;
    options.progress_user = &progress;
    kiln_status status = kiln_builder_save(builder, output, &options, err);
    cli_progress_finish(&progress);
    return status;
}

static int cmd_asm(int argc, char **argv)
{
    const char *text_path;
    asm_args args;
    int rc = parse_args(argc, argv, &text_path, &args);
    if (rc != CLI_OK)
        return rc;
    bool from_stdin = strcmp(text_path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(text_path, "rb");
    if (!f)
        return cli_error("cannot open '%s': %s", text_path, strerror(errno));
    char *text = NULL;
    size_t size = 0;
    rc = read_all(f, text_path, &text, &size);
    if (!from_stdin)
        fclose(f);
    if (rc != CLI_OK)
        return rc;
    char *base_dir = args.files_dir ? strdup(args.files_dir) : from_stdin ? strdup(".") : directory_of(text_path);
    kiln_builder *builder = NULL;
    kiln_error err;
    if (!base_dir) {
        rc = cli_error("out of memory");
    } else if (kiln_text_assemble(text, size, from_stdin ? "<stdin>" : text_path, base_dir, &builder, &err) !=
               KILN_OK) {
        rc = cli_error("%s", err.message);
    } else if (save(builder, args.output, args.compression, args.memory_plan, &err) != KILN_OK) {
        /* Sealing runs the whole-program contract check, whose messages
         * name the input, node or output of the text; a write error names
         * the output itself. */
        rc = err.code == KILN_ERR_IO ? cli_error("%s", err.message) : cli_file_error(text_path, err.message);
    } else {
        arena_report_after_write(args.output);
    }
    kiln_builder_free(builder);
    free(base_dir);
    free(text);
    return rc;
}
