/* cmd_sign.c — `kiln sign FILE --key PREFIX.key [-o OUT]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli.h"
#include "options.h"
#include "progress_bar.h"
#include "term.h"

static int cmd_sign(int argc, char **argv);

const cli_verb cli_verb_sign = {
    "sign",
    "sign an artifact with an Ed25519 secret key",
    "usage: kiln sign FILE --key PREFIX.key [-o OUT]\n\n"
    "Verify FILE in full, then sign its digest. Only the trailer changes, so\n"
    "digests and identities stay the same. FILE is replaced atomically unless\n"
    "-o names another output; the new file keeps the old one's mode (and its\n"
    "owner and group where allowed). If the output is a symbolic link, the file\n"
    "it points to is signed and the link is left as it is.\n\n"
    "options:\n"
    "  --key PATH     the secret key written by 'kiln keygen'\n"
    "  -o, --output OUT  write the signed artifact to OUT instead\n",
    cmd_sign,
};

typedef struct sign_args {
    const char *key_path, *out_path;
} sign_args;

static const cli_option sign_option_list[] = {
    {.name = "--key", .arity = CLI_VALUE, .offset = offsetof(sign_args, key_path)},
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .offset = offsetof(sign_args, out_path)},
};

static const cli_options sign_options = CLI_OPTIONS("sign", sign_option_list, 1);

static int cmd_sign(int argc, char **argv)
{
    sign_args args = {NULL, NULL};
    const char *path = NULL, *key_path, *out_path;
    int operands;
    int rc = cli_parse_options(&sign_options, argc, argv, &args, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("sign", "missing FILE");
    if (!args.key_path)
        return cli_usage_error("sign", "missing --key PREFIX.key");
    key_path = args.key_path;
    out_path = args.out_path;

    char *text;
    if (cli_read_text_file(key_path, 4096, &text) != CLI_OK)
        return CLI_FAILED;
    kiln_secret_key key;
    kiln_error err;
    kiln_status status = kiln_secret_key_parse(text, &key, &err);
    sodium_memzero(text, strlen(text));
    free(text);
    if (status != KILN_OK)
        return cli_file_error(key_path, err.message);
    cli_progress progress;
    kiln_load_options options;
    cli_progress_init(&progress, "signing");
    kiln_load_options_default(&options);
    options.progress = cli_progress_update;
    options.progress_user = &progress;
    status = kiln_artifact_sign(path, out_path, &key, &options, &err);
    cli_progress_finish(&progress);
    kiln_public_key public_key;
    memcpy(public_key.bytes, key.bytes + 32, sizeof public_key.bytes);
    sodium_memzero(&key, sizeof key);
    if (status != KILN_OK)
        return cli_load_error(path, &err);
    uint8_t id[16];
    char id_hex[33];
    kiln_key_id(&public_key, id);
    cli_hex(id, sizeof id, id_hex);
    if (!cli_quiet)
        term_printf(stdout, "signed %s with key id %s\n", out_path ? out_path : path, id_hex);
    return CLI_OK;
}
