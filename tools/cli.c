/* cli.c — message and option helpers shared by the verbs. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "term.h"

bool cli_quiet = false;

/* Messages quote artifacts (names in library messages, paths): every
 * string argument goes through the terminal escaper. */
int cli_error(const char *fmt, ...)
{
    va_list args;
    fputs("kiln: error: ", stderr);
    va_start(args, fmt);
    term_vprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return CLI_FAILED;
}

void cli_warning(const char *fmt, ...)
{
    va_list args;
    fputs("kiln: warning: ", stderr);
    va_start(args, fmt);
    term_vprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}

void cli_warn_signature_removed(const kiln_signature_info *removed)
{
    if (removed->state == KILN_SIGNATURE_NONE)
        return;
    char key_id[2 * sizeof removed->key_id + 1];
    cli_hex(removed->key_id, sizeof removed->key_id, key_id);
    cli_warning("removed the signature by key %s; sign again with kiln sign", key_id);
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list args;
    fputs("kiln: error: ", stderr);
    va_start(args, fmt);
    term_vprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\nTry 'kiln %s --help'.\n", verb);
    return CLI_USAGE;
}

/* Whether `path` ends with `extension` (".onnx"), and if so its length without it. */
static bool has_extension(const char *path, const char *extension, size_t *stem)
{
    size_t length = strlen(path), ext = strlen(extension);
    if (length <= ext || strcmp(path + length - ext, extension) != 0)
        return false;
    *stem = length - ext;
    return true;
}

void cli_hint_not_artifact(const char *path)
{
    unsigned char head[8] = {0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    size_t stem = 0;
    /* An ONNX ModelProto starts with its ir_version (field 1, varint: 0x08 N). */
    bool onnx = has_extension(path, ".onnx", &stem) || (got >= 2 && head[0] == 0x08 && head[1] >= 1 && head[1] <= 15);
    bool text = has_extension(path, ".ktxt", &stem) || (got >= 5 && memcmp(head, "kiln ", 5) == 0);
    bool npy = has_extension(path, ".npy", &stem) || (got >= 6 && memcmp(head, "\x93NUMPY", 6) == 0);
    /* The artifact the hint's command would write: the same name with .kiln, or OUT.kiln. */
    int stem_length = stem ? (int)stem : 3;
    const char *named = stem ? path : "OUT";
    if (npy) {
        term_printf(stderr, "kiln: hint: %s is a NumPy array, not an artifact: give it to a program as an input, "
                            "kiln run FILE.kiln --input NAME=%s\n", path, path);
    } else if (text) {
        term_printf(stderr, "kiln: hint: %s looks like a kiln text program: assemble it first, "
                            "kiln asm %s -o %.*s.kiln\n", path, path, stem_length, named);
    } else if (onnx) {
#ifdef KILN_HAVE_ONNX
        const char *importer = "";
#else
        const char *importer = " (in a kiln built with the ONNX importer: protobuf-c)";
#endif
        term_printf(stderr, "kiln: hint: %s looks like an ONNX model: import it first%s, "
                            "kiln import-onnx %s -o %.*s.kiln [--dim NAME=MIN..MAX]...\n",
                    path, importer, path, stem_length, named);
    }
}

int cli_file_error(const char *path, const char *message)
{
    if (strstr(message, path))
        return cli_error("%s", message);
    return cli_error("%s: %s", path, message);
}

int cli_load_error(const char *path, const kiln_error *err)
{
    cli_file_error(path, err->message);
    if (err->code == KILN_ERR_BAD_MAGIC)
        cli_hint_not_artifact(path);
    return CLI_FAILED;
}

int cli_read_text_file(const char *path, size_t max_size, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_error("cannot open '%s': %s", path, strerror(errno));
    char *text = malloc(max_size + 1);
    if (!text) {
        fclose(f);
        return cli_error("out of memory");
    }
    size_t size = fread(text, 1, max_size + 1, f);
    bool failed = ferror(f);
    int read_errno = errno;
    fclose(f);
    if (failed || size > max_size) {
        free(text);
        return failed ? cli_error("cannot read '%s': %s", path, strerror(read_errno))
                      : cli_error("'%s' is larger than %zu bytes", path, max_size);
    }
    text[size] = '\0';
    *out = text;
    return CLI_OK;
}

void cli_hex(const uint8_t *bytes, size_t size, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < size; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * size] = '\0';
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_take_value(const char *verb, int argc, char **argv, int *index, const char *name,
                   const char **value)
{
    const char *arg = argv[*index];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*index + 1 >= argc) {
        cli_usage_error(verb, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*index];
    return 1;
}

int cli_make_directory(const char *dir)
{
    struct stat info;
    if (mkdir(dir, 0777) == 0)
        return CLI_OK;
    if (errno == EEXIST && stat(dir, &info) == 0 && S_ISDIR(info.st_mode))
        return CLI_OK;
    return cli_error("cannot create directory '%s': %s", dir, strerror(errno == EEXIST ? ENOTDIR : errno));
}

/* One step of cli_make_directories: `prefix` is DIR up to a separator. */
static int make_one_level(const char *dir, const char *prefix)
{
    struct stat info;
    if (mkdir(prefix, 0777) == 0)
        return CLI_OK;
    int cause = errno;
    if (cause == EEXIST && stat(prefix, &info) == 0 && S_ISDIR(info.st_mode))
        return CLI_OK;
    if (cause == EEXIST)
        return strcmp(prefix, dir) == 0
                   ? cli_error("cannot create directory '%s': it exists and is not a directory", dir)
                   : cli_error("cannot create directory '%s': '%s' exists and is not a directory", dir, prefix);
    return cli_error("cannot create directory '%s': %s", prefix, strerror(cause));
}

int cli_make_directories(const char *dir)
{
    if (!dir[0])
        return cli_error("cannot create a directory with an empty name");
    char *prefix = strdup(dir);
    if (!prefix)
        return cli_error("out of memory");
    int rc = CLI_OK;
    /* Each separator after the first character ends a parent ("/a/b":
     * "/a"; "a//b": "a", then "a/" which exists). */
    for (char *slash = strchr(prefix + 1, '/'); rc == CLI_OK && slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        rc = make_one_level(dir, prefix);
        *slash = '/';
    }
    if (rc == CLI_OK)
        rc = make_one_level(dir, prefix);
    free(prefix);
    return rc;
}

bool cli_parse_whole(const char *text, const char *end, int64_t *out)
{
    if (text == end)
        return false;
    int64_t value = 0;
    for (const char *c = text; c < end; c++) {
        if (*c < '0' || *c > '9' || value > (INT64_MAX - (*c - '0')) / 10)
            return false;
        value = value * 10 + (*c - '0');
    }
    *out = value;
    return true;
}
