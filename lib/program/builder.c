/*
 * builder.c — assembling a program through the public builder API.
 *
 * The builder checks each call as it comes (names, dims, dtypes, the op's
 * shape rule), so errors point at the call that caused them. Values are
 * handed out in call order; sealing renumbers them canonically (inputs,
 * weights, node results) into a fresh model, re-checks it in full with the
 * same code the loader uses, and encodes it.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/util.h>

#include "builder.h"
#include "attribute.h"
#include "evidence.h"
#include "evidence_check.h"
#include "semantic_check.h"
#include "checked_math.h"
#include "error.h"
#include "format/file_io.h"
#include "half.h"
#include "load_limits.h"
#include "op_registry.h"
#include "reader_limits.h"
#include "section_encode.h"
#include "sections.h"
#include "shape_canon.h"
#include "shape_parse.h"
#include "tensor.h"
#include "identifier.h"
#include "weight_stream.h"
#include "model_check.h"
#include "node_name.h"

enum value_kind { VALUE_INPUT, VALUE_WEIGHT, VALUE_NODE };

typedef struct builder_value {
    enum value_kind kind;
    uint32_t index; /* within its kind */
} builder_value;

struct kiln_builder {
    kiln_model model; /* node inputs hold builder handles until sealing */
    builder_value *values;
    uint32_t value_count;
    kiln_value_type *node_types;
    uint8_t **weight_storage; /* owned copies (or file paths), parallel to model.weights */
    uint32_t scalar_count;
    /* Further entry points (kiln_builder_add_method), owned; the name of this
     * builder's own method, NULL for KILN_MAIN_METHOD. */
    char *method_name;
    kiln_builder **methods;
    char **method_names;
    uint32_t method_count;
    bool is_method; /* added to another builder: it has no methods of its own */
    uint32_t metadata_capacity, dim_capacity, input_capacity, weight_capacity;
    uint32_t opset_capacity, node_capacity, output_capacity, value_capacity;
};

/* Make room for one more item in a growable array. */
static bool reserve_one(void **items, uint32_t *capacity, uint32_t count, size_t item_size)
{
    if (count < *capacity)
        return true;
    uint32_t wanted = *capacity ? *capacity * 2 : 8;
    size_t bytes;
    if (wanted <= *capacity || !kiln_mul_size(wanted, item_size, &bytes))
        return false;
    void *grown = realloc(*items, bytes);
    if (!grown)
        return false;
    *items = grown;
    *capacity = wanted;
    return true;
}

static kiln_status no_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory in the builder");
}

kiln_status kiln_builder_new(const char *program_name, kiln_builder **out, kiln_error *err)
{
    *out = NULL;
    if (!program_name || !program_name[0])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program name must be non-empty");
    for (const char *c = program_name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program name contains a control character");
    kiln_builder *b = calloc(1, sizeof *b);
    if (!b || !(b->model.name = strdup(program_name))) {
        free(b);
        return no_memory(err);
    }
    kiln_expr_pool_init(&b->model.exprs);
    *out = b;
    return KILN_OK;
}

void kiln_builder_free(kiln_builder *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->model.weight_count; i++)
        free(b->weight_storage[i]);
    free(b->weight_storage);
    for (uint32_t i = 0; i < b->method_count; i++) {
        kiln_builder_free(b->methods[i]);
        free(b->method_names[i]);
    }
    free(b->methods);
    free(b->method_names);
    free(b->method_name);
    free(b->values);
    free(b->node_types);
    kiln_model_release(&b->model);
    free(b);
}

kiln_status kiln_builder_set_metadata(kiln_builder *b, const char *key, const char *value, kiln_error *err)
{
    kiln_model *m = &b->model;
    if (!key || !key[0] || !value)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "metadata key must be non-empty and value non-NULL");
    for (const char *c = key; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "metadata key contains a control character");
    /* Keep entries sorted by key so the encoding is canonical. */
    uint32_t at = 0;
    while (at < m->metadata_count && strcmp(m->metadata[at].key, key) < 0)
        at++;
    char *value_copy = strdup(value);
    if (!value_copy)
        return no_memory(err);
    if (at < m->metadata_count && strcmp(m->metadata[at].key, key) == 0) {
        free(m->metadata[at].value);
        m->metadata[at].value = value_copy;
        return KILN_OK;
    }
    char *key_copy = strdup(key);
    if (!key_copy || !reserve_one((void **)&m->metadata, &b->metadata_capacity, m->metadata_count,
                                  sizeof *m->metadata)) {
        free(key_copy);
        free(value_copy);
        return no_memory(err);
    }
    memmove(&m->metadata[at + 1], &m->metadata[at], (m->metadata_count - at) * sizeof *m->metadata);
    m->metadata[at] = (kiln_metadata_entry){key_copy, value_copy};
    m->metadata_count++;
    return KILN_OK;
}

kiln_status kiln_builder_set_mode(kiln_builder *b, kiln_mode mode, kiln_error *err)
{
    if (mode != KILN_MODE_INFERENCE && mode != KILN_MODE_TRAINING)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "unknown mode %d", (int)mode);
    b->model.mode = mode;
    return KILN_OK;
}

kiln_status kiln_builder_set_strict(kiln_builder *b, bool strict, kiln_error *err)
{
    if (!b)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "builder is NULL");
    if (b->model.node_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "strictness must be chosen before the first op is added (%u already are)",
                         b->model.node_count);
    b->model.non_strict = !strict;
    return KILN_OK;
}

kiln_status kiln_builder_add_dim(kiln_builder *b, const char *name, int64_t min, int64_t max, kiln_error *err)
{
    kiln_model *m = &b->model;
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim name '%s' is not an identifier", name ? name : "(null)");
    if (min < 0 || min > max)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "dim '%s': range %lld..%lld must satisfy 0 <= min <= max", name, (long long)min,
                         (long long)max);
    for (uint32_t i = 0; i < m->dim_count; i++)
        if (strcmp(m->dims[i].name, name) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim '%s' is already declared", name);
    char *copy = strdup(name);
    if (!copy || !reserve_one((void **)&m->dims, &b->dim_capacity, m->dim_count, sizeof *m->dims)) {
        free(copy);
        return no_memory(err);
    }
    m->dims[m->dim_count++] = (kiln_dim_decl){copy, min, max, 1};
    return KILN_OK;
}

kiln_status kiln_builder_set_dim_multiple_of(kiln_builder *b, const char *dim, int64_t k, kiln_error *err)
{
    kiln_model *m = &b->model;
    for (uint32_t i = 0; dim && i < m->dim_count; i++) {
        kiln_dim_decl *d = &m->dims[i];
        if (strcmp(d->name, dim) != 0)
            continue;
        int64_t saved = d->multiple_of;
        d->multiple_of = k;
        if (k < 1 || kiln_dim_last(d) < d->min) { /* some multiple in range; kiln_dim_first may overflow */
            d->multiple_of = saved;
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim '%s': no value in %lld..%lld is a multiple of %lld",
                             dim, (long long)d->min, (long long)d->max, (long long)k);
        }
        return KILN_OK;
    }
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is not a declared dim", dim ? dim : "(null)");
}

/* Parse shape text over the declared dims and derived dims, into canonical expressions. */
static kiln_status parse_shape(kiln_builder *b, const char *text, kiln_shape *out, kiln_error *err)
{
    kiln_model *m = &b->model;
    const char **names = kiln_model_dim_names(m);
    kiln_shape_alias *aliases = malloc((m->derived_count + 1) * sizeof *aliases);
    kiln_status status = KILN_OK;
    if (!names || !aliases)
        status = no_memory(err);
    for (uint32_t i = 0; status == KILN_OK && i < m->derived_count; i++)
        aliases[i] = (kiln_shape_alias){m->derived[i].name, m->derived[i].expr};
    if (status == KILN_OK)
        status = kiln_shape_parse_with_aliases(text, names, m->dim_count, aliases, m->derived_count, &m->exprs,
                                               &out->rank, out->axes, err);
    free(names);
    free(aliases);
    return status;
}

