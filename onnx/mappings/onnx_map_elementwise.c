/*
 * onnx_map_elementwise.c — elementwise mappings (declared in onnx_mapping.h).
 * Semantics follow the ONNX operator documentation of the opset versions
 * listed in each row of onnx_op_table.c.
 */
#include <math.h>
#include <string.h>

#include "onnx_mapping.h"
#include "onnx_model.h"

/* Same inputs, same attributes, another name. */
kiln_status onnx_map_rename(onnx_node *node, const char *kiln_op)
{
    /* Opsets 1..5 let a node name inputs it may overwrite in place: a hint with no effect on the result. */
    static const char *const skip[] = {"consumed_inputs", NULL};
    kiln_value inputs[64];
    uint32_t count = onnx_map_present_inputs(node);
    onnx_attrs list = {0};
    kiln_status status = onnx_map_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, skip);
    if (status == KILN_OK)
        status = onnx_map_refuse_extra_outputs(node, 1);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, count, inputs, &list);
    return status;
}

/*
 * The legacy broadcast of opsets 1..6 (onnx/defs Changelog, Add-1 and
 * Add-6): without `broadcast`, B has A's shape; with broadcast = 1, B's
 * sizes equal a contiguous run of A's, starting at `axis` when it is
 * given, else ending at A's last axis (a scalar B too). B gets trailing
 * size-1 axes so that NumPy broadcasting aligns it there, and the result
 * must have A's shape, so a B that would broadcast A (or not match) is
 * reported rather than broadcast in a way opset 6 does not define.
 */
static kiln_status legacy_binary(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2], y;
    kiln_dtype a_dtype, b_dtype, y_dtype;
    uint32_t a_rank, b_rank, y_rank;
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[0], &a_dtype, &a_rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[1], &b_dtype, &b_rank, NULL);
    if (status != KILN_OK)
        return status;
    int64_t broadcast = onnx_node_int(node, "broadcast", 0);
    const Onnx__AttributeProto *axis_attribute = onnx_node_attribute(node, "axis");
    if (broadcast != 0 && broadcast != 1)
        return onnx_node_unsupported(node, "attribute 'broadcast' is %lld; opset %lld takes 0 or 1", (long long)broadcast,
                                     (long long)node->opset);
    if (b_rank > a_rank)
        return onnx_node_unsupported(node, "B has rank %u, above A's %u: opset %lld broadcasts B to A only", b_rank,
                                     a_rank, (long long)node->opset);
    if (broadcast == 1 && axis_attribute) {
        int64_t axis = axis_attribute->i < 0 ? axis_attribute->i + a_rank : axis_attribute->i;
        if (axis < 0 || axis + b_rank > a_rank)
            return onnx_node_unsupported(node, "axis %lld does not place B (rank %u) inside A (rank %u)",
                                         (long long)axis_attribute->i, b_rank, a_rank);
        uint32_t trailing = a_rank - (uint32_t)axis - b_rank;
        if (trailing) {
            int64_t axes[KILN_MAX_RANK];
            for (uint32_t i = 0; i < trailing; i++)
                axes[i] = b_rank + i;
            onnx_attrs list = {0};
            onnx_attrs_ints(&list, "axes", axes, trailing);
            status = onnx_node_emit(node, "unsqueeze", 1, &inputs[1], list.count, list.items, &inputs[1]);
        }
    }
    for (uint32_t i = 0; status == KILN_OK && broadcast == 0 && i < a_rank; i++) {
        char a_size[128] = "", b_size[128] = "";
        status = onnx_node_axis_text(node, inputs[0], i, a_size, sizeof a_size);
        if (status == KILN_OK && b_rank == a_rank)
            status = onnx_node_axis_text(node, inputs[1], i, b_size, sizeof b_size);
        if (status == KILN_OK && b_rank != a_rank)
            return onnx_node_unsupported(node, "broadcast = 0 needs B of A's shape (opset %lld): B has rank %u, A %u",
                                         (long long)node->opset, b_rank, a_rank);
        if (status == KILN_OK && strcmp(a_size, b_size) != 0)
            return onnx_node_unsupported(node, "broadcast = 0 needs B of A's shape (opset %lld): axis %u of B is %s, "
                                               "A's is %s",
                                         (long long)node->opset, i, b_size, a_size);
    }
    if (status == KILN_OK && strcmp(node->proto->op_type, "Pow") == 0 && a_dtype != b_dtype &&
        (a_dtype == KILN_F32 || a_dtype == KILN_F64))
        status = onnx_map_cast_to(node, &inputs[1], a_dtype);
    if (status == KILN_OK)
        status = onnx_node_emit(node, kiln_op, 2, inputs, 0, NULL, &y);
    if (status == KILN_OK)
        status = onnx_node_type(node, y, &y_dtype, &y_rank, NULL);
    for (uint32_t i = 0; status == KILN_OK && i < a_rank; i++) {
        char a_size[128], y_size[128];
        status = onnx_node_axis_text(node, inputs[0], i, a_size, sizeof a_size);
        if (status == KILN_OK)
            status = onnx_node_axis_text(node, y, i, y_size, sizeof y_size);
        if (status == KILN_OK && strcmp(a_size, y_size) != 0)
            return onnx_node_unsupported(node, "broadcast = 1: axis %u of the result is %s, A's is %s: opset %lld "
                                               "broadcasts B to A's shape only",
                                         i, y_size, a_size, (long long)node->opset);
    }
    return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
}

