/* cmd_version.c — `kiln version [--json]`: what this runtime reads and runs. */
#include <stdio.h>
#include <string.h>

#ifdef KILN_HAVE_ONNX
#include <kiln/onnx.h>
#endif

#include "cli.h"
#include "options.h"
#include "json.h"

static int cmd_version(int argc, char **argv);

const cli_verb cli_verb_version = {
    "version",
    "describe this runtime: format versions, ops, dtypes, limits, features",
    "usage: kiln version [--json]\n\n"
    "Print the library version, the artifact format versions this runtime\n"
    "reads, every op with the version range it implements, the dtypes and\n"
    "modes it runs, the default load limits and the build features.\n"
    "--json prints the same as one JSON object (spec/compatibility.md).\n",
    cmd_version,
};

static const kiln_dtype all_dtypes[] = {
    KILN_F32, KILN_F64, KILN_F16, KILN_BF16, KILN_I8, KILN_I16, KILN_I32,
    KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64, KILN_BOOL,
};
#define DTYPE_COUNT (sizeof all_dtypes / sizeof all_dtypes[0])

typedef struct limit_row {
    const char *name;
    unsigned long long value;
} limit_row;

static size_t limit_rows(limit_row *rows)
{
    kiln_limits l;
    kiln_limits_default(&l);
    size_t n = 0;
#define ROW(field) rows[n++] = (limit_row){#field, (unsigned long long)l.field}
    ROW(max_sections); ROW(max_string_length); ROW(max_metadata); ROW(max_dims); ROW(max_expr_nodes);
    ROW(max_inputs); ROW(max_outputs); ROW(max_weights); ROW(max_nodes); ROW(max_node_inputs);
    ROW(max_opset_entries); ROW(max_values); ROW(max_attributes); ROW(max_weight_bytes);
    ROW(max_decompressed_bytes); ROW(max_arena_bytes); ROW(max_decompressed_program_bytes);
    ROW(max_proof_steps); ROW(max_replay_nodes); ROW(max_methods);
#undef ROW
    return n;
}

/* The ONNX importer's reading limits (kiln_onnx_limits), when it is built in; 0 rows otherwise. */
static size_t onnx_limit_rows(limit_row *rows)
{
    size_t n = 0;
#ifdef KILN_HAVE_ONNX
    kiln_onnx_limits l;
    kiln_onnx_limits_default(&l);
#define ROW(field) rows[n++] = (limit_row){#field, (unsigned long long)l.field}
    ROW(max_file_bytes); ROW(max_nodes); ROW(max_initializers); ROW(max_attributes); ROW(max_node_inputs);
    ROW(max_graph_values); ROW(max_tensor_bytes); ROW(max_nesting_depth);
#undef ROW
#else
    (void)rows;
#endif
    return n;
}

static void print_text(void)
{
    uint16_t major, minor;
    limit_row rows[32];
    kiln_runtime_format_version(&major, &minor);
    printf("kiln %s\n", kiln_version());
    printf("format     reads %u.0 through %u.%u (newer minors if every critical part is known)\n", major, major,
           minor);
    printf("modes      inference\n");
    printf("dtypes    ");
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (kiln_dtype_is_supported(all_dtypes[i]))
            printf(" %s", kiln_dtype_name(all_dtypes[i]));
    printf("\nfeatures  ");
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        printf(" %s", *f);
    printf("\n\nops (%u)\n", kiln_runtime_op_count());
    for (uint32_t i = 0; i < kiln_runtime_op_count(); i++) {
        const char *name;
        uint32_t lo, hi;
        kiln_runtime_op(i, &name, &lo, &hi);
        if (lo == hi)
            printf("  %-16s v%u\n", name, lo);
        else
            printf("  %-16s v%u..v%u\n", name, lo, hi);
    }
    printf("\nlimits (defaults)\n");
    size_t n = limit_rows(rows);
    for (size_t i = 0; i < n; i++)
        printf("  %-30s %llu\n", rows[i].name, rows[i].value);
    n = onnx_limit_rows(rows);
    if (n)
        printf("\nONNX import limits (defaults)\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-30s %llu\n", rows[i].name, rows[i].value);
}

static void print_json(void)
{
    uint16_t major, minor;
    limit_row rows[32];
    json_writer w;
    kiln_runtime_format_version(&major, &minor);
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "kiln_version", kiln_version());
    json_key(&w, "format");
    json_begin_object(&w);
    json_member_uint(&w, "major", major);
    json_member_uint(&w, "minor", minor);
    json_end_object(&w);
    json_key(&w, "modes");
    json_begin_array(&w);
    json_string(&w, "inference");
    json_end_array(&w);
    json_key(&w, "dtypes");
    json_begin_array(&w);
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (kiln_dtype_is_supported(all_dtypes[i]))
            json_string(&w, kiln_dtype_name(all_dtypes[i]));
    json_end_array(&w);
    json_key(&w, "features");
    json_begin_array(&w);
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        json_string(&w, *f);
    json_end_array(&w);
    json_key(&w, "ops");
    json_begin_array(&w);
    for (uint32_t i = 0; i < kiln_runtime_op_count(); i++) {
        const char *name;
        uint32_t lo, hi;
        kiln_runtime_op(i, &name, &lo, &hi);
        json_begin_object(&w);
        json_member_string(&w, "name", name);
        json_member_uint(&w, "min_version", lo);
        json_member_uint(&w, "max_version", hi);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_key(&w, "limits");
    json_begin_object(&w);
    size_t n = limit_rows(rows);
    for (size_t i = 0; i < n; i++) {
        json_member_uint(&w, rows[i].name, rows[i].value);
    }
    json_end_object(&w);
    n = onnx_limit_rows(rows);
    if (n) {
        json_key(&w, "onnx_limits");
        json_begin_object(&w);
        for (size_t i = 0; i < n; i++)
            json_member_uint(&w, rows[i].name, rows[i].value);
        json_end_object(&w);
    }
    json_end_object(&w);
    json_finish(&w);
}

typedef struct version_args {
    bool json;
} version_args;

static const cli_option version_option_list[] = {
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(version_args, json)},
};

static const cli_options version_options = CLI_OPTIONS("version", version_option_list, 0);

static int cmd_version(int argc, char **argv)
{
    version_args args = {false};
    int operands;
    int rc = cli_parse_options(&version_options, argc, argv, &args, NULL, &operands);
    if (rc != CLI_OK)
        return rc;
    bool json = args.json;
    if (json)
        print_json();
    else
        print_text();
    return CLI_OK;
}