kiln_status kiln_builder_add_derived_dim(kiln_builder *b, const char *name, const char *expression,
                                         kiln_error *err)
{
    kiln_model *m = &b->model;
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "derived dim name '%s' is not an identifier",
                         name ? name : "(null)");
    for (uint32_t i = 0; i < m->dim_count; i++)
        if (strcmp(m->dims[i].name, name) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is already a dim", name);
    for (uint32_t i = 0; i < m->derived_count; i++)
        if (strcmp(m->derived[i].name, name) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "derived dim '%s' is already declared", name);
    if (!expression)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "derived dim '%s': expression is NULL", name);
    kiln_shape parsed;
    KILN_TRY(parse_shape(b, expression, &parsed, err));
    if (parsed.rank != 1)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "derived dim '%s' must be one expression, got %u", name,
                         parsed.rank);
    char *copy = strdup(name);
    kiln_derived_dim *grown = copy ? realloc(m->derived, (m->derived_count + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(copy);
        return no_memory(err);
    }
    m->derived = grown;
    m->derived[m->derived_count++] = (kiln_derived_dim){copy, parsed.axes[0]};
    return KILN_OK;
}

kiln_status kiln_builder_add_relation(kiln_builder *b, const char *relation, kiln_error *err)
{
    const char *at = relation ? strstr(relation, "<=") : NULL;
    if (!at || strstr(at + 2, "<="))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "relation '%s': write it as LHS <= RHS ('past + seq <= 2048')",
                         relation ? relation : "(null)");
    size_t left_length = (size_t)(at - relation);
    char *left = malloc(left_length + 1);
    if (!left)
        return no_memory(err);
    memcpy(left, relation, left_length);
    left[left_length] = '\0';
    kiln_shape lhs, rhs;
    kiln_status status = parse_shape(b, left, &lhs, err);
    free(left);
    if (status == KILN_OK)
        status = parse_shape(b, at + 2, &rhs, err);
    if (status == KILN_OK && (lhs.rank != 1 || rhs.rank != 1))
        status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "relation '%s': each side is one expression", relation);
    KILN_TRY(kiln_fail_within(err, status, "relation '%s'", relation));
    kiln_model *m = &b->model;
    kiln_dim_relation *grown = realloc(m->relations, (m->relation_count + 1) * sizeof *grown);
    if (!grown)
        return no_memory(err);
    m->relations = grown;
    m->relations[m->relation_count++] = (kiln_dim_relation){lhs.axes[0], rhs.axes[0]};
    return KILN_OK;
}

