/* input_guard.c — runtime checks of inputs against the contract (see input_guard.h). */
#include "input_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "program.h"

/* Renders expression `expr` for a message ("?" if out of memory). Only on
 * failure paths: it allocates, and guarding must not. */
static void format_expression(const kiln_model *m, uint32_t expr, char *text, size_t size)
{
    const char **names = kiln_model_dim_names(m);
    snprintf(text, size, "?");
    if (names)
        kiln_expr_format(&m->exprs, expr, names, text, size);
    free(names);
}

void kiln_binding_site_text(const kiln_model *m, kiln_binding_site site, char *text, size_t size)
{
    if (site.input == KILN_SITE_STATE)
        snprintf(text, size, "state '%s' length", m->states[site.axis].name);
    else
        snprintf(text, size, "input '%s' axis %u", m->inputs[site.input].name, site.axis);
}

/* A state's length binds its length dim where the method declares it: within the dim's range, or refused. */
static kiln_status bind_state_lengths(const kiln_model *m, const kiln_state_buffer *states, int64_t *dim_values,
                                      bool *dim_bound, kiln_binding_site *sites, kiln_error *err)
{
    /* Without states (kiln_program_bind_dims: no session) the inputs alone bind what they can. */
    for (uint32_t i = 0; states && i < m->state_count; i++) {
        const kiln_state_decl *st = &m->states[i];
        int64_t length = states[i].length;
        for (uint32_t d = 0; d < m->dim_count; d++) {
            const kiln_dim_decl *dim = &m->dims[d];
            if (strcmp(dim->name, st->length_dim) != 0)
                continue;
            if (length < dim->min || length > dim->max || length % dim->multiple_of != 0)
                return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                                 "state '%s' length (%s): %lld is outside %lld..%lld%s%s", st->name, dim->name,
                                 (long long)length, (long long)dim->min, (long long)dim->max,
                                 length > dim->max ? ": the state has grown past what this method takes (reset it "
                                                     "or start a new sequence)"
                                                   : "",
                                 length < dim->min && dim->min > 0 ? ": run a method that fills it first" : "");
            if (dim_bound[d] && dim_values[d] != length)
                return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                                 "state '%s' length (%s): %lld differs from %lld, the length of state '%s'; states "
                                 "that share a length dim grow together",
                                 st->name, dim->name, (long long)length, (long long)dim_values[d],
                                 m->states[sites[d].axis].name);
            dim_bound[d] = true;
            dim_values[d] = length;
            sites[d] = (kiln_binding_site){KILN_SITE_STATE, i};
        }
    }
    return KILN_OK;
}

static kiln_status check_bare_dim(const kiln_model *m, uint32_t input, uint32_t axis, uint32_t dim,
                                  int64_t size, int64_t *dim_values, bool *dim_bound,
                                  kiln_binding_site *sites, kiln_error *err)
{
    const kiln_dim_decl *d = &m->dims[dim];
    const char *name = m->inputs[input].name;
    if (size < d->min || size > d->max)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %u (%s): %lld is outside %lld..%lld",
                         name, axis, d->name, (long long)size, (long long)d->min, (long long)d->max);
    if (size % d->multiple_of != 0)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                         "input '%s' axis %u (%s): %lld is not a multiple of %lld (%s in %lld..%lld multiple_of %lld)",
                         name, axis, d->name, (long long)size, (long long)d->multiple_of, d->name, (long long)d->min,
                         (long long)d->max, (long long)d->multiple_of);
    if (dim_bound[dim] && dim_values[dim] != size && sites[dim].input == KILN_SITE_STATE)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                         "input '%s' axis %u (%s): %lld differs from %lld, the length of state '%s' (which %s is)",
                         name, axis, d->name, (long long)size, (long long)dim_values[dim],
                         m->states[sites[dim].axis].name, d->name);
    if (dim_bound[dim] && dim_values[dim] != size)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                         "input '%s' axis %u (%s): %lld differs from %lld, the size of %s at input '%s' axis %u",
                         name, axis, d->name, (long long)size, (long long)dim_values[dim], d->name,
                         m->inputs[sites[dim].input].name, sites[dim].axis);
    if (!dim_bound[dim]) {
        dim_bound[dim] = true;
        dim_values[dim] = size;
        sites[dim] = (kiln_binding_site){input, axis};
    }
    return KILN_OK;
}