/*
 * Mul(x, Sigmoid(x)) in either order, as PyTorch exports SiLU (and
 * EfficientNet's and MobileNet's swish): the input index (0 or 1) of x,
 * or -1. The Sigmoid must be of the default domain and compute its input's
 * own function of x.
 */
static int silu_operand(onnx_node *node)
{
    const Onnx__NodeProto *p = node->proto;
    if (strcmp(p->op_type, "Mul") != 0 || p->n_input != 2 || !p->input[0][0] || !p->input[1][0])
        return -1;
    for (int i = 0; i < 2; i++) {
        const Onnx__NodeProto *s = onnx_node_producer(node, p->input[i]);
        if (!s)
            continue;
        bool default_domain = !s->domain || !s->domain[0] || strcmp(s->domain, "ai.onnx") == 0;
        if (default_domain && strcmp(s->op_type, "Sigmoid") == 0 && s->n_input == 1 &&
            strcmp(s->input[0], p->input[1 - i]) == 0)
            return 1 - i;
    }
    return -1;
}

/*
 * x * sigmoid(x) as one silu node: one pass instead of two (the sigmoid
 * node is then read by nobody and not run, liveness.h, unless something
 * else reads it). silu rounds once where the pair rounds the sigmoid and
 * then the product: its result is within 1 ulp of theirs (spec/onnx-import.md).
 * For f32 and f64 x.
 */
static kiln_status map_silu(onnx_node *node, int x_index, bool *mapped)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    *mapped = false;
    kiln_status status = onnx_node_input(node, (uint32_t)x_index, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status != KILN_OK || (dtype != KILN_F32 && dtype != KILN_F64))
        return status;
    *mapped = true;
    return onnx_map_emit_output(node, "silu", 1, &x, NULL);
}

kiln_status onnx_map_binary(onnx_node *node, const char *kiln_op)
{
    if (node->opset < 7)
        return legacy_binary(node, kiln_op);
    int x_index = silu_operand(node);
    if (x_index >= 0) {
        bool mapped;
        kiln_status status = map_silu(node, x_index, &mapped);
        if (status != KILN_OK || mapped)
            return status;
    }
    return strcmp(node->proto->op_type, "Pow") == 0 ? onnx_map_pow(node, kiln_op) : onnx_map_rename(node, kiln_op);
}