kiln_status kiln_builder_add_state(kiln_builder *b, const char *name, kiln_dtype dtype, uint32_t rank,
                                   const int64_t *shape, uint32_t axis, const char *length_dim, kiln_error *err)
{
    kiln_model *m = &b->model;
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state name '%s' is not an identifier", name ? name : "(null)");
    if (kiln_state_decl_find(m->states, m->state_count, name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s' is already declared", name);
    if (!kiln_dtype_is_supported(dtype))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': dtype %d is not supported", name, (int)dtype);
    if (rank == 0 || rank > KILN_MAX_RANK || !shape || axis >= rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "state '%s': rank %u with growing axis %u (the rank is 1..%d, the axis below it, the shape "
                         "given)", name, rank, axis, KILN_MAX_RANK);
    if (!kiln_is_identifier(length_dim))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': length dim '%s' is not an identifier", name,
                         length_dim ? length_dim : "(null)");
    uint64_t elements;
    size_t bytes;
    for (uint32_t a = 0; a < rank; a++)
        if (shape[a] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': axis %u has size %lld", name, a,
                             (long long)shape[a]);
    KILN_TRY(kiln_fail_within(err, kiln_shape_sizes(dtype, rank, shape, &elements, &bytes, err), "state '%s'", name));
    kiln_state_decl decl = {.dtype = dtype, .rank = rank, .axis = axis};
    memcpy(decl.shape, shape, rank * sizeof *shape);
    decl.name = strdup(name);
    decl.length_dim = strdup(length_dim);
    kiln_state_decl *grown = decl.name && decl.length_dim ? realloc(m->states, (m->state_count + 1) * sizeof *grown)
                                                          : NULL;
    if (!grown) {
        kiln_state_decl_release(&decl);
        return no_memory(err);
    }
    m->states = grown;
    m->states[m->state_count++] = decl;
    return KILN_OK;
}

kiln_status kiln_builder_set_input_check(kiln_builder *b, const char *input, const kiln_input_check *check,
                                         kiln_error *err)
{
    kiln_model *m = &b->model;
    kiln_input_check read;
    KILN_TRY(kiln_input_check_read(check, &read, err));
    check = &read;
    uint32_t index = 0;
    while (index < m->input_count && (!input || strcmp(m->inputs[index].name, input) != 0))
        index++;
    if (index == m->input_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is not an input", input ? input : "(null)");
    kiln_input_check_decl decl;
    KILN_TRY(kiln_input_check_copy(index, check, &decl, err));
    /* Judged now, against this input alone, so the error points here. */
    return kiln_model_set_input_check(m, &decl, NULL, err);
}

static kiln_status new_value(kiln_builder *b, enum value_kind kind, uint32_t index, kiln_value *out,
                             kiln_error *err)
{
    if (!reserve_one((void **)&b->values, &b->value_capacity, b->value_count, sizeof *b->values))
        return no_memory(err);
    b->values[b->value_count] = (builder_value){kind, index};
    if (out)
        *out = b->value_count;
    b->value_count++;
    return KILN_OK;
}

/* The static type of an input or node value (weights: weight_value_type). */
static const kiln_value_type *value_type(const kiln_builder *b, kiln_value v)
{
    const builder_value *bv = &b->values[v];
    return bv->kind == VALUE_INPUT ? &b->model.inputs[bv->index].type : &b->node_types[bv->index];
}

static kiln_status weight_value_type(kiln_builder *b, uint32_t index, kiln_value_type *out, kiln_error *err)
{
    const kiln_weight_decl *w = &b->model.weights[index];
    out->dtype = w->dtype;
    out->shape.rank = w->rank;
    for (uint32_t a = 0; a < w->rank; a++)
        KILN_TRY(kiln_expr_const(&b->model.exprs, w->shape[a], &out->shape.axes[a], err));
    return KILN_OK;
}

static bool value_name_taken(const kiln_builder *b, const char *name)
{
    for (uint32_t i = 0; i < b->model.input_count; i++)
        if (strcmp(b->model.inputs[i].name, name) == 0)
            return true;
    for (uint32_t i = 0; i < b->model.weight_count; i++)
        if (strcmp(b->model.weights[i].name, name) == 0)
            return true;
    return false;
}

kiln_status kiln_builder_add_input(kiln_builder *b, const char *name, kiln_dtype dtype, const char *shape,
                                   kiln_value *out, kiln_error *err)
{
    kiln_model *m = &b->model;
    kiln_input_decl decl = {0};
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input name '%s' is not an identifier", name ? name : "(null)");
    if (value_name_taken(b, name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is already an input or weight name", name);
    if (!kiln_dtype_is_supported(dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "input '%s': dtype %s is not supported", name,
                         kiln_dtype_name(dtype));
    if (!shape)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input '%s': shape is NULL", name);
    KILN_TRY(parse_shape(b, shape, &decl.type.shape, err));
    decl.type.dtype = dtype;
    if (!(decl.name = strdup(name)) ||
        !reserve_one((void **)&m->inputs, &b->input_capacity, m->input_count, sizeof *m->inputs)) {
        free(decl.name);
        return no_memory(err);
    }
    kiln_status status = new_value(b, VALUE_INPUT, m->input_count, out, err);
    if (status != KILN_OK) {
        free(decl.name);
        return status;
    }
    m->inputs[m->input_count++] = decl;
    return KILN_OK;
}

/*
 * The weight's bytes: copied from `data`, or, when `path` is given, the
 * path (checked now to hold them) from which sealing reads them.
 */
static kiln_status add_weight(kiln_builder *b, const char *name, kiln_weight_kind kind, kiln_dtype dtype,
                              uint32_t rank, const int64_t *shape, const void *data, const char *path,
                              uint64_t offset, bool no_follow, kiln_value *out, kiln_error *err)
{
    kiln_model *m = &b->model;
    uint64_t count;
    size_t bytes;
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight name '%s' is not an identifier", name ? name : "(null)");
    if (value_name_taken(b, name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is already an input or weight name", name);
    if (kind != KILN_WEIGHT_PARAMETER && kind != KILN_WEIGHT_BUFFER && kind != KILN_WEIGHT_CONSTANT)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight '%s': unknown kind %d", name, (int)kind);
    if (!kiln_dtype_is_supported(dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "weight '%s': dtype %s is not supported", name,
                         kiln_dtype_name(dtype));
    if (rank > 0 && !shape)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight '%s': shape is NULL", name);
    KILN_TRY(kiln_shape_sizes(dtype, rank, shape, &count, &bytes, err));
    if (bytes && !data && !path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight '%s': data is NULL", name);
    if (path)
        KILN_TRY(kiln_weight_file_check(name, path, offset, bytes, no_follow, err));
    kiln_weight_decl decl = {.kind = kind, .dtype = dtype, .rank = rank, .byte_size = bytes};
    if (rank)
        memcpy(decl.shape, shape, rank * sizeof *shape);
    /* The builder owns either the bytes or the path they are read from. */
    uint8_t *copy = path ? (uint8_t *)strdup(path) : malloc(bytes ? bytes : 1);
    decl.name = strdup(name);
    uint32_t storage_capacity = b->weight_capacity;
    if (!copy || !decl.name ||
        !reserve_one((void **)&m->weights, &b->weight_capacity, m->weight_count, sizeof *m->weights) ||
        !reserve_one((void **)&b->weight_storage, &storage_capacity, m->weight_count, sizeof *b->weight_storage)) {
        free(copy);
        free(decl.name);
        return no_memory(err);
    }
    if (path) {
        decl.source_path = (const char *)copy;
        decl.source_offset = offset;
        decl.source_no_follow = no_follow;
    } else {
        if (bytes)
            memcpy(copy, data, bytes);
        decl.data = copy;
    }
    kiln_status status = new_value(b, VALUE_WEIGHT, m->weight_count, out, err);
    if (status != KILN_OK) {
        free(copy);
        free(decl.name);
        return status;
    }
    b->weight_storage[m->weight_count] = copy;
    m->weights[m->weight_count++] = decl;
    return KILN_OK;
}

kiln_status kiln_builder_add_weight(kiln_builder *b, const char *name, kiln_weight_kind kind, kiln_dtype dtype,
                                    uint32_t rank, const int64_t *shape, const void *data, kiln_value *out,
                                    kiln_error *err)
{
    return add_weight(b, name, kind, dtype, rank, shape, data, NULL, 0, false, out, err);
}

static kiln_status add_weight_file(kiln_builder *b, const char *name, kiln_weight_kind kind, kiln_dtype dtype,
                                   uint32_t rank, const int64_t *shape, const char *path, uint64_t offset,
                                   bool no_follow, kiln_value *out, kiln_error *err)
{
    if (!path || !path[0])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight '%s': the file path is empty",
                         name ? name : "(null)");
    if (dtype == KILN_BOOL)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "weight '%s': bool weights must be added with kiln_builder_add_weight, which checks that "
                         "every byte is 0 or 1", name ? name : "(null)");
    return add_weight(b, name, kind, dtype, rank, shape, NULL, path, offset, no_follow, out, err);
}

kiln_status kiln_builder_add_weight_file(kiln_builder *b, const char *name, kiln_weight_kind kind,
                                         kiln_dtype dtype, uint32_t rank, const int64_t *shape, const char *path,
                                         uint64_t offset, kiln_value *out, kiln_error *err)
{
    return add_weight_file(b, name, kind, dtype, rank, shape, path, offset, false, out, err);
}

kiln_status kiln_builder_add_weight_file_resolved(kiln_builder *b, const char *name, kiln_weight_kind kind,
                                                  kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                                  const char *resolved, uint64_t offset, kiln_value *out,
                                                  kiln_error *err)
{
    return add_weight_file(b, name, kind, dtype, rank, shape, resolved, offset, true, out, err);
}

/* Convert `value` to one element of `dtype`, refusing values it cannot hold. */
static kiln_status scalar_bytes(kiln_dtype dtype, double value, uint8_t out[8], kiln_error *err)
{
    bool integral = isfinite(value) && value == floor(value);
#define STORE_INT(T, LO, HI)                                                                        \
    do {                                                                                        \
        if (!integral || value < (double)(LO) || value > (double)(HI))                          \
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "scalar %g does not fit dtype %s", \
                             value, kiln_dtype_name(dtype));                                    \
        T v = (T)value;                                                                         \
        memcpy(out, &v, sizeof v);                                                              \
    } while (0)
    switch (dtype) {
    case KILN_F64: memcpy(out, &value, 8); return KILN_OK;
    case KILN_F32: {
        if (isfinite(value) && fabs(value) > FLT_MAX)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "scalar %g does not fit dtype f32", value);
        float v = (float)value;
        memcpy(out, &v, 4);
        return KILN_OK;
    }
    case KILN_F16:
    case KILN_BF16: {
        /* Rounded once from the double (half.h); a finite value past the range does not fit. */
        uint16_t v = dtype == KILN_F16 ? kiln_f64_to_f16(value) : kiln_f64_to_bf16(value);
        bool infinite = (v & 0x7fffu) == (dtype == KILN_F16 ? 0x7c00u : 0x7f80u);
        if (isfinite(value) && infinite)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "scalar %g does not fit dtype %s", value,
                             kiln_dtype_name(dtype));
        memcpy(out, &v, 2);
        return KILN_OK;
    }
    case KILN_I8: STORE_INT(int8_t, INT8_MIN, INT8_MAX); return KILN_OK;
    case KILN_I16: STORE_INT(int16_t, INT16_MIN, INT16_MAX); return KILN_OK;
    case KILN_I32: STORE_INT(int32_t, INT32_MIN, INT32_MAX); return KILN_OK;
    /* 2^63 is exactly representable as a double; the range test is strict on that side. */
    case KILN_I64:
        if (value >= 9223372036854775808.0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "scalar %g does not fit dtype i64", value);
        STORE_INT(int64_t, INT64_MIN, INT64_MAX);
        return KILN_OK;
    case KILN_U8: STORE_INT(uint8_t, 0, UINT8_MAX); return KILN_OK;
    case KILN_U16: STORE_INT(uint16_t, 0, UINT16_MAX); return KILN_OK;
    case KILN_U32: STORE_INT(uint32_t, 0, UINT32_MAX); return KILN_OK;
    case KILN_U64:
        if (value >= 18446744073709551616.0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "scalar %g does not fit dtype u64", value);
        STORE_INT(uint64_t, 0, UINT64_MAX);
        return KILN_OK;
    case KILN_BOOL: STORE_INT(uint8_t, 0, 1); return KILN_OK;
    default:
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "scalars of dtype %s are not supported",
                         kiln_dtype_name(dtype));
    }
#undef STORE_INT
}

kiln_status kiln_builder_add_scalar(kiln_builder *b, kiln_dtype dtype, double value, kiln_value *out,
                                    kiln_error *err)
{
    uint8_t bytes[8] = {0};
    char name[32];
    KILN_TRY(scalar_bytes(dtype, value, bytes, err));
    do
        snprintf(name, sizeof name, "scalar_%u", b->scalar_count++);
    while (value_name_taken(b, name));
    return kiln_builder_add_weight(b, name, KILN_WEIGHT_CONSTANT, dtype, 0, NULL, bytes, out, err);
}

/* Index of (name, version) in the opset table, appending it on first use. */
static kiln_status opset_index(kiln_builder *b, const kiln_op_def *op, uint32_t *out, kiln_error *err)
{
    kiln_model *m = &b->model;
    for (uint32_t i = 0; i < m->opset_count; i++) {
        if (m->opset[i].def == op) {
            *out = i;
            return KILN_OK;
        }
    }
    char *name = strdup(op->name);
    if (!name || !reserve_one((void **)&m->opset, &b->opset_capacity, m->opset_count, sizeof *m->opset)) {
        free(name);
        return no_memory(err);
    }
    m->opset[m->opset_count] = (kiln_opset_entry){name, op->versions.max, op};
    *out = m->opset_count++;
    return KILN_OK;
}

static void release_attributes(uint32_t count, kiln_node_attribute *attributes)
{
    for (uint32_t i = 0; i < count; i++)
        kiln_attribute_release(&attributes[i]);
    free(attributes);
}

kiln_status kiln_builder_add_op(kiln_builder *b, const char *op_name, uint32_t input_count,
                                const kiln_value *inputs, kiln_value *out, kiln_error *err)
{
    return kiln_builder_add_op_with_attributes(b, op_name, input_count, inputs, 0, NULL, out, err);
}

kiln_status kiln_builder_add_op_with_attributes(kiln_builder *b, const char *op_name, uint32_t input_count,
                                                const kiln_value *inputs, uint32_t attribute_count,
                                                const kiln_attribute *attributes, kiln_value *out,
                                                kiln_error *err)
{
    kiln_model *m = &b->model;
    const kiln_value_type *operand_types[64];
    kiln_value_type weight_types[64];
    const kiln_op_def *op = op_name ? kiln_op_find(op_name) : NULL;
    char label[96];
    if (!op)
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_OP, "unknown op '%s'", op_name ? op_name : "(null)");
    snprintf(label, sizeof label, "node %u (%s)", m->node_count, op->name);
    if (input_count < op->inputs.min || input_count > op->inputs.max || input_count > 64)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: takes %u..%u inputs, got %u", label,
                         op->inputs.min, op->inputs.max, input_count);
    if (input_count && !inputs)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: inputs is NULL", label);
    for (uint32_t i = 0; i < input_count; i++) {
        if (inputs[i] >= b->value_count)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is not a value of this builder",
                             label, i);
        if (b->values[inputs[i]].kind == VALUE_WEIGHT) {
            KILN_TRY(weight_value_type(b, b->values[inputs[i]].index, &weight_types[i], err));
            operand_types[i] = &weight_types[i];
        } else {
            operand_types[i] = value_type(b, inputs[i]);
        }
    }
    kiln_node_attribute *owned_attributes;
    KILN_TRY(kiln_attributes_copy(attribute_count, attributes, &owned_attributes, err));
    kiln_status status = kiln_attributes_coerce(attribute_count, owned_attributes, op->attributes, err);
    if (status == KILN_OK)
        status = kiln_attributes_check(label, op->name, attribute_count, owned_attributes, op->attributes, err);
    kiln_value_type result;
    kiln_shape_context ctx = {&m->exprs,        m->dims,         m->dim_count,
                              label,            owned_attributes, attribute_count,
                              m->non_strict ? &m->guards : NULL, m->node_count, NULL, m->relations, m->relation_count,
                              m->states,        m->state_count};
    uint32_t guards_before = m->guards.count;
    if (status == KILN_OK)
        status = op->infer(&ctx, operand_types, input_count, &result, err);
    if (status == KILN_OK)
        status = kiln_shape_make_canonical(&m->exprs, &result.shape, err);
    if (status != KILN_OK) {
        kiln_guard_list_truncate(&m->guards, guards_before); /* the node is not added */
        release_attributes(attribute_count, owned_attributes);
        return status;
    }

    uint32_t op_index = 0;
    uint32_t *copy = malloc((input_count ? input_count : 1) * sizeof *copy);
    uint32_t type_capacity = b->node_capacity;
    if (!copy) {
        release_attributes(attribute_count, owned_attributes);
        return no_memory(err);
    }
    /* Copy the operands before *out is written: a caller may pass the same
     * variable as an input and the output (y = f(y)). */
    if (input_count) /* an op without operands may pass inputs == NULL */
        memcpy(copy, inputs, input_count * sizeof *copy);
    status = opset_index(b, op, &op_index, err);
    if (status == KILN_OK &&
        (!reserve_one((void **)&m->nodes, &b->node_capacity, m->node_count, sizeof *m->nodes) ||
         !reserve_one((void **)&b->node_types, &type_capacity, m->node_count, sizeof *b->node_types)))
        status = no_memory(err);
    if (status == KILN_OK)
        status = new_value(b, VALUE_NODE, m->node_count, out, err);
    if (status != KILN_OK) {
        kiln_guard_list_truncate(&m->guards, guards_before);
        free(copy);
        release_attributes(attribute_count, owned_attributes);
        return status;
    }
    m->nodes[m->node_count] = (kiln_node_decl){op_index, input_count, copy, attribute_count, owned_attributes, NULL};
    b->node_types[m->node_count] = result;
    m->node_count++;
    return KILN_OK;
}