/* Axis `scale*dim + offset` whose dim no bare axis bound: solve for the dim,
 * check the solution against the dim's declaration, and bind it. */
static kiln_status solve_affine_axis(const kiln_model *m, uint32_t input, uint32_t axis, uint32_t expr,
                                     uint32_t dim, int64_t scale, int64_t offset, int64_t size,
                                     int64_t *dim_values, bool *dim_bound, kiln_binding_site *sites,
                                     kiln_error *err)
{
    const kiln_dim_decl *d = &m->dims[dim];
    int64_t scaled, value = 0;
    bool of_form = !__builtin_sub_overflow(size, offset, &scaled) && scaled >= 0 && scaled % scale == 0;
    if (of_form)
        value = scaled / scale;
    if (of_form && value >= d->min && value <= d->max && value % d->multiple_of == 0) {
        dim_bound[dim] = true;
        dim_values[dim] = value;
        sites[dim] = (kiln_binding_site){input, axis};
        return KILN_OK;
    }
    const char *name = m->inputs[input].name;
    char text[256];
    format_expression(m, expr, text, sizeof text);
    if (!of_form)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %u (%s): %lld is not of the form %s",
                         name, axis, text, (long long)size, text);
    if (value < d->min || value > d->max)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %u (%s): %lld gives %s = %lld, outside %lld..%lld",
                         name, axis, text, (long long)size, d->name, (long long)value, (long long)d->min,
                         (long long)d->max);
    return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                     "input '%s' axis %u (%s): %lld gives %s = %lld, not a multiple of %lld "
                     "(%s in %lld..%lld multiple_of %lld)",
                     name, axis, text, (long long)size, d->name, (long long)value, (long long)d->multiple_of,
                     d->name, (long long)d->min, (long long)d->max, (long long)d->multiple_of);
}

static kiln_status check_expression_axis(const kiln_model *m, uint32_t input, uint32_t axis,
                                         uint32_t expr, int64_t size, const int64_t *dim_values,
                                         const bool *dim_bound, kiln_error *err)
{
    int64_t expected;
    KILN_TRY(kiln_expr_eval(&m->exprs, expr, dim_values, dim_bound, &expected, err));
    if (expected == size)
        return KILN_OK;
    char text[256];
    format_expression(m, expr, text, sizeof text);
    if (m->exprs.items[expr].kind == KILN_EXPR_CONST)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %u: %lld is not the declared size %s",
                         m->inputs[input].name, axis, (long long)size, text);
    return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %u (%s): %lld is not %s = %lld",
                     m->inputs[input].name, axis, text, (long long)size, text, (long long)expected);
}