/* The ONNX element type a Cast-1 `to` string names (TensorProto.DataType's names). @return 0 if none. */
static int32_t legacy_cast_type(const char *name)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                        "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
    for (int32_t i = 1; i < (int32_t)(sizeof names / sizeof names[0]); i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return 0;
}

/*
 * ONNX leaves a cast from a float to an integer of a value outside the
 * integer's range (an infinity among them) undefined; kiln's cast fails
 * the run on one. PyTorch exports compute such casts and then discard
 * them: T5's relative position buckets cast log(0) = -inf to int64 and a
 * Where picks the other branch. So the importer saturates first: a clip
 * to the integer range's bounds as values of x's dtype (exact there, so no
 * value in range moves), then the cast. A NaN still fails the run.
 * @return false when no clip is needed (not float to integer).
 */
static bool saturating_bounds(kiln_dtype from, kiln_dtype to, double *lo, double *hi)
{
    int digits, max_exponent; /* significand bits, and 2^max_exponent just above the largest finite */
    switch (from) {
    case KILN_F64: digits = 53, max_exponent = 1024; break;
    case KILN_F32: digits = 24, max_exponent = 128; break;
    case KILN_BF16: digits = 8, max_exponent = 128; break;
    case KILN_F16: digits = 11, max_exponent = 16; break;
    default: return false;
    }
    int bits;
    bool is_signed;
    switch (to) {
    case KILN_I8: bits = 7, is_signed = true; break;
    case KILN_I16: bits = 15, is_signed = true; break;
    case KILN_I32: bits = 31, is_signed = true; break;
    case KILN_I64: bits = 63, is_signed = true; break;
    case KILN_U8: bits = 8, is_signed = false; break;
    case KILN_U16: bits = 16, is_signed = false; break;
    case KILN_U32: bits = 32, is_signed = false; break;
    case KILN_U64: bits = 64, is_signed = false; break;
    default: return false;
    }
    /* The integers lie in [-2^bits, 2^bits - 1] (or [0, 2^bits - 1]); in `from`, the largest value at
     * most 2^bits - 1 is 2^bits - 2^(bits - digits) when that is below 2^bits - 1, and the largest
     * finite value when the range goes past it. */
    double largest = ldexp(1.0 - ldexp(1.0, -digits), max_exponent);
    double top = bits <= digits ? ldexp(1.0, bits) - 1 : ldexp(1.0, bits) - ldexp(1.0, bits - digits);
    *hi = fmin(top, largest);
    *lo = is_signed ? fmax(-ldexp(1.0, bits), -largest) : 0.0;
    return true;
}

kiln_status onnx_map_cast(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype to;
    kiln_error dtype_err;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status != KILN_OK)
        return status;
    int32_t type = (int32_t)onnx_node_int(node, "to", 0);
    if (node->opset < 6) { /* Cast-1 names the type as a string */
        char text[32];
        type = legacy_cast_type(onnx_node_string(node, "to", "", text, sizeof text));
    }
    if (onnx_dtype_to_kiln(type, &to, &dtype_err) != KILN_OK)
        return onnx_node_unsupported(node, "attribute 'to': %s", dtype_err.message);
    kiln_dtype from;
    uint32_t rank;
    double lo, hi;
    status = onnx_node_type(node, x, &from, &rank, NULL);
    if (status == KILN_OK && saturating_bounds(from, to, &lo, &hi)) {
        onnx_attrs bounds = {0};
        onnx_attrs_float(&bounds, "min", lo);
        onnx_attrs_float(&bounds, "max", hi);
        status = onnx_node_emit(node, "clip", 1, &x, bounds.count, bounds.items, &x);
    }
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    const char *name = kiln_dtype_name(to);
    onnx_attrs_string(&list, "to", name, strlen(name));
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