kiln_status kiln_builder_set_node_name(kiln_builder *b, kiln_value node, const char *name, kiln_error *err)
{
    if (!b)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "builder is NULL");
    if (node >= b->value_count || b->values[node].kind != VALUE_NODE)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "value %u is not the result of an op of this builder; only nodes have names", node);
    kiln_node_decl *decl = &b->model.nodes[b->values[node].index];
    char *copy = NULL;
    if (name) {
        const char *problem = kiln_node_name_problem(name, strlen(name));
        if (problem)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "node %u (%s): the name %s; a node name is 1..%d bytes of UTF-8 text without "
                             "control characters",
                             b->values[node].index, b->model.opset[decl->op].name, problem, KILN_MAX_NODE_NAME);
        if (!(copy = strdup(name)))
            return no_memory(err);
    }
    free(decl->name);
    decl->name = copy;
    return KILN_OK;
}

kiln_status kiln_builder_add_evidence(kiln_builder *b, const kiln_evidence_case *evidence, kiln_error *err)
{
    kiln_model *m = &b->model;
    kiln_evidence_record c;
    KILN_TRY(kiln_evidence_record_from_case(evidence, &c, err));
    const char *name = c.name;
    /* Names are checked now so the error points at this call; dtypes,
     * ranks and rules are checked with the whole program when sealing. */
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; status == KILN_OK && i < c.input_count; i++) {
        /* "state:NAME": the rows a state holds when the case starts (a decode step's cache). */
        bool found = kiln_evidence_state_input(m, c.inputs[i].name) != NULL;
        for (uint32_t j = 0; j < m->input_count; j++)
            found = found || strcmp(m->inputs[j].name, c.inputs[i].name) == 0;
        if (!found)
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence '%s': '%s' is not an input%s", name,
                               c.inputs[i].name, m->state_count ? " (a state's rows are named state:NAME)" : "");
    }
    for (uint32_t i = 0; status == KILN_OK && i < c.output_count; i++) {
        bool found = false;
        for (uint32_t j = 0; j < m->output_count; j++)
            found = found || strcmp(m->outputs[j].name, c.outputs[i].name) == 0;
        if (!found)
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence '%s': '%s' is not an output", name,
                               c.outputs[i].name);
    }
    if (status == KILN_OK) {
        kiln_evidence_record *grown = realloc(m->evidence, (m->evidence_count + 1) * sizeof *grown);
        if (grown) {
            m->evidence = grown;
            m->evidence[m->evidence_count++] = c;
            return KILN_OK;
        }
        status = no_memory(err);
    }
    kiln_evidence_record_release(&c);
    return status;
}

kiln_status kiln_builder_add_generation(kiln_builder *b, const kiln_generation_case *evidence, kiln_error *err)
{
    if (!b)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_builder_add_generation: builder is NULL");
    if (b->is_method)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "a generation case spans methods: add it to the program's builder, not to a method's");
    kiln_model *m = &b->model;
    kiln_generation_record c;
    KILN_TRY(kiln_generation_record_from_case(evidence, &c, err));
    kiln_generation_record *grown = realloc(m->generations, (m->generation_count + 1) * sizeof *grown);
    if (!grown) {
        kiln_generation_record_release(&c);
        return no_memory(err);
    }
    m->generations = grown;
    m->generations[m->generation_count++] = c;
    return KILN_OK;
}

/* The builder's generation cases, copied into the sealed root `out` and checked against its methods. */
static kiln_status seal_generations(const kiln_builder *b, kiln_model *out, kiln_error *err)
{
    const kiln_model *m = &b->model;
    if (!m->generation_count)
        return KILN_OK;
    if (!(out->generations = calloc(m->generation_count, sizeof *out->generations)))
        return no_memory(err);
    for (uint32_t i = 0; i < m->generation_count; i++, out->generation_count++) {
        kiln_generation_case view;
        kiln_generation_record_view(&m->generations[i], &view);
        KILN_TRY(kiln_generation_record_from_case(&view, &out->generations[i], err));
    }
    return kiln_generation_check(out, err);
}

kiln_status kiln_builder_add_output(kiln_builder *b, const char *name, kiln_value value, kiln_error *err)
{
    kiln_model *m = &b->model;
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "output name '%s' is not an identifier", name ? name : "(null)");
    if (value >= b->value_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "output '%s': not a value of this builder", name);
    for (uint32_t i = 0; i < m->output_count; i++)
        if (strcmp(m->outputs[i].name, name) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "output '%s' is already declared", name);
    char *copy = strdup(name);
    if (!copy || !reserve_one((void **)&m->outputs, &b->output_capacity, m->output_count, sizeof *m->outputs)) {
        free(copy);
        return no_memory(err);
    }
    m->outputs[m->output_count++] = (kiln_output_decl){copy, value}; /* a handle until sealing */
    return KILN_OK;
}

