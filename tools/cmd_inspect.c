/* cmd_inspect.c — `kiln inspect FILE`: what an artifact is and what it accepts. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int cmd_inspect(int argc, char **argv);

const cli_verb cli_verb_inspect = {
    "inspect",
    "show versions, metadata, signature, dims, ops, weights and sections",
    "usage: kiln inspect FILE\n\n"
    "Verify FILE completely, then print its format version, program name and\n"
    "mode, artifact digest, metadata, dims with their ranges, the I/O signature,\n"
    "the ops used, the weights, and every section with its size and CRC32.\n",
    cmd_inspect,
};

static void print_overview(const kiln_program *p, const char *path)
{
    static const struct {
        kiln_identity identity;
        const char *label;
    } identities[] = {
        {KILN_IDENTITY_ARTIFACT, "artifact digest "},
        {KILN_IDENTITY_PROGRAM, "program identity"},
        {KILN_IDENTITY_STATE, "state identity  "},
    };
    uint16_t major, minor;
    uint8_t digest[32];
    char hex[65];
    kiln_signature_info signature;
    kiln_program_format_version(p, &major, &minor);
    printf("artifact   %s\n", path);
    printf("format     %u.%u\n", major, minor);
    printf("program    %s\n", kiln_program_name(p));
    printf("mode       %s\n", kiln_program_mode(p) == KILN_MODE_INFERENCE ? "inference" : "training");
    for (size_t i = 0; i < sizeof identities / sizeof identities[0]; i++) {
        kiln_program_identity(p, identities[i].identity, digest);
        cli_hex(digest, sizeof digest, hex);
        printf("%s  blake2b-256:%s\n", identities[i].label, hex);
    }
    kiln_program_signature(p, &signature);
    cli_hex(signature.key_id, sizeof signature.key_id, hex);
    if (signature.state == KILN_SIGNATURE_NONE)
        printf("signature  unsigned\n");
    else
        printf("signature  signed by key %s (not checked: use kiln verify --trust KEY.pub)\n", hex);
}

static void print_metadata(const kiln_program *p)
{
    uint32_t count = kiln_program_metadata_count(p);
    printf("\nmetadata (%u)\n", count);
    for (uint32_t i = 0; i < count; i++) {
        const char *key, *value;
        kiln_program_metadata(p, i, &key, &value);
        printf("  %s = \"%s\"\n", key, value);
    }
}

static void print_signature(const kiln_program *p)
{
    char shape[512];
    printf("\ndims (%u)\n", kiln_program_dim_count(p));
    for (uint32_t i = 0; i < kiln_program_dim_count(p); i++) {
        kiln_dim_info dim;
        kiln_program_dim(p, i, &dim);
        printf("  %-12s %lld..%lld\n", dim.name, (long long)dim.min, (long long)dim.max);
    }
    printf("\ninputs (%u)\n", kiln_program_input_count(p));
    for (uint32_t i = 0; i < kiln_program_input_count(p); i++) {
        kiln_io_info io;
        kiln_program_input(p, i, &io);
        kiln_program_input_shape_text(p, i, shape, sizeof shape);
        printf("  %-12s %s%s\n", io.name, kiln_dtype_name(io.dtype), shape);
    }
    printf("\noutputs (%u)\n", kiln_program_output_count(p));
    for (uint32_t i = 0; i < kiln_program_output_count(p); i++) {
        kiln_io_info io;
        kiln_program_output(p, i, &io);
        kiln_program_output_shape_text(p, i, shape, sizeof shape);
        printf("  %-12s %s%s\n", io.name, kiln_dtype_name(io.dtype), shape);
    }
}

/* Ops as a histogram "name vVERSION  count", in order of first use. */
static void print_ops(const kiln_program *p)
{
    uint32_t nodes = kiln_program_node_count(p);
    printf("\nops (%u node%s)\n", nodes, nodes == 1 ? "" : "s");
    for (uint32_t i = 0; i < nodes; i++) {
        kiln_node_info node, earlier;
        bool seen = false;
        kiln_program_node(p, i, &node);
        for (uint32_t j = 0; j < i && !seen; j++) {
            kiln_program_node(p, j, &earlier);
            seen = strcmp(earlier.op, node.op) == 0 && earlier.op_version == node.op_version;
        }
        if (seen)
            continue;
        uint32_t count = 0;
        for (uint32_t j = i; j < nodes; j++) {
            kiln_program_node(p, j, &earlier);
            count += strcmp(earlier.op, node.op) == 0 && earlier.op_version == node.op_version;
        }
        char label[96];
        snprintf(label, sizeof label, "%s v%u", node.op, node.op_version);
        printf("  %-12s %u\n", label, count);
    }
}

static void print_weights(const kiln_program *p)
{
    static const char *const kinds[] = {"parameter", "buffer", "constant"};
    uint32_t count = kiln_program_weight_count(p);
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        kiln_weight_info w;
        kiln_program_weight(p, i, &w);
        total += w.byte_size;
    }
    printf("\nweights (%u, %llu bytes)\n", count, (unsigned long long)total);
    for (uint32_t i = 0; i < count; i++) {
        kiln_weight_info w;
        char shape[256];
        size_t used = 0;
        kiln_program_weight(p, i, &w);
        for (uint32_t a = 0; a < w.rank; a++)
            used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%lld", a ? ", " : "",
                                     (long long)w.shape[a]);
        shape[used] = '\0';
        printf("  %-12s %-9s %s[%s]  %llu bytes\n", w.name, kinds[w.kind], kiln_dtype_name(w.dtype), shape,
               (unsigned long long)w.byte_size);
    }
}

static void print_sections(const kiln_program *p)
{
    printf("\nsections (%u)\n", kiln_program_section_count(p));
    printf("  %-4s  %-9s %3s %10s %10s %10s  %s\n", "type", "flags", "ver", "offset", "stored", "raw", "crc32");
    for (uint32_t i = 0; i < kiln_program_section_count(p); i++) {
        kiln_section_info s;
        kiln_program_section(p, i, &s);
        char flags[24];
        snprintf(flags, sizeof flags, "%s%s", s.critical ? "critical" : "ancillary", s.compressed ? ",zlib" : "");
        printf("  %-4s  %-9s %3u %10llu %10llu %10llu  %08x\n", s.type, flags, s.version,
               (unsigned long long)s.offset, (unsigned long long)s.stored_size, (unsigned long long)s.raw_size,
               s.crc32);
    }
}

static int cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("inspect", "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error("inspect", "unexpected argument '%s'", argv[i]);
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("inspect", "missing FILE");
    kiln_program *program;
    kiln_error err;
    if (kiln_program_load(path, NULL, &program, &err) != KILN_OK)
        return cli_error("%s: %s", path, err.message);
    print_overview(program, path);
    print_metadata(program);
    print_signature(program);
    print_ops(program);
    print_weights(program);
    print_sections(program);
    kiln_program_free(program);
    return CLI_OK;
}
