/* load_limits.c — see load_limits.h. */
#include "load_limits.h"

#include <string.h>

#include <kiln/util.h>

#include "error.h"
#include "proof_budget.h"

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define LIMITS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_limits, max_replay_nodes)

static void limits_default(kiln_limits *limits)
{
    memset(limits, 0, sizeof *limits);
    limits->struct_size = sizeof *limits;
    limits->max_sections = 64;
    limits->max_string_length = 4096;
    limits->max_metadata = 256;
    limits->max_dims = 256;
    limits->max_expr_nodes = 65536;
    limits->max_inputs = 1024;
    limits->max_outputs = 1024;
    limits->max_weights = 65536;
    limits->max_nodes = 1000000;
    limits->max_node_inputs = 64;
    limits->max_opset_entries = 1024;
    limits->max_values = 4194304;
    limits->max_attributes = 64;
    limits->max_weight_bytes = UINT64_C(16) << 30;
    limits->max_decompressed_bytes = UINT64_C(16) << 30;
    limits->max_decompressed_program_bytes = UINT64_C(256) << 20;
    limits->max_arena_bytes = UINT64_C(4) << 30;
    limits->max_proof_steps = KILN_DEFAULT_MAX_PROOF_STEPS;
    /* Every case of a program of up to 1024 nodes (an artifact holds at
     * most max_outputs = 1024 cases); one case of a 10^6-node program,
     * which runs in about 1.3 s here. */
    limits->max_replay_nodes = UINT64_C(1) << 20;
    limits->max_methods = 64;
}

void kiln_limits_init(kiln_limits *limits, size_t struct_size)
{
    kiln_limits defaults;
    limits_default(&defaults);
    kiln_struct_fill(limits, struct_size, &defaults, sizeof defaults);
}

kiln_status kiln_limits_read(const kiln_limits *limits, kiln_limits *out, kiln_error *err)
{
    limits_default(out);
    return kiln_struct_read(out, sizeof *out, limits, LIMITS_SIZE_1_0, "kiln_limits", err);
}