/* ------------------------------------------------------------- methods */

static bool method_name_taken(const kiln_builder *b, const char *name)
{
    if (strcmp(name, b->method_name ? b->method_name : KILN_MAIN_METHOD) == 0)
        return true;
    for (uint32_t i = 0; i < b->method_count; i++)
        if (strcmp(b->method_names[i], name) == 0)
            return true;
    return false;
}

kiln_status kiln_builder_add_method(kiln_builder *b, const char *name, kiln_builder *method, kiln_error *err)
{
    if (!b || !method)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "builder or method is NULL");
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method name '%s' is not an identifier",
                         name ? name : "(null)");
    if (method == b || b->is_method)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "method '%s': a method is added to the program's own builder, not to itself or to "
                         "another method", name);
    if (method->is_method || method->method_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "method '%s': the builder %s", name,
                         method->is_method ? "is a method of a program already" : "has methods of its own");
    if (method->model.mode != b->model.mode)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "method '%s': a method shares the program's mode; set it on the program's builder, not the "
                         "method's", name);
    if (method_name_taken(b, name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the program has a method called '%s' already", name);
    char *copy = strdup(name);
    kiln_builder **methods = realloc(b->methods, (b->method_count + 1) * sizeof *methods);
    if (methods)
        b->methods = methods;
    char **names = methods ? realloc(b->method_names, (b->method_count + 1) * sizeof *names) : NULL;
    if (names)
        b->method_names = names;
    if (!copy || !methods || !names) {
        free(copy);
        return no_memory(err);
    }
    b->methods[b->method_count] = method;
    b->method_names[b->method_count++] = copy;
    method->is_method = true;
    return KILN_OK;
}

kiln_status kiln_builder_set_method_name(kiln_builder *b, const char *name, kiln_error *err)
{
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method name '%s' is not an identifier",
                         name ? name : "(null)");
    for (uint32_t i = 0; i < b->method_count; i++)
        if (strcmp(b->method_names[i], name) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the program has a method called '%s' already", name);
    char *copy = strdup(name);
    if (!copy)
        return no_memory(err);
    free(b->method_name);
    b->method_name = copy;
    return KILN_OK;
}

/* ------------------------------------------------------------- sealing */

/*
 * The program's one weight table and op table as sealing lays them out:
 * the program builder's entries first, in its order, then each method's
 * that are not there yet; and, per builder (0 the program's, 1.. its
 * methods), where each of its own entries went.
 */
typedef struct shared_tables {
    kiln_weight_decl *weights; /* shallow copies: names and bytes stay the builders' (or `renamed`) */
    char **renamed;            /* per table weight: an owned new name, or NULL */
    uint32_t weight_count;
    kiln_opset_entry *opset;   /* shallow copies */
    uint32_t opset_count;
    uint32_t **weight_map;     /* [builder][its weight] -> table weight */
    uint32_t **op_map;         /* [builder][its opset entry] -> table entry */
    uint32_t builder_count;
} shared_tables;

static void shared_tables_release(shared_tables *s)
{
    for (uint32_t i = 0; s->renamed && i < s->weight_count; i++)
        free(s->renamed[i]);
    for (uint32_t i = 0; i < s->builder_count; i++) {
        if (s->weight_map)
            free(s->weight_map[i]);
        if (s->op_map)
            free(s->op_map[i]);
    }
    free(s->weights);
    free(s->renamed);
    free(s->opset);
    free(s->weight_map);
    free(s->op_map);
    memset(s, 0, sizeof *s);
}

static const kiln_builder *builder_at(const kiln_builder *root, uint32_t index)
{
    return index == 0 ? root : root->methods[index - 1];
}

static const char *builder_method_name(const kiln_builder *root, uint32_t index)
{
    if (index == 0)
        return root->method_name ? root->method_name : KILN_MAIN_METHOD;
    return root->method_names[index - 1];
}

/* The same tensor: kind, dtype, shape and bytes (or the same file bytes). */
static bool same_tensor(const kiln_weight_decl *a, const kiln_weight_decl *b)
{
    if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank || a->byte_size != b->byte_size ||
        memcmp(a->shape, b->shape, a->rank * sizeof *a->shape) != 0)
        return false;
    if (a->data && b->data)
        return a->byte_size == 0 || memcmp(a->data, b->data, (size_t)a->byte_size) == 0;
    return a->source_path && b->source_path && strcmp(a->source_path, b->source_path) == 0 &&
           a->source_offset == b->source_offset;
}

static const char *table_weight_name(const shared_tables *s, uint32_t i)
{
    return s->renamed[i] ? s->renamed[i] : s->weights[i].name;
}

/* Whether `name` is a table weight's or an input's of any builder of the program. */
static bool name_in_program(const kiln_builder *root, const shared_tables *s, const char *name)
{
    for (uint32_t i = 0; i < s->weight_count; i++)
        if (strcmp(table_weight_name(s, i), name) == 0)
            return true;
    for (uint32_t m = 0; m <= root->method_count; m++) {
        const kiln_model *model = &builder_at(root, m)->model;
        for (uint32_t i = 0; i < model->input_count; i++)
            if (strcmp(model->inputs[i].name, name) == 0)
                return true;
    }
    return false;
}

/* NAME.METHOD (then NAME.METHOD.2, ...): a name no table weight and no input has. */
static char *method_weight_name(const kiln_builder *root, uint32_t index, const shared_tables *s, const char *name)
{
    char candidate[8192];
    for (uint32_t k = 1;; k++) {
        if (k == 1)
            snprintf(candidate, sizeof candidate, "%s.%s", name, builder_method_name(root, index));
        else
            snprintf(candidate, sizeof candidate, "%s.%s.%u", name, builder_method_name(root, index), k);
        if (!name_in_program(root, s, candidate))
            return strdup(candidate);
    }
}

/*
 * Where builder `index`'s weight `w` goes in the table. A method's tensor
 * equal to one already there (kind, dtype, shape, bytes) is that entry,
 * whatever its name: one set of weights, stored once, also when importers
 * named the copies differently. A different tensor whose name is taken is
 * a new entry named NAME.METHOD (importers name constants val_0, val_1, ...
 * in each graph), as is a weight whose name is another method's input.
 */
static kiln_status place_weight(const kiln_builder *root, uint32_t index, uint32_t w, shared_tables *s,
                                kiln_error *err)
{
    const kiln_weight_decl *decl = &builder_at(root, index)->model.weights[w];
    for (uint32_t i = 0; index > 0 && i < s->weight_count; i++) {
        if (same_tensor(&s->weights[i], decl)) {
            s->weight_map[index][w] = i;
            return KILN_OK;
        }
    }
    uint32_t at = s->weight_count;
    s->weights[at] = *decl;
    s->renamed[at] = NULL;
    /* (The program's own weights clash only with a method's input: every method's values number them.) */
    if (name_in_program(root, s, decl->name) && !(s->renamed[at] = method_weight_name(root, index, s, decl->name)))
        return no_memory(err);
    s->weight_count++;
    s->weight_map[index][w] = at;
    return KILN_OK;
}

/* The program's weight and op tables over the builder and its methods (see shared_tables). */
static kiln_status lay_out_tables(const kiln_builder *root, shared_tables *s, kiln_error *err)
{
    memset(s, 0, sizeof *s);
    uint64_t weights = 0, ops = 0;
    for (uint32_t m = 0; m <= root->method_count; m++) {
        weights += builder_at(root, m)->model.weight_count;
        ops += builder_at(root, m)->model.opset_count;
    }
    if (weights >= UINT32_MAX || ops >= UINT32_MAX)
        return kiln_fail(err, KILN_ERR_LIMIT, "the methods have more than 2^32 weights or ops together");
    s->builder_count = root->method_count + 1;
    s->weights = calloc(weights + 1, sizeof *s->weights);
    s->renamed = calloc(weights + 1, sizeof *s->renamed);
    s->opset = calloc(ops + 1, sizeof *s->opset);
    s->weight_map = calloc(s->builder_count, sizeof *s->weight_map);
    s->op_map = calloc(s->builder_count, sizeof *s->op_map);
    if (!s->weights || !s->renamed || !s->opset || !s->weight_map || !s->op_map)
        return no_memory(err);
    for (uint32_t m = 0; m < s->builder_count; m++) {
        const kiln_model *model = &builder_at(root, m)->model;
        s->weight_map[m] = calloc(model->weight_count + 1, sizeof **s->weight_map);
        s->op_map[m] = calloc(model->opset_count + 1, sizeof **s->op_map);
        if (!s->weight_map[m] || !s->op_map[m])
            return no_memory(err);
        for (uint32_t w = 0; w < model->weight_count; w++)
            KILN_TRY(place_weight(root, m, w, s, err));
        for (uint32_t o = 0; o < model->opset_count; o++) {
            uint32_t at = 0;
            while (at < s->opset_count && s->opset[at].def != model->opset[o].def)
                at++;
            if (at == s->opset_count)
                s->opset[s->opset_count++] = model->opset[o];
            s->op_map[m][o] = at;
        }
    }
    return KILN_OK;
}