kiln_status onnx_map_clip(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    if (node->opset < 11) {
        onnx_attrs_float(&list, "min", onnx_node_float(node, "min", -INFINITY));
        onnx_attrs_float(&list, "max", onnx_node_float(node, "max", INFINITY));
        return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    }
    /* Constant bounds become clip's attributes; computed ones (or min > max, where ONNX gives max) max/min ops. */
    double bounds[3] = {0, -INFINITY, INFINITY};
    bool constant = true;
    for (uint32_t k = 1; k <= 2 && status == KILN_OK; k++) {
        if (!onnx_node_has_input(node, k))
            continue;
        if (onnx_node_is_constant(node, k))
            status = onnx_map_constant_scalar(node, k, &bounds[k]);
        else
            constant = false;
    }
    if (status != KILN_OK)
        return status;
    if (constant && !(bounds[1] > bounds[2])) {
        onnx_attrs_float(&list, "min", bounds[1]);
        onnx_attrs_float(&list, "max", bounds[2]);
        return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    }
    kiln_value y = x;
    static const char *const ops[] = {NULL, "max", "min"};
    for (uint32_t k = 1; k <= 2; k++) {
        if (!onnx_node_has_input(node, k))
            continue;
        kiln_value operands[2] = {y, 0};
        status = onnx_node_input(node, k, &operands[1]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, ops[k], 2, operands, 0, NULL, &y);
        if (status != KILN_OK)
            return status;
    }
    return onnx_node_set_output(node, 0, y);
}

/* BitShift: ONNX spells the direction "LEFT" / "RIGHT", kiln "left" / "right". */
kiln_status onnx_map_bitshift(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    char text[16];
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    const char *direction = onnx_node_string(node, "direction", "", text, sizeof text);
    const char *kiln_direction = strcmp(direction, "LEFT") == 0 ? "left" : strcmp(direction, "RIGHT") == 0 ? "right" : NULL;
    if (!kiln_direction)
        return onnx_node_unsupported(node, "attribute 'direction' is \"%s\", not \"LEFT\" or \"RIGHT\"", direction);
    onnx_attrs list = {0};
    onnx_attrs_string(&list, "direction", kiln_direction, strlen(kiln_direction));
    return onnx_map_emit_output(node, kiln_op, 2, inputs, &list);
}

/* Pow: ONNX lets the exponent have another dtype; kiln does not promote, so it is cast to the base's. */
kiln_status onnx_map_pow(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status == KILN_OK && (dtype == KILN_F32 || dtype == KILN_F64))
        status = onnx_map_cast_to(node, &inputs[1], dtype);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 2, inputs, NULL);
    return status;
}

/* CastLike: a cast to the dtype of input 1. */
kiln_status onnx_map_cast_like(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value inputs[2];
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    kiln_dtype from;
    double lo, hi;
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[1], &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[0], &from, &rank, NULL);
    if (status == KILN_OK && saturating_bounds(from, dtype, &lo, &hi)) {
        onnx_attrs bounds = {0}; /* saturated as Cast is, above */
        onnx_attrs_float(&bounds, "min", lo);
        onnx_attrs_float(&bounds, "max", hi);
        status = onnx_node_emit(node, "clip", 1, &inputs[0], bounds.count, bounds.items, &inputs[0]);
    }
    if (status == KILN_OK)
        status = onnx_map_cast_to(node, &inputs[0], dtype);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "identity", 1, inputs, NULL);
    return status;
}

/* PRelu: where(x < 0, slope * x, x). */
kiln_status onnx_map_prelu(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, slope = 0, zero = 0, negative = 0, scaled = 0;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_map_inputs(node, 0, 1, &x);
    if (status == KILN_OK)
        status = onnx_node_input(node, 1, &slope);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, 0.0, &zero);
    kiln_value pair[2] = {x, zero};
    if (status == KILN_OK)
        status = onnx_node_emit(node, "lt", 2, pair, 0, NULL, &negative);
    pair[1] = slope;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &scaled);
    kiln_value triple[3] = {negative, scaled, x};
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "where", 3, triple, NULL);
    return status;
}
