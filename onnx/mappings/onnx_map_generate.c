/*
 * onnx_map_generate.c — generator mappings (declared in onnx_mapping.h).
 */
#include <math.h>
#include <string.h>

#include "onnx_mapping.h"

/* CumSum and Trilu: an integer operand (axis, k) that kiln takes as an attribute. */
static kiln_status onnx_map_scalar_operand(onnx_node *node, const char *kiln_op, const char *name)
{
    kiln_value x;
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && onnx_node_has_input(node, 1)) {
        double value;
        status = onnx_map_constant_scalar(node, 1, &value);
        if (status == KILN_OK)
            onnx_attrs_int(&list, name, (int64_t)value);
    }
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, NULL);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

kiln_status onnx_map_cumsum(onnx_node *node, const char *kiln_op)
{
    return onnx_map_scalar_operand(node, kiln_op, "axis");
}

kiln_status onnx_map_trilu(onnx_node *node, const char *kiln_op)
{
    return onnx_map_scalar_operand(node, kiln_op, "k");
}

kiln_status onnx_map_one_hot(onnx_node *node, const char *kiln_op)
{
    kiln_value indices;
    double depth;
    const kiln_tensor *values;
    kiln_dtype index_dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &indices);
    if (status == KILN_OK)
        status = onnx_node_type(node, indices, &index_dtype, &rank, NULL);
    /* ONNX takes indices of any numeric type (cast to integers); kiln takes i32 or i64. */
    if (status == KILN_OK && index_dtype != KILN_I32 && index_dtype != KILN_I64)
        status = onnx_map_cast_to(node, &indices, KILN_I64);
    if (status == KILN_OK)
        status = onnx_map_constant_scalar(node, 1, &depth);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 2, &values);
    if (status != KILN_OK)
        return status;
    kiln_dtype dtype = kiln_tensor_dtype(values);
    if (kiln_tensor_element_count(values) != 2 || (dtype != KILN_F32 && dtype != KILN_F64 && dtype != KILN_I64 &&
                                                   dtype != KILN_I32))
        return onnx_node_unsupported(node, "values must be two f32, f64, i32 or i64 values");
    double off, on;
    const void *p = kiln_tensor_const_data(values);
    switch (dtype) {
    case KILN_F32: off = ((const float *)p)[0], on = ((const float *)p)[1]; break;
    case KILN_F64: off = ((const double *)p)[0], on = ((const double *)p)[1]; break;
    case KILN_I32: off = ((const int32_t *)p)[0], on = ((const int32_t *)p)[1]; break;
    default: off = (double)((const int64_t *)p)[0], on = (double)((const int64_t *)p)[1]; break;
    }
    onnx_attrs list = {0};
    onnx_attrs_int(&list, "depth", (int64_t)depth);
    onnx_attrs_int(&list, "axis", onnx_node_int(node, "axis", -1));
    onnx_attrs_float(&list, "on_value", on);
    onnx_attrs_float(&list, "off_value", off);
    const char *name = kiln_dtype_name(dtype);
    onnx_attrs_string(&list, "dtype", name, strlen(name));
    return onnx_map_emit_output(node, kiln_op, 1, &indices, &list);
}