/* Value `v` of builder `index` as the sealed program numbers it: inputs, every table weight, nodes. */
static uint32_t canonical_id(const kiln_builder *b, const shared_tables *s, uint32_t index, kiln_value v)
{
    const builder_value *bv = &b->values[v];
    switch (bv->kind) {
    case VALUE_INPUT: return bv->index;
    case VALUE_WEIGHT: return b->model.input_count + s->weight_map[index][bv->index];
    case VALUE_NODE: break;
    }
    return b->model.input_count + s->weight_count + bv->index;
}

static char *dup_or_fail(const char *s, bool *failed)
{
    char *copy = strdup(s);
    if (!copy)
        *failed = true;
    return copy;
}

/* Intern expression `id` of `from` (children first) into `to`. */
static kiln_status copy_expr(const kiln_expr_pool *from, uint32_t id, kiln_expr_pool *to, uint32_t dim_count,
                             uint32_t *out, kiln_error *err)
{
    kiln_expr node = from->items[id];
    if (node.kind != KILN_EXPR_CONST && node.kind != KILN_EXPR_DIM) {
        KILN_TRY(copy_expr(from, node.lhs, to, dim_count, &node.lhs, err));
        KILN_TRY(copy_expr(from, node.rhs, to, dim_count, &node.rhs, err));
    }
    return kiln_expr_intern(to, &node, dim_count, out, err);
}

/* Copy a node's owned attributes into `to` through their public form. */
static kiln_status copy_node_attributes(const kiln_node_decl *from, kiln_node_decl *to)
{
    kiln_attribute *view = calloc(from->attribute_count + 1, sizeof *view);
    if (!view)
        return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < from->attribute_count; i++)
        view[i] = kiln_attribute_view(&from->attributes[i]);
    kiln_status status = kiln_attributes_copy(from->attribute_count, view, &to->attributes, NULL);
    if (status == KILN_OK)
        to->attribute_count = from->attribute_count;
    free(view);
    return status;
}

/*
 * The program's metadata into out: its own entries and those of its
 * methods (an importer sets the same producer entries on each), sorted by
 * key; a key two of them set to different values is refused.
 */
static kiln_status seal_metadata(const kiln_builder *root, kiln_model *out, kiln_error *err)
{
    uint64_t total = 0;
    for (uint32_t m = 0; m <= root->method_count; m++)
        total += builder_at(root, m)->model.metadata_count;
    out->metadata = calloc(total + 1, sizeof *out->metadata);
    if (!out->metadata)
        return no_memory(err);
    for (uint32_t m = 0; m <= root->method_count; m++) {
        const kiln_model *model = &builder_at(root, m)->model;
        for (uint32_t i = 0; i < model->metadata_count; i++) {
            const kiln_metadata_entry *e = &model->metadata[i];
            uint32_t at = 0;
            while (at < out->metadata_count && strcmp(out->metadata[at].key, e->key) < 0)
                at++;
            if (at < out->metadata_count && strcmp(out->metadata[at].key, e->key) == 0) {
                if (strcmp(out->metadata[at].value, e->value) != 0)
                    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                                     "method '%s' sets metadata '%s' to '%s', another method to '%s': the methods "
                                     "share the program's metadata; set it once on the program's builder",
                                     builder_method_name(root, m), e->key, e->value, out->metadata[at].value);
                continue;
            }
            bool failed = false;
            kiln_metadata_entry copy = {dup_or_fail(e->key, &failed), dup_or_fail(e->value, &failed)};
            if (failed) {
                free(copy.key);
                free(copy.value);
                return no_memory(err);
            }
            memmove(&out->metadata[at + 1], &out->metadata[at], (out->metadata_count - at) * sizeof *out->metadata);
            out->metadata[at] = copy;
            out->metadata_count++;
        }
    }
    return KILN_OK;
}

/* The program's own tables, deep-copied from the laid-out ones: name, mode, weights, opset. */
static bool seal_tables(const kiln_builder *b, const shared_tables *s, kiln_model *out)
{
    const kiln_model *m = &b->model;
    bool failed = false;
    out->name = dup_or_fail(m->name, &failed);
    out->mode = m->mode;
    out->weights = calloc(s->weight_count + 1, sizeof *out->weights);
    out->opset = calloc(s->opset_count + 1, sizeof *out->opset);
    if (!out->weights || !out->opset)
        return false;
    for (uint32_t i = 0; !failed && i < s->weight_count; i++, out->weight_count++) {
        out->weights[i] = s->weights[i];
        out->weights[i].name = dup_or_fail(table_weight_name(s, i), &failed);
    }
    for (uint32_t i = 0; !failed && i < s->opset_count; i++, out->opset_count++) {
        out->opset[i] = s->opset[i];
        out->opset[i].name = dup_or_fail(s->opset[i].name, &failed);
    }
    return !failed;
}

/*
 * The program's states: every builder's, each once. Methods declare the
 * states they use themselves (a method builder is filled before it is
 * added), so one name declared two ways is refused here, naming the
 * method whose declaration differs from an earlier one.
 */
static kiln_status seal_states(const kiln_builder *root, kiln_model *out, kiln_error *err)
{
    uint32_t total = 0;
    for (uint32_t b = 0; b <= root->method_count; b++)
        total += builder_at(root, b)->model.state_count;
    out->states = calloc(total + 1, sizeof *out->states);
    if (!out->states)
        return no_memory(err);
    for (uint32_t b = 0; b <= root->method_count; b++) {
        const kiln_model *m = &builder_at(root, b)->model;
        for (uint32_t i = 0; i < m->state_count; i++) {
            const kiln_state_decl *decl = &m->states[i];
            const kiln_state_decl *held = kiln_state_decl_find(out->states, out->state_count, decl->name);
            if (held && kiln_state_decl_equal(held, decl))
                continue;
            if (held)
                return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                                 "state '%s' is declared differently by method '%s' than by an earlier method; every "
                                 "method declares a state alike", decl->name, builder_method_name(root, b));
            kiln_state_decl *copy = &out->states[out->state_count];
            *copy = *decl;
            copy->name = strdup(decl->name);
            copy->length_dim = strdup(decl->length_dim);
            out->state_count++;
            if (!copy->name || !copy->length_dim)
                return no_memory(err);
        }
    }
    return KILN_OK;
}

/*
 * Deep-copy builder `index` of the program (0: `root` itself, else its
 * method) with canonical value ids into `out`: the program's own method
 * with the tables, or a method borrowing `sealed_root`'s.
 */
