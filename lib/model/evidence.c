/* evidence.c — evidence cases: encoding, validation, comparison (see evidence.h). */
#include "evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "half.h"
#include "tensor.h"

void kiln_evidence_record_release(kiln_evidence_record *c)
{
    free(c->name);
    for (uint32_t i = 0; i < c->input_count; i++) {
        free(c->inputs[i].name);
        free(c->inputs[i].data);
    }
    for (uint32_t i = 0; i < c->output_count; i++) {
        free(c->outputs[i].name);
        free(c->outputs[i].data);
    }
    free(c->inputs);
    free(c->outputs);
    free(c->rules);
    memset(c, 0, sizeof *c);
}

static kiln_status no_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
}

kiln_status kiln_evidence_tensor_copy(const char *name, const kiln_tensor *tensor, kiln_evidence_tensor *out,
                                      kiln_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = strdup(name);
    out->data = malloc(tensor->byte_size ? tensor->byte_size : 1);
    if (!out->name || !out->data) {
        free(out->name);
        free(out->data);
        memset(out, 0, sizeof *out);
        return no_memory(err);
    }
    out->dtype = tensor->dtype;
    out->rank = tensor->rank;
    memcpy(out->shape, tensor->shape, sizeof out->shape);
    out->byte_size = tensor->byte_size;
    if (tensor->byte_size)
        memcpy(out->data, tensor->data, tensor->byte_size);
    return KILN_OK;
}

/* The count is set with the zeroed array, so releasing after a partial
 * copy frees exactly what was copied. */
static kiln_status copy_tensors(const kiln_evidence_tensor *from, uint32_t count, kiln_evidence_tensor **to,
                                uint32_t *to_count, kiln_error *err)
{
    *to = calloc(count ? count : 1, sizeof **to);
    if (!*to)
        return no_memory(err);
    *to_count = count;
    for (uint32_t i = 0; i < count; i++) {
        kiln_tensor view;
        kiln_tensor_view_init(&view, from[i].dtype, from[i].rank, from[i].shape, from[i].data);
        KILN_TRY(kiln_evidence_tensor_copy(from[i].name, &view, &(*to)[i], err));
    }
    return KILN_OK;
}

kiln_status kiln_evidence_record_copy(const kiln_evidence_record *from, kiln_evidence_record *to, kiln_error *err)
{
    memset(to, 0, sizeof *to);
    if (!(to->name = strdup(from->name)))
        return no_memory(err);
    kiln_status status = copy_tensors(from->inputs, from->input_count, &to->inputs, &to->input_count, err);
    if (status == KILN_OK)
        status = copy_tensors(from->outputs, from->output_count, &to->outputs, &to->output_count, err);
    if (status == KILN_OK) {
        to->rules = malloc((from->output_count ? from->output_count : 1) * sizeof *to->rules);
        if (!to->rules)
            status = no_memory(err);
        else if (from->output_count)
            memcpy(to->rules, from->rules, from->output_count * sizeof *to->rules);
    }
    if (status != KILN_OK)
        kiln_evidence_record_release(to);
    return status;
}

/* Copy `count` named tensors into a fresh evidence tensor array. */
static kiln_status copy_named_tensors(uint32_t count, const char *const *names, const kiln_tensor *const *tensors,
                                      kiln_evidence_tensor **out, uint32_t *out_count, kiln_error *err)
{
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return no_memory(err);
    *out_count = count;
    for (uint32_t i = 0; i < count; i++) {
        if (!names || !names[i] || !tensors || !tensors[i])
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence tensor %u has no name or tensor", i);
        KILN_TRY(kiln_evidence_tensor_copy(names[i], tensors[i], &(*out)[i], err));
    }
    return KILN_OK;
}

kiln_status kiln_evidence_record_from_case(const kiln_evidence_case *evidence, kiln_evidence_record *out,
                                           kiln_error *err)
{
    memset(out, 0, sizeof *out);
    if (!evidence)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the evidence case is NULL");
    const char *name = evidence->name;
    uint32_t input_count = evidence->input_count, output_count = evidence->output_count;
    const kiln_compare_rule *rules = evidence->rules;
    if (!name || !name[0])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "an evidence case needs a non-empty name");
    if (output_count && !rules)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence '%s': rules is NULL", name);
    kiln_status status = (out->name = strdup(name)) ? KILN_OK : no_memory(err);
    if (status == KILN_OK)
        status = copy_named_tensors(input_count, evidence->input_names, evidence->inputs, &out->inputs, &out->input_count, err);
    if (status == KILN_OK)
        status = copy_named_tensors(output_count, evidence->output_names, evidence->expected, &out->outputs, &out->output_count, err);
    if (status == KILN_OK && !(out->rules = calloc(output_count ? output_count : 1, sizeof *out->rules)))
        status = no_memory(err);
    if (status == KILN_OK && output_count)
        memcpy(out->rules, rules, output_count * sizeof *rules);
    if (status != KILN_OK)
        kiln_evidence_record_release(out);
    return status;
}

