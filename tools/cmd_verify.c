/*
 * cmd_verify.c — `kiln verify FILE [--trust KEY.pub]... [--require-signature]`:
 * full integrity, authenticity and runnability, naming the check that failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int cmd_verify(int argc, char **argv);

const cli_verb cli_verb_verify = {
    "verify",
    "prove an artifact intact, authentic and runnable here",
    "usage: kiln verify FILE [--trust KEY.pub]... [--require-signature]\n\n"
    "Check FILE in full: structure, artifact digest, every section's CRC32 and\n"
    "BLAKE2b-256, the signature against the trusted keys, and that this runtime\n"
    "can run it (ops, dtypes, mode, memory plan). Exit 0 if everything holds,\n"
    "1 naming the check that failed.\n\n"
    "options:\n"
    "  --trust KEY.pub        accept signatures by this key (repeatable); an\n"
    "                         artifact signed by any other key is refused\n"
    "  --require-signature    refuse unsigned artifacts\n",
    cmd_verify,
};

/* The check a failure belongs to, for the report. */
static const char *check_of(kiln_status status)
{
    switch (status) {
    case KILN_ERR_IO: return "file";
    case KILN_ERR_TRUNCATED:
    case KILN_ERR_BAD_MAGIC:
    case KILN_ERR_HEADER_CRC:
    case KILN_ERR_TABLE_CRC:
    case KILN_ERR_TRAILER:
    case KILN_ERR_MALFORMED:
    case KILN_ERR_LIMIT: return "structure";
    case KILN_ERR_DIGEST_MISMATCH: return "digest";
    case KILN_ERR_SECTION_CRC: return "section checksum";
    case KILN_ERR_SECTION_HASH: return "section hash";
    case KILN_ERR_UNSIGNED:
    case KILN_ERR_UNTRUSTED_KEY:
    case KILN_ERR_BAD_SIGNATURE: return "signature";
    default: return "compatibility";
    }
}

static int load_trusted_keys(int count, const char **paths, kiln_public_key *keys)
{
    for (int k = 0; k < count; k++) {
        char *text;
        kiln_error err;
        if (cli_read_text_file(paths[k], 4096, &text) != CLI_OK)
            return CLI_FAILED;
        kiln_status status = kiln_public_key_parse(text, &keys[k], &err);
        free(text);
        if (status != KILN_OK)
            return cli_error("%s: %s", paths[k], err.message);
    }
    return CLI_OK;
}

static void print_report(const kiln_program *program, const char *path)
{
    uint16_t major, minor;
    uint8_t digest[32];
    char hex[65];
    kiln_signature_info signature;
    kiln_program_format_version(program, &major, &minor);
    kiln_program_artifact_digest(program, digest);
    cli_hex(digest, sizeof digest, hex);
    kiln_program_signature(program, &signature);
    printf("artifact   %s\n", path);
    printf("structure  ok (format %u.%u, %u sections)\n", major, minor, kiln_program_section_count(program));
    printf("digest     ok blake2b-256:%s\n", hex);
    printf("sections   ok (CRC32 and BLAKE2b-256 of every section, zero gaps)\n");
    cli_hex(signature.key_id, sizeof signature.key_id, hex);
    switch (signature.state) {
    case KILN_SIGNATURE_NONE: printf("signature  none (unsigned)\n"); break;
    case KILN_SIGNATURE_VERIFIED: printf("signature  ok, by trusted key %s\n", hex); break;
    case KILN_SIGNATURE_UNVERIFIED:
        printf("signature  present but not checked: key %s, no --trust key given\n", hex);
        break;
    }
    printf("runtime    ok (%u nodes; every op, dtype and the memory plan are supported)\n",
           kiln_program_node_count(program));
}

static int cmd_verify(int argc, char **argv)
{
    const char *path = NULL;
    const char **trust_paths = calloc((size_t)argc, sizeof *trust_paths);
    int trust_count = 0;
    bool require_signature = false;
    int rc = CLI_OK;
    if (!trust_paths)
        return cli_error("out of memory");
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        const char *value;
        int taken = cli_take_value("verify", argc, argv, &i, "--trust", &value);
        if (taken < 0)
            rc = CLI_USAGE;
        else if (taken)
            trust_paths[trust_count++] = value;
        else if (strcmp(argv[i], "--require-signature") == 0)
            require_signature = true;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            rc = cli_usage_error("verify", "unknown option '%s'", argv[i]);
        else if (path)
            rc = cli_usage_error("verify", "unexpected argument '%s'", argv[i]);
        else
            path = argv[i];
    }
    if (rc == CLI_OK && !path)
        rc = cli_usage_error("verify", "missing FILE");
    kiln_public_key *keys = calloc((size_t)trust_count + 1, sizeof *keys);
    if (rc == CLI_OK && !keys)
        rc = cli_error("out of memory");
    if (rc == CLI_OK)
        rc = load_trusted_keys(trust_count, trust_paths, keys);

    kiln_program *program = NULL;
    kiln_session *session = NULL;
    if (rc == CLI_OK) {
        kiln_load_options options;
        kiln_error err;
        kiln_load_options_default(&options);
        options.trusted_keys = keys;
        options.trusted_key_count = (uint32_t)trust_count;
        options.require_signature = require_signature;
        kiln_status status = kiln_program_load(path, &options, &program, &err);
        /* A session proves the memory plan fits the limits on this machine. */
        if (status == KILN_OK)
            status = kiln_session_new(program, NULL, &session, &err);
        if (status != KILN_OK)
            rc = cli_error("%s: %s check failed: %s", path, check_of(status), err.message);
        else
            print_report(program, path);
    }
    kiln_session_free(session);
    kiln_program_free(program);
    free(keys);
    free(trust_paths);
    return rc;
}
