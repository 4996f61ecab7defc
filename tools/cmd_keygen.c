/* cmd_keygen.c — `kiln keygen --out PREFIX`: a new Ed25519 signing key pair. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cli.h"
#include "options.h"

static int cmd_keygen(int argc, char **argv);

const cli_verb cli_verb_keygen = {
    "keygen",
    "make an Ed25519 key pair for signing artifacts",
    "usage: kiln keygen --out PREFIX [--force]\n\n"
    "Write PREFIX.key (the secret key, mode 0600) and PREFIX.pub (the public\n"
    "key to hand to whoever verifies), and print the key id. Both are one-line\n"
    "text files: 'kiln-ed25519-secret-v1 BASE64' and 'kiln-ed25519-public-v1 BASE64'.\n\n"
    "options:\n"
    "  --out PREFIX   where to write the two files\n"
    "  --force        replace existing files (refused by default): each is\n"
    "                 replaced by a new file renamed over it, never rewritten\n"
    "                 in place; a symbolic link is replaced, not followed\n",
    cmd_keygen,
};

/* Give `fd` exactly `mode` (the umask may have taken bits from it), write
 * `text`, fsync and close. @return CLI_OK, or CLI_FAILED after the error. */
static int fill_key_file(int fd, const char *path, const char *text, mode_t mode)
{
    if (fchmod(fd, mode) != 0) {
        close(fd);
        return cli_error("cannot set the mode of '%s': %s", path, strerror(errno));
    }
    size_t length = strlen(text);
    bool ok = write(fd, text, length) == (ssize_t)length && fsync(fd) == 0;
    if (close(fd) != 0 || !ok)
        return cli_error("cannot write '%s': %s", path, strerror(errno));
    return CLI_OK;
}

/* fsync the directory holding `path`, so a rename into it survives a crash;
 * a failure does not tear the file and is not reported. */
static void sync_directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/*
 * Write `text` to `path` with exactly `mode`. Without `force` the file is
 * created exclusively, so an existing file (or link) is never touched. With
 * `force` a new file is written beside the old one (mkstemp: private from
 * the start) and renamed over it. The old inode is never written: a
 * descriptor opened on the old file, perhaps while it was readable to
 * others, cannot read the new secret key through it. A symbolic link at
 * `path` is replaced, not followed.
 */
static int write_key_file(const char *path, const char *text, mode_t mode, bool force)
{
    if (!force) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
        if (fd < 0)
            return errno == EEXIST ? cli_error("'%s' exists; pass --force to replace it", path)
                                   : cli_error("cannot create '%s': %s", path, strerror(errno));
        return fill_key_file(fd, path, text, mode);
    }
    size_t length = strlen(path);
    char *temp_path = malloc(length + sizeof ".tmp-XXXXXX");
    if (!temp_path)
        return cli_error("out of memory");
    memcpy(temp_path, path, length);
    memcpy(temp_path + length, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
    int fd = mkstemp(temp_path);
    int rc = fd < 0 ? cli_error("cannot create a temporary file beside '%s': %s", path, strerror(errno))
                    : fill_key_file(fd, temp_path, text, mode);
    if (rc == CLI_OK && rename(temp_path, path) != 0)
        rc = cli_error("cannot replace '%s': %s", path, strerror(errno));
    if (rc == CLI_OK)
        sync_directory_of(path);
    else if (fd >= 0)
        unlink(temp_path);
    free(temp_path);
    return rc;
}

typedef struct keygen_args {
    const char *prefix;
    bool force;
} keygen_args;

static const cli_option keygen_option_list[] = {
    {.name = "--out", .arity = CLI_VALUE, .offset = offsetof(keygen_args, prefix)},
    {.name = "--force", .arity = CLI_FLAG, .offset = offsetof(keygen_args, force)},
};

static const cli_options keygen_options = CLI_OPTIONS("keygen", keygen_option_list, 0);

static int cmd_keygen(int argc, char **argv)
{
    keygen_args args = {NULL, false};
    int operands;
    int rc = cli_parse_options(&keygen_options, argc, argv, &args, NULL, &operands);
    if (rc != CLI_OK)
        return rc;
    const char *prefix = args.prefix;
    bool force = args.force;
    if (!prefix || !*prefix)
        return cli_usage_error("keygen", "missing --out PREFIX");

    kiln_public_key public_key;
    kiln_secret_key secret_key;
    kiln_error err;
    if (kiln_key_generate(&public_key, &secret_key, &err) != KILN_OK)
        return cli_error("%s", err.message);
    size_t path_size = strlen(prefix) + 8;
    char *secret_path = malloc(path_size), *public_path = malloc(path_size);
    char secret_text[256], public_text[128], id_hex[33];
    uint8_t id[16];
    if (!secret_path || !public_path) {
        rc = cli_error("out of memory");
        goto done;
    }
    snprintf(secret_path, path_size, "%s.key", prefix);
    snprintf(public_path, path_size, "%s.pub", prefix);
    /* Refuse before writing anything, so no half of a pair is left behind. */
    for (int i = 0; i < 2 && !force; i++) {
        const char *path = i ? public_path : secret_path;
        if (access(path, F_OK) == 0) {
            rc = cli_error("'%s' exists; pass --force to replace it", path);
            goto done;
        }
    }
    kiln_secret_key_format(&secret_key, secret_text, sizeof secret_text);
    kiln_public_key_format(&public_key, public_text, sizeof public_text);
    rc = write_key_file(secret_path, secret_text, 0600, force);
    if (rc == CLI_OK)
        rc = write_key_file(public_path, public_text, 0644, force);
    if (rc == CLI_OK) {
        kiln_key_id(&public_key, id);
        cli_hex(id, sizeof id, id_hex);
        if (!cli_quiet)
            printf("wrote %s (secret, mode 0600) and %s\nkey id %s\n", secret_path, public_path, id_hex);
    }
done:
    sodium_memzero(&secret_key, sizeof secret_key);
    sodium_memzero(secret_text, sizeof secret_text);
    free(secret_path);
    free(public_path);
    return rc;
}