/* ---------------------------------------------------------- comparison */

/* Element `i` of a tensor of `dtype` as a double; integers above 2^53 lose
 * precision here, so exact comparisons use the bytes instead. */
static double element_as_double(kiln_dtype dtype, const uint8_t *data, uint64_t i)
{
    switch (dtype) {
#define AS_DOUBLE(CODE, T) \
    case CODE: {           \
        T v;               \
        memcpy(&v, data + i * sizeof v, sizeof v); \
        return (double)v;  \
    }
        AS_DOUBLE(KILN_F32, float)
        AS_DOUBLE(KILN_F64, double)
        AS_DOUBLE(KILN_I8, int8_t)
        AS_DOUBLE(KILN_I16, int16_t)
        AS_DOUBLE(KILN_I32, int32_t)
        AS_DOUBLE(KILN_I64, int64_t)
        AS_DOUBLE(KILN_U8, uint8_t)
        AS_DOUBLE(KILN_U16, uint16_t)
        AS_DOUBLE(KILN_U32, uint32_t)
        AS_DOUBLE(KILN_U64, uint64_t)
        AS_DOUBLE(KILN_BOOL, uint8_t)
#undef AS_DOUBLE
    case KILN_F16:
    case KILN_BF16: {
        uint16_t v;
        memcpy(&v, data + i * sizeof v, sizeof v);
        return dtype == KILN_F16 ? kiln_f16_to_f32(v) : kiln_bf16_to_f32(v);
    }
    default:
        return NAN;
    }
}

void kiln_evidence_compare(const kiln_tensor *actual, const kiln_evidence_tensor *expected,
                           const kiln_compare_rule *rule, kiln_evidence_result *result)
{
    result->rule = *rule;
    result->max_abs_error = 0;
    result->max_rel_error = 0;
    result->mismatches = 0;
    result->elements = actual->element_count;
    result->passed = false;
    bool same_shape = actual->dtype == expected->dtype && actual->rank == expected->rank &&
                      memcmp(actual->shape, expected->shape, actual->rank * sizeof *actual->shape) == 0;
    if (!same_shape) {
        result->mismatches = actual->element_count ? actual->element_count : 1;
        result->max_abs_error = INFINITY;
        result->max_rel_error = INFINITY;
        return;
    }
    size_t width = kiln_dtype_size(actual->dtype);
    bool floating = actual->dtype == KILN_F32 || actual->dtype == KILN_F64 || actual->dtype == KILN_F16 ||
                    actual->dtype == KILN_BF16;
    const uint8_t *a = actual->data, *e = expected->data;
    for (uint64_t i = 0; i < actual->element_count; i++) {
        double av = element_as_double(actual->dtype, a, i), ev = element_as_double(actual->dtype, e, i);
        bool ok;
        if (floating && (isnan(av) || isnan(ev))) {
            ok = rule->nan_equal && isnan(av) && isnan(ev);
        } else if (rule->kind == KILN_COMPARE_EXACT || !floating) {
            ok = memcmp(a + i * width, e + i * width, width) == 0 || (floating && av == ev);
        } else if (isinf(av) || isinf(ev)) {
            ok = av == ev;
        } else {
            double diff = fabs(av - ev);
            ok = diff <= rule->atol + rule->rtol * fabs(ev);
        }
        if (isfinite(av) && isfinite(ev)) {
            double diff = fabs(av - ev);
            result->max_abs_error = diff > result->max_abs_error ? diff : result->max_abs_error;
            if (ev != 0) {
                double rel = diff / fabs(ev);
                result->max_rel_error = rel > result->max_rel_error ? rel : result->max_rel_error;
            }
        }
        if (!ok)
            result->mismatches++;
    }
    result->passed = result->mismatches == 0;
}