static kiln_status seal_model(const kiln_builder *root, uint32_t index, const shared_tables *s,
                              const kiln_model *sealed_root, kiln_model *out, kiln_error *err)
{
    const kiln_builder *b = builder_at(root, index);
    const kiln_model *m = &b->model;
    bool failed = false;
    memset(out, 0, sizeof *out);
    if (sealed_root) {
        char *name = strdup(builder_method_name(root, index));
        kiln_model_method_init(out, sealed_root, name);
        failed = !name;
    } else {
        kiln_expr_pool_init(&out->exprs);
        failed = !seal_tables(b, s, out);
        if (!failed) {
            kiln_status status = seal_metadata(root, out, err);
            if (status == KILN_OK)
                status = seal_states(root, out, err);
            if (status != KILN_OK) {
                kiln_model_release(out);
                return status;
            }
        }
        if (!failed && root->method_count)
            out->method_name = dup_or_fail(builder_method_name(root, 0), &failed);
    }
    out->dims = calloc(m->dim_count + 1, sizeof *out->dims);
    out->inputs = calloc(m->input_count + 1, sizeof *out->inputs);
    out->nodes = calloc(m->node_count + 1, sizeof *out->nodes);
    out->outputs = calloc(m->output_count + 1, sizeof *out->outputs);
    if (!out->dims || !out->inputs || !out->nodes || !out->outputs)
        failed = true;
    for (uint32_t i = 0; !failed && i < m->dim_count; i++, out->dim_count++) {
        out->dims[i] = m->dims[i];
        out->dims[i].name = dup_or_fail(m->dims[i].name, &failed);
    }
    for (uint32_t i = 0; !failed && i < m->input_count; i++, out->input_count++) {
        out->inputs[i] = m->inputs[i];
        out->inputs[i].name = dup_or_fail(m->inputs[i].name, &failed);
    }
    for (uint32_t n = 0; !failed && n < m->node_count; n++, out->node_count++) {
        const kiln_node_decl *node = &m->nodes[n];
        out->nodes[n] = *node;
        out->nodes[n].op = s->op_map[index][node->op];
        out->nodes[n].inputs = calloc(node->input_count + 1, sizeof *node->inputs);
        if (!out->nodes[n].inputs) {
            failed = true;
            break;
        }
        for (uint32_t i = 0; i < node->input_count; i++)
            out->nodes[n].inputs[i] = canonical_id(b, s, index, node->inputs[i]);
        out->nodes[n].attribute_count = 0;
        out->nodes[n].attributes = NULL;
        out->nodes[n].name = NULL;
        if (copy_node_attributes(node, &out->nodes[n]) != KILN_OK)
            failed = true;
        if (node->name)
            out->nodes[n].name = dup_or_fail(node->name, &failed);
    }
    for (uint32_t i = 0; !failed && i < m->output_count; i++, out->output_count++) {
        out->outputs[i].name = dup_or_fail(m->outputs[i].name, &failed);
        out->outputs[i].value = canonical_id(b, s, index, m->outputs[i].value);
    }
    out->checks = calloc(m->check_count + 1, sizeof *out->checks);
    failed = failed || !out->checks;
    for (uint32_t i = 0; !failed && i < m->check_count; i++, out->check_count++) {
        const kiln_input_check_decl *c = &m->checks[i];
        kiln_input_check view;
        kiln_input_check_default(&view);
        view.has_range = c->has_range;
        view.min = c->min;
        view.max = c->max;
        view.finite_only = c->finite_only;
        view.category_count = c->category_count;
        view.categories = c->categories;
        view.unit = c->unit;
        view.description = c->description;
        failed = kiln_input_check_copy(c->input, &view, &out->checks[i], NULL) != KILN_OK;
    }
    out->evidence = calloc(m->evidence_count + 1, sizeof *out->evidence);
    failed = failed || !out->evidence;
    for (uint32_t i = 0; !failed && i < m->evidence_count; i++, out->evidence_count++)
        failed = kiln_evidence_record_copy(&m->evidence[i], &out->evidence[i], NULL) != KILN_OK;
    /* The stored pool holds exactly the expressions the input axes use, in
     * the order a walk of those axes first meets them, so the file depends
     * on the program and not on the order of builder calls. */
    for (uint32_t i = 0; !failed && i < out->input_count; i++) {
        kiln_shape *shape = &out->inputs[i].type.shape;
        for (uint32_t a = 0; !failed && a < shape->rank; a++)
            if (copy_expr(&m->exprs, shape->axes[a], &out->exprs, m->dim_count, &shape->axes[a], err) != KILN_OK)
                failed = true;
    }
    /* Derived dims follow, so their expressions are stored too. */
    out->derived = calloc(m->derived_count + 1, sizeof *out->derived);
    failed = failed || !out->derived;
    for (uint32_t i = 0; !failed && i < m->derived_count; i++, out->derived_count++) {
        out->derived[i].name = dup_or_fail(m->derived[i].name, &failed);
        if (!failed && copy_expr(&m->exprs, m->derived[i].expr, &out->exprs, m->dim_count, &out->derived[i].expr,
                                 err) != KILN_OK)
            failed = true;
    }
    /* Then the runtime guards' expressions (non-strict programs). */
    out->non_strict = m->non_strict;
    for (uint32_t i = 0; !failed && i < m->guards.count; i++) {
        kiln_runtime_guard g = m->guards.items[i];
        if (copy_expr(&m->exprs, g.a, &out->exprs, m->dim_count, &g.a, err) != KILN_OK ||
            (g.kind == KILN_CLAIM_EQUAL && copy_expr(&m->exprs, g.b, &out->exprs, m->dim_count, &g.b, err) != KILN_OK) ||
            kiln_guard_list_add(&out->guards, &g, g.text, err) != KILN_OK)
            failed = true;
    }
    /* Then the relations' sides. */
    out->relations = calloc(m->relation_count + 1, sizeof *out->relations);
    failed = failed || !out->relations;
    for (uint32_t i = 0; !failed && i < m->relation_count; i++, out->relation_count++)
        if (copy_expr(&m->exprs, m->relations[i].lhs, &out->exprs, m->dim_count, &out->relations[i].lhs, err) !=
                KILN_OK ||
            copy_expr(&m->exprs, m->relations[i].rhs, &out->exprs, m->dim_count, &out->relations[i].rhs, err) != KILN_OK)
            failed = true;
    out->stored_expr_count = out->exprs.count;
    if (failed) {
        kiln_model_release(out);
        return no_memory(err);
    }
    /* The default budget: an artifact the default loader cannot check is not written. */
    kiln_status status = kiln_model_infer(out, KILN_DEFAULT_MAX_PROOF_STEPS, err);
    return root->method_count ? kiln_fail_within(err, status, "method '%s'", builder_method_name(root, index))
                              : status;
}

/* Seal the program: its own method with the shared tables, then each further method over them. */
static kiln_status seal_program(const kiln_builder *b, kiln_model *out, kiln_error *err)
{
    shared_tables tables;
    memset(out, 0, sizeof *out);
    kiln_status status = lay_out_tables(b, &tables, err);
    if (status == KILN_OK)
        status = seal_model(b, 0, &tables, NULL, out, err);
    if (status == KILN_OK && b->method_count) {
        out->methods = calloc(b->method_count, sizeof *out->methods);
        if (!out->methods)
            status = no_memory(err);
    }
    for (uint32_t i = 0; status == KILN_OK && i < b->method_count; i++) {
        status = seal_model(b, i + 1, &tables, out, &out->methods[i], err);
        if (status == KILN_OK)
            out->method_count++;
        else
            kiln_model_release(&out->methods[i]);
    }
    shared_tables_release(&tables);
    if (status == KILN_OK)
        status = seal_generations(b, out, err);
    if (status != KILN_OK)
        kiln_model_release(out);
    return status;
}

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define SAVE_OPTIONS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_save_options, reader_limits)

static void save_options_default(kiln_save_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->compression_level = 0;
    options->timestamp = -1;
}

void kiln_save_options_init(kiln_save_options *options, size_t struct_size)
{
    kiln_save_options defaults;
    save_options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

/*
 * The timestamp to record, or -1 for none: the option, else
 * SOURCE_DATE_EPOCH (the reproducible-builds convention), else none.
 */
static kiln_status choose_timestamp(const kiln_save_options *options, int64_t *out, kiln_error *err)
{
    *out = options->timestamp;
    if (*out >= 0)
        return KILN_OK;
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    if (!epoch || !*epoch)
        return KILN_OK;
    char *end;
    errno = 0;
    long long value = strtoll(epoch, &end, 10);
    /* The convention allows decimal digits only (no sign, no spaces). */
    bool digits_only = strspn(epoch, "0123456789") == strlen(epoch);
    if (errno || *end || value < 0 || !digits_only)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "SOURCE_DATE_EPOCH='%s' is not a non-negative number of seconds", epoch);
    *out = value;
    return KILN_OK;
}