kiln_status kiln_guard_inputs(const kiln_model *m, const kiln_state_buffer *states, const kiln_tensor *const *inputs,
                              int64_t *dim_values, bool *dim_bound, kiln_binding_site *sites,
                              kiln_error *err)
{
    kiln_status status = KILN_OK;
    memset(dim_bound, 0, m->dim_count * sizeof *dim_bound);
    KILN_TRY(bind_state_lengths(m, states, dim_values, dim_bound, sites, err));

    /* Pass 1: dtype, rank, bare dims (binding them). */
    for (uint32_t i = 0; status == KILN_OK && i < m->input_count; i++) {
        const kiln_input_decl *decl = &m->inputs[i];
        const kiln_tensor *t = inputs[i];
        if (t->dtype != decl->type.dtype) {
            status = kiln_fail(err, KILN_ERR_DTYPE_MISMATCH, "input '%s': dtype %s does not match the declared %s",
                               decl->name, kiln_dtype_name(t->dtype), kiln_dtype_name(decl->type.dtype));
            break;
        }
        if (t->rank != decl->type.shape.rank) {
            char shape[256];
            kiln_model_format_shape(m, &decl->type.shape, shape, sizeof shape);
            status = kiln_fail(err, KILN_ERR_RANK_MISMATCH,
                               "input '%s': rank %u does not match the declared rank %u %s",
                               decl->name, t->rank, decl->type.shape.rank, shape);
            break;
        }
        for (uint32_t a = 0; status == KILN_OK && a < t->rank; a++) {
            uint32_t dim;
            if (kiln_expr_is_dim(&m->exprs, decl->type.shape.axes[a], &dim))
                status = check_bare_dim(m, i, a, dim, t->shape[a], dim_values, dim_bound, sites, err);
        }
    }
    /* Pass 2: dims that appear only as `c*dim + k`, solved from the first
     * such axis (the model check guarantees one exists). */
    for (uint32_t i = 0; status == KILN_OK && i < m->input_count; i++) {
        const kiln_shape *shape = &m->inputs[i].type.shape;
        for (uint32_t a = 0; status == KILN_OK && a < shape->rank; a++) {
            uint32_t dim;
            int64_t scale, offset;
            if (kiln_expr_as_affine(&m->exprs, shape->axes[a], &dim, &scale, &offset) && !dim_bound[dim])
                status = solve_affine_axis(m, i, a, shape->axes[a], dim, scale, offset, inputs[i]->shape[a],
                                           dim_values, dim_bound, sites, err);
        }
    }
    /* Pass 3: constants and expressions, now that every dim has a value. */
    for (uint32_t i = 0; status == KILN_OK && i < m->input_count; i++) {
        const kiln_shape *shape = &m->inputs[i].type.shape;
        for (uint32_t a = 0; status == KILN_OK && a < shape->rank; a++) {
            uint32_t dim;
            if (!kiln_expr_is_dim(&m->exprs, shape->axes[a], &dim))
                status = check_expression_axis(m, i, a, shape->axes[a], inputs[i]->shape[a], dim_values,
                                               dim_bound, err);
        }
    }
    return status;
}

kiln_status kiln_program_bind_dims(const kiln_program *program, uint32_t count, const char *const *names,
                                   const kiln_tensor *const *tensors, int64_t *values, bool *bound, kiln_error *err)
{
    if (!program || (count && (!names || !tensors)) || (program->model.dim_count && (!values || !bound)))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program, names, tensors, values and bound must not be NULL");
    const kiln_model *m = &program->model;
    const kiln_tensor **inputs = calloc(m->input_count + 1, sizeof *inputs);
    kiln_binding_site *sites = calloc(m->dim_count + 1, sizeof *sites);
    kiln_status status = inputs && sites ? KILN_OK : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory binding dims");
    for (uint32_t k = 0; status == KILN_OK && k < count; k++) {
        uint32_t i = 0;
        while (i < m->input_count && (!names[k] || strcmp(m->inputs[i].name, names[k]) != 0))
            i++;
        if (i == m->input_count)
            status = kiln_fail(err, KILN_ERR_UNKNOWN_INPUT, "'%s' is not an input of program '%s'",
                               names[k] ? names[k] : "(null)", m->name);
        else if (inputs[i])
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input '%s' is given twice", names[k]);
        else if (!tensors[k])
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input '%s': the tensor is NULL", names[k]);
        else
            inputs[i] = tensors[k];
    }
    for (uint32_t i = 0; status == KILN_OK && i < m->input_count; i++)
        if (!inputs[i])
            status = kiln_fail(err, KILN_ERR_MISSING_INPUT, "missing input '%s': every declared input must be given",
                               m->inputs[i].name);
    if (status == KILN_OK) {
        memset(bound, 0, m->dim_count * sizeof *bound);
        status = kiln_guard_inputs(m, NULL, inputs, values, bound, sites, err);
    }
    free(inputs);
    free(sites);
    return status;
}