/* EyeLike: eye_like with the ONNX element type code of `dtype` as a kiln dtype name. */
kiln_status onnx_map_eye_like(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_map_dtype_attribute(node, "dtype", dtype, &dtype);
    if (status != KILN_OK)
        return status;
    const char *name = kiln_dtype_name(dtype);
    onnx_attrs_string(&list, "dtype", name, strlen(name));
    onnx_attrs_int(&list, "k", onnx_node_int(node, "k", 0));
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * Range: its three scalar operands folded into range's attributes. kiln
 * computes the length in double; ONNX in the operands' type, so for f32
 * the f32 length is computed here too and a disagreement is refused.
 */
kiln_status onnx_map_range(onnx_node *node, const char *kiln_op)
{
    static const char *const what[] = {"input 0 (start)", "input 1 (limit)", "input 2 (delta)"};
    if (onnx_node_is_symbolic(node, 1) && !onnx_node_is_symbolic(node, 0) && !onnx_node_is_symbolic(node, 2))
        return onnx_map_symbolic_range(node);
    double bounds[3];
    kiln_dtype dtype = KILN_F32;
    kiln_status status = KILN_OK;
    for (uint32_t k = 0; status == KILN_OK && k < 3; k++) {
        const kiln_tensor *t;
        status = onnx_node_constant(node, k, &t);
        if (status == KILN_OK)
            status = onnx_map_tensor_scalar(node, t, what[k], &bounds[k]);
        if (status == KILN_OK && k > 0 && kiln_tensor_dtype(t) != dtype)
            status = onnx_node_unsupported(node, "%s is %s, input 0 is %s", what[k],
                                           kiln_dtype_name(kiln_tensor_dtype(t)), kiln_dtype_name(dtype));
        if (status == KILN_OK && k == 0)
            dtype = kiln_tensor_dtype(t);
    }
    if (status != KILN_OK)
        return status;
    if (dtype == KILN_F32 && bounds[2] != 0 && isfinite(bounds[0]) && isfinite(bounds[1]) && isfinite(bounds[2])) {
        float start = (float)bounds[0], limit = (float)bounds[1], delta = (float)bounds[2];
        double in_f32 = ceilf((limit - start) / delta), in_f64 = ceil((bounds[1] - bounds[0]) / bounds[2]);
        if (fmax(in_f32, 0) != fmax(in_f64, 0))
            return onnx_node_unsupported(node, "the length of an f32 range is %.0f in f32 arithmetic but %.0f "
                                               "exactly; kiln computes it exactly",
                                         fmax(in_f32, 0), fmax(in_f64, 0));
    }
    onnx_attrs list = {0};
    const char *name = kiln_dtype_name(dtype);
    onnx_attrs_float(&list, "start", bounds[0]);
    onnx_attrs_float(&list, "limit", bounds[1]);
    onnx_attrs_float(&list, "delta", bounds[2]);
    onnx_attrs_string(&list, "dtype", name, strlen(name));
    return onnx_map_emit_output(node, kiln_op, 0, NULL, &list);
}

/*
 * HannWindow, HammingWindow, BlackmanWindow (opset 17): a generalized
 * cosine window a0 - a1 cos(t) + a2 cos(2t), t = 2 pi n / N, n = 0..size-1,
 * N = size (periodic, the default) or size - 1 (symmetric). The size must
 * be constant, so the window is too: it is computed here, in double with
 * ONNX's steps (increment 2 pi / N, then n times it; N = 0 gives NaN as
 * there) and rounded once to the output dtype (f32 or f64).
 */
kiln_status onnx_map_cosine_window(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    static const struct {
        const char *op;
        double a0, a1, a2;
    } windows[] = {{"HannWindow", 0.5, 0.5, 0.0},
                   {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
                   {"BlackmanWindow", 0.42, 0.5, 0.08}};
    size_t w = 0;
    while (w + 1 < sizeof windows / sizeof windows[0] && strcmp(windows[w].op, node->proto->op_type) != 0)
        w++;
    double size;
    kiln_dtype dtype;
    kiln_status status = onnx_map_constant_scalar(node, 0, &size);
    if (status == KILN_OK)
        status = onnx_map_dtype_attribute(node, "output_datatype", KILN_F32, &dtype);
    if (status != KILN_OK)
        return status;
    if (dtype != KILN_F32 && dtype != KILN_F64)
        return onnx_node_unsupported(node, "output_datatype %s: only f32 and f64 windows are mapped",
                                     kiln_dtype_name(dtype));
    if (!(size >= 0 && size <= (double)(1 << 24)) || size != floor(size))
        return onnx_node_unsupported(node, "size %g is not a whole number in 0..16777216", size);
    int64_t length = (int64_t)size;
    double period = onnx_node_int(node, "periodic", 1) ? size : size - 1;
    double increment = 2.0 * 3.14159265358979323846 / period; /* 2 pi rounded once */
    kiln_tensor *t;
    status = kiln_tensor_new(dtype, 1, &length, &t, node->err);
    if (status != KILN_OK)
        return status;
    for (int64_t n = 0; n < length; n++) {
        double angle = (double)n * increment;
        double value = windows[w].a0 - windows[w].a1 * cos(angle) + windows[w].a2 * cos(2.0 * angle);
        if (dtype == KILN_F32)
            ((float *)kiln_tensor_data(t))[n] = (float)value;
        else
            ((double *)kiln_tensor_data(t))[n] = value;
    }
    return onnx_node_set_constant_output(node, 0, t);
}