/* Record `timestamp` as metadata "created" in ISO 8601 UTC. */
static kiln_status stamp(kiln_model *m, int64_t timestamp, kiln_error *err)
{
    time_t seconds = (time_t)timestamp;
    struct tm utc;
    char text[32];
    if ((int64_t)seconds != timestamp || !gmtime_r(&seconds, &utc) ||
        strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "timestamp %lld cannot be represented",
                         (long long)timestamp);
    uint32_t at = 0;
    while (at < m->metadata_count && strcmp(m->metadata[at].key, "created") < 0)
        at++;
    char *value = strdup(text);
    if (!value)
        return no_memory(err);
    if (at < m->metadata_count && strcmp(m->metadata[at].key, "created") == 0) {
        free(m->metadata[at].value);
        m->metadata[at].value = value;
        return KILN_OK;
    }
    char *key = strdup("created");
    kiln_metadata_entry *grown = realloc(m->metadata, (m->metadata_count + 1) * sizeof *grown);
    if (!key || !grown) {
        free(key);
        free(value);
        if (grown)
            m->metadata = grown;
        return no_memory(err);
    }
    m->metadata = grown;
    memmove(&m->metadata[at + 1], &m->metadata[at], (m->metadata_count - at) * sizeof *m->metadata);
    m->metadata[at] = (kiln_metadata_entry){key, value};
    m->metadata_count++;
    return KILN_OK;
}

/* Read the caller's `options` (NULL: the defaults) into *settings, check
 * them, and seal the builder's program into *sealed. */
static kiln_status seal_with_options(const kiln_builder *b, const kiln_save_options *options,
                                     kiln_save_options *settings, kiln_model *sealed, kiln_error *err)
{
    int64_t timestamp;
    memset(sealed, 0, sizeof *sealed);
    save_options_default(settings);
    KILN_TRY(kiln_struct_read(settings, sizeof *settings, options, SAVE_OPTIONS_SIZE_1_0, "kiln_save_options",
                              err));
    if (settings->compression_level < 0 || settings->compression_level > 9)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "compression level %d is not in 0..9",
                         settings->compression_level);
    kiln_limits reader_limits;
    KILN_TRY(kiln_limits_read(settings->reader_limits, &reader_limits, err));
    settings->reader_limits = NULL; /* read: the caller's pointer is not kept */
    KILN_TRY(choose_timestamp(settings, &timestamp, err));
    kiln_status status = seal_program(b, sealed, err);
    if (status == KILN_OK)
        status = kiln_model_fits_reader_limits(sealed, &reader_limits, err);
    if (status == KILN_OK && timestamp >= 0)
        status = stamp(sealed, timestamp, err);
    kiln_model_share_tables(sealed); /* stamping may have moved the metadata the methods borrow */
    if (status != KILN_OK)
        kiln_model_release(sealed);
    return status;
}

kiln_status kiln_builder_encode(const kiln_builder *b, const kiln_save_options *options, void **bytes,
                                size_t *size, kiln_error *err)
{
    kiln_save_options settings;
    kiln_model sealed;
    kiln_writer out;
    *bytes = NULL;
    *size = 0;
    KILN_TRY(seal_with_options(b, options, &settings, &sealed, err));
    kiln_writer_init(&out);
    kiln_progress progress = {settings.progress, settings.progress_user, 0, 0, 0};
    kiln_status status = kiln_model_encode(&sealed, settings.compression_level, settings.store_memory_plan, &out,
                                           &progress, err);
    kiln_model_release(&sealed);
    if (status != KILN_OK) {
        kiln_writer_release(&out);
        return status;
    }
    *bytes = out.data;
    *size = out.size;
    return KILN_OK;
}

kiln_status kiln_builder_save(const kiln_builder *b, const char *path, const kiln_save_options *options,
                              kiln_error *err)
{
    kiln_save_options settings;
    kiln_model sealed;
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    KILN_TRY(seal_with_options(b, options, &settings, &sealed, err));
    /* Streamed: the weights go from the builder (or their files) to the
     * temporary file a piece at a time, hashed on the way. */
    kiln_progress progress = {settings.progress, settings.progress_user, 0, 0, 0};
    kiln_status status = kiln_model_save(&sealed, settings.compression_level, settings.store_memory_plan, path,
                                         &progress, err);
    kiln_model_release(&sealed);
    return status;
}

kiln_status kiln_builder_share_weight(kiln_builder *method, const kiln_builder *program, const char *name,
                                      kiln_value *out, kiln_error *err)
{
    for (uint32_t i = 0; i < program->model.weight_count; i++) {
        const kiln_weight_decl *w = &program->model.weights[i];
        if (strcmp(w->name, name) != 0)
            continue;
        return add_weight(method, w->name, w->kind, w->dtype, w->rank, w->shape, w->data, w->source_path,
                          w->source_offset, w->source_no_follow, out, err);
    }
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the program has no weight '%s'", name);
}

/* ------------------------------------------------ queries (builder.h) */

kiln_status kiln_builder_value_dtype(const kiln_builder *b, kiln_value value, kiln_dtype *out, kiln_error *err)
{
    if (value >= b->value_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "value %u is not a value of this builder", value);
    const builder_value *bv = &b->values[value];
    *out = bv->kind == VALUE_WEIGHT ? b->model.weights[bv->index].dtype : value_type(b, value)->dtype;
    return KILN_OK;
}

kiln_status kiln_builder_value_type(const kiln_builder *b, kiln_value value, kiln_dtype *dtype, uint32_t *rank,
                                    int64_t sizes[KILN_MAX_RANK], kiln_error *err)
{
    if (value >= b->value_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "value %u is not a value of this builder", value);
    const builder_value *bv = &b->values[value];
    if (bv->kind == VALUE_WEIGHT) {
        const kiln_weight_decl *w = &b->model.weights[bv->index];
        *dtype = w->dtype;
        *rank = w->rank;
        for (uint32_t a = 0; sizes && a < w->rank; a++)
            sizes[a] = w->shape[a];
        return KILN_OK;
    }
    const kiln_value_type *type = value_type(b, value);
    *dtype = type->dtype;
    *rank = type->shape.rank;
    for (uint32_t a = 0; sizes && a < type->shape.rank; a++) {
        const kiln_expr *axis = &b->model.exprs.items[type->shape.axes[a]];
        sizes[a] = axis->kind == KILN_EXPR_CONST ? axis->constant : -1;
    }
    return KILN_OK;
}

/* Write canonical expression `id` of the builder's pool as text, like snprintf. */
static kiln_status format_size(kiln_builder *b, uint32_t id, char *buffer, size_t size, size_t *length,
                               kiln_error *err)
{
    uint32_t canonical;
    KILN_TRY(kiln_expr_canonical(&b->model.exprs, id, &canonical, err));
    const char **names = kiln_model_dim_names(&b->model);
    if (!names)
        return no_memory(err);
    int n = kiln_expr_format(&b->model.exprs, canonical, names, buffer, size);
    free(names);
    if (length)
        *length = n > 0 ? (size_t)n : 0;
    return KILN_OK;
}

kiln_status kiln_builder_value_axis_text(kiln_builder *b, kiln_value value, uint32_t axis, char *buffer,
                                         size_t size, size_t *length, kiln_error *err)
{
    if (value >= b->value_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "value %u is not a value of this builder", value);
    const builder_value *bv = &b->values[value];
    if (bv->kind == VALUE_WEIGHT) {
        const kiln_weight_decl *w = &b->model.weights[bv->index];
        if (axis >= w->rank)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "axis %u is out of range for a value of rank %u", axis,
                             w->rank);
        int n = snprintf(buffer, size, "%lld", (long long)w->shape[axis]);
        if (length)
            *length = n > 0 ? (size_t)n : 0;
        return KILN_OK;
    }
    const kiln_value_type *type = value_type(b, value);
    if (axis >= type->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "axis %u is out of range for a value of rank %u", axis,
                         type->shape.rank);
    return format_size(b, type->shape.axes[axis], buffer, size, length, err);
}

kiln_status kiln_builder_canonical_size(kiln_builder *b, const char *expression, char *buffer, size_t size,
                                        size_t *length, kiln_error *err)
{
    if (!expression)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "size expression is NULL");
    kiln_shape parsed;
    KILN_TRY(parse_shape(b, expression, &parsed, err));
    if (parsed.rank != 1)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is %u size expressions, not one", expression,
                         parsed.rank);
    return format_size(b, parsed.axes[0], buffer, size, length, err);
}

kiln_status kiln_builder_share_states(kiln_builder *method, const kiln_builder *program, kiln_error *err)
{
    for (uint32_t i = 0; i < program->model.state_count; i++) {
        const kiln_state_decl *st = &program->model.states[i];
        KILN_TRY(kiln_builder_add_state(method, st->name, st->dtype, st->rank, st->shape, st->axis, st->length_dim,
                                        err));
    }
    return KILN_OK;
}
