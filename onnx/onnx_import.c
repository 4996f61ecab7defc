/*
 * onnx_import.c — an ONNX graph into a kiln builder (see onnx_import.h).
 *
 * Every ONNX value name maps to an entry: a graph input, a constant (an
 * initializer, a Constant node's value, or a graph input whose value the
 * caller fixed), an op result, or "broken" — the output of a node that
 * could not be imported. Constants become kiln weights only when some op
 * uses them as a value, so a shape or axes operand folded into an
 * attribute leaves no weight behind. A node that reads a broken value is
 * not translated, but its op is still looked up, so the report names
 * every op the model needs that kiln lacks.
 *
 * A small integer tensor computed from sizes that are kiln dims (the
 * Shape -> Gather -> Concat -> Reshape arithmetic of exports with dynamic
 * axes) is "symbolic": its elements are kept as canonical size texts
 * ("batch", "4*batch", "32") and folded into the attributes of the ops
 * that take it as a shape (symbolic folding, spec/onnx-import.md §3). Its
 * node is translated into kiln ops only if something uses it as data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_error.h"
#include "onnx_import.h"
#include "onnx_ops.h"

enum entry_kind { ENTRY_INPUT, ENTRY_CONSTANT, ENTRY_VALUE, ENTRY_BROKEN, ENTRY_SYMBOLIC };

/* Most elements a symbolic tensor holds: a shape of rank KILN_MAX_RANK, with room for Concat's parts. */
#define SYMBOLIC_MAX_ELEMENTS 16
/* Longest canonical size text kept. */
#define SIZE_TEXT_MAX 128

typedef struct value_entry {
    const char *onnx_name; /* borrowed from the model */
    enum entry_kind kind;
    bool has_value;
    kiln_value value;
    kiln_tensor *constant; /* ENTRY_CONSTANT, and ENTRY_INPUT with a known value */
    bool owns_constant;
    bool from_initializer;
    const Onnx__ValueInfoProto *info; /* ENTRY_INPUT */
    /* ENTRY_SYMBOLIC: rank 0 or 1, its elements as canonical size texts, the node that computed it. */
    uint32_t symbolic_rank, symbolic_count;
    char (*symbolic)[SIZE_TEXT_MAX];
    size_t source_node;
} value_entry;

/* Open-addressing table of C strings to indices (value entries, or kiln names in use). */
typedef struct name_table {
    const char **keys;
    uint32_t *indices;
    uint32_t capacity; /* power of two */
    uint32_t count;
} name_table;

struct onnx_importer {
    const Onnx__ModelProto *model;
    const onnx_import_options *options;
    onnx_limits limits;
    kiln_builder *builder;
    value_entry *entries;
    uint32_t entry_count, entry_capacity;
    name_table by_onnx_name;
    name_table kiln_names;  /* input and weight names given out */
    char **owned_names;     /* storage of kiln_names' keys */
    uint32_t owned_count;
    char **report;
    uint32_t report_count, report_capacity;
    bool *dim_declared;     /* parallel to options->dims */
    int64_t opset;          /* the model's default-domain opset */
    onnx_import *result;
};

/* ----------------------------------------------------------- name tables */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool table_init(name_table *t, uint64_t expected)
{
    uint32_t capacity = 16;
    while (capacity < expected * 2 && capacity < (UINT32_C(1) << 30))
        capacity *= 2;
    t->keys = calloc(capacity, sizeof *t->keys);
    t->indices = calloc(capacity, sizeof *t->indices);
    t->capacity = capacity;
    t->count = 0;
    return t->keys && t->indices;
}

static void table_release(name_table *t)
{
    free(t->keys);
    free(t->indices);
}

static bool table_grow(name_table *t)
{
    name_table bigger;
    if (!table_init(&bigger, t->capacity))
        return table_release(&bigger), false;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (!t->keys[i])
            continue;
        uint32_t at = (uint32_t)hash_name(t->keys[i]) & (bigger.capacity - 1);
        while (bigger.keys[at])
            at = (at + 1) & (bigger.capacity - 1);
        bigger.keys[at] = t->keys[i];
        bigger.indices[at] = t->indices[i];
        bigger.count++;
    }
    table_release(t);
    *t = bigger;
    return true;
}

static bool table_find(const name_table *t, const char *key, uint32_t *index)
{
    uint32_t at = (uint32_t)hash_name(key) & (t->capacity - 1);
    while (t->keys[at]) {
        if (strcmp(t->keys[at], key) == 0) {
            if (index)
                *index = t->indices[at];
            return true;
        }
        at = (at + 1) & (t->capacity - 1);
    }
    return false;
}

/* Insert or replace. */
static bool table_put(name_table *t, const char *key, uint32_t index)
{
    if ((uint64_t)(t->count + 1) * 2 > t->capacity && !table_grow(t))
        return false;
    uint32_t at = (uint32_t)hash_name(key) & (t->capacity - 1);
    while (t->keys[at] && strcmp(t->keys[at], key) != 0)
        at = (at + 1) & (t->capacity - 1);
    if (!t->keys[at])
        t->count++;
    t->keys[at] = key;
    t->indices[at] = index;
    return true;
}

/* ------------------------------------------------------------- reporting */

static kiln_status no_memory(kiln_error *err)
{
    return onnx_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory");
}

static kiln_status report_line(onnx_importer *im, kiln_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static kiln_status report_line(onnx_importer *im, kiln_error *err, const char *fmt, ...)
{
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (im->report_count == im->report_capacity) {
        uint32_t capacity = im->report_capacity ? im->report_capacity * 2 : 8;
        char **grown = realloc(im->report, capacity * sizeof *grown);
        if (!grown)
            return no_memory(err);
        im->report = grown;
        im->report_capacity = capacity;
    }
    if (!(im->report[im->report_count] = strdup(line)))
        return no_memory(err);
    im->report_count++;
    return KILN_OK;
}

/* ----------------------------------------------------------- kiln names */

/*
 * `name` made a kiln identifier ([A-Za-z_][A-Za-z0-9_.-]*) in `out`
 * (`size` >= 2): other characters become '_', and a name that does not
 * start with a letter or '_' gets a '_' in front. Identifiers are kept.
 */
static void make_identifier(const char *name, char *out, size_t size)
{
    size_t n = 0;
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
        out[n++] = '_';
    for (const char *c = name; *c && n + 1 < size; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                  *c == '.' || *c == '-';
        out[n++] = ok ? *c : '_';
    }
    out[n] = '\0';
}

/*
 * A kiln name for ONNX name `onnx_name` (make_identifier); a clash with a name
 * already given out gets a numeric suffix.
 */
static kiln_status unique_kiln_name(onnx_importer *im, name_table *used, const char *onnx_name, const char **out,
                                    kiln_error *err)
{
    size_t n = strlen(onnx_name) + 2;
    char *base = malloc(n);
    if (!base)
        return no_memory(err);
    make_identifier(onnx_name, base, n);
    n = strlen(base);
    char *name = malloc(n + 24);
    if (!name) {
        free(base);
        return no_memory(err);
    }
    strcpy(name, base);
    for (uint32_t suffix = 2; table_find(used, name, NULL); suffix++)
        snprintf(name, n + 24, "%s_%u", base, suffix);
    free(base);
    char **grown = realloc(im->owned_names, (im->owned_count + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        return no_memory(err);
    }
    im->owned_names = grown;
    im->owned_names[im->owned_count++] = name;
    if (!table_put(used, name, 0))
        return no_memory(err);
    *out = name;
    return KILN_OK;
}

/* ------------------------------------------------------------- entries */

static kiln_status new_entry(onnx_importer *im, const char *onnx_name, enum entry_kind kind, value_entry **out,
                             kiln_error *err)
{
    if (im->entry_count == im->entry_capacity) {
        uint32_t capacity = im->entry_capacity ? im->entry_capacity * 2 : 64;
        value_entry *grown = realloc(im->entries, capacity * sizeof *grown);
        if (!grown)
            return no_memory(err);
        im->entries = grown;
        im->entry_capacity = capacity;
    }
    value_entry *e = &im->entries[im->entry_count];
    *e = (value_entry){.onnx_name = onnx_name, .kind = kind};
    if (!table_put(&im->by_onnx_name, onnx_name, im->entry_count))
        return no_memory(err);
    im->entry_count++;
    *out = e;
    return KILN_OK;
}

static value_entry *find_entry(onnx_importer *im, const char *onnx_name)
{
    uint32_t index;
    return table_find(&im->by_onnx_name, onnx_name, &index) ? &im->entries[index] : NULL;
}

static const kiln_tensor *known_input(const onnx_importer *im, const char *onnx_name)
{
    for (uint32_t i = 0; i < im->options->known_input_count; i++)
        if (strcmp(im->options->known_input_names[i], onnx_name) == 0)
            return im->options->known_inputs[i];
    return NULL;
}

static const onnx_dim_bound *declared_dim(onnx_importer *im, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; i < im->options->dim_count; i++)
        if (strcmp(im->options->dims[i].name, name) == 0) {
            *index = i;
            return &im->options->dims[i];
        }
    return NULL;
}

/* Append to a growing text, dropping what does not fit (the message says how many there are). */
static void append_text(char *text, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append_text(char *text, size_t size, const char *fmt, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= size)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(text + used, size - used, fmt, args);
    va_end(args);
}

/*
 * The kiln shape text of graph input `info` ("[batch, 3]"), or the reasons
 * it cannot have one appended to `undeclared` (one per axis).
 */
static kiln_status input_shape_text(onnx_importer *im, const Onnx__ValueInfoProto *info, const kiln_tensor *known,
                                    char *shape, size_t size, char *undeclared, size_t undeclared_size,
                                    uint32_t *undeclared_count, kiln_error *err)
{
    const Onnx__TypeProto__Tensor *tensor_type = info->type->tensor_type;
    const Onnx__TensorShapeProto *proto_shape = tensor_type->shape;
    snprintf(shape, size, "[");
    if (!proto_shape) {
        if (!known) {
            append_text(undeclared, undeclared_size, "%sinput '%s' has no shape", *undeclared_count ? "; " : "",
                        info->name);
            (*undeclared_count)++;
            return KILN_OK;
        }
        for (uint32_t a = 0; a < kiln_tensor_rank(known); a++)
            append_text(shape, size, "%s%lld", a ? ", " : "", (long long)kiln_tensor_shape(known)[a]);
        append_text(shape, size, "]");
        return KILN_OK;
    }
    if (proto_shape->n_dim > KILN_MAX_RANK)
        return onnx_fail(err, KILN_ERR_LIMIT, "input '%s' has rank %zu, over kiln's maximum of %d", info->name,
                         proto_shape->n_dim, KILN_MAX_RANK);
    if (known && kiln_tensor_rank(known) != proto_shape->n_dim)
        return onnx_fail(err, KILN_ERR_RANK_MISMATCH, "input '%s' has rank %zu, its given value rank %u", info->name,
                         proto_shape->n_dim, kiln_tensor_rank(known));
    for (size_t a = 0; a < proto_shape->n_dim; a++) {
        const Onnx__TensorShapeProto__Dimension *dim = proto_shape->dim[a];
        const char *separator = a ? ", " : "";
        uint32_t dim_index;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return onnx_fail(err, KILN_ERR_MALFORMED, "input '%s' axis %zu has the negative size %lld",
                                 info->name, a, (long long)dim->dim_value);
            if (known && kiln_tensor_shape(known)[a] != dim->dim_value)
                return onnx_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %zu is %lld, its given value has %lld",
                                 info->name, a, (long long)dim->dim_value, (long long)kiln_tensor_shape(known)[a]);
            append_text(shape, size, "%s%lld", separator, (long long)dim->dim_value);
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param[0] &&
                   declared_dim(im, dim->dim_param, &dim_index)) {
            const onnx_dim_bound *bound = &im->options->dims[dim_index];
            char identifier[256];
            make_identifier(bound->name, identifier, sizeof identifier);
            if (!im->dim_declared[dim_index]) {
                kiln_status status = kiln_builder_add_dim(im->builder, identifier, bound->min, bound->max, err);
                if (status != KILN_OK)
                    return status;
                im->dim_declared[dim_index] = true;
            }
            append_text(shape, size, "%s%s", separator, identifier);
        } else if (known) {
            append_text(shape, size, "%s%lld", separator, (long long)kiln_tensor_shape(known)[a]);
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param[0]) {
            append_text(undeclared, undeclared_size, "%s%s (input '%s' axis %zu)", *undeclared_count ? "; " : "",
                        dim->dim_param, info->name, a);
            (*undeclared_count)++;
        } else {
            append_text(undeclared, undeclared_size, "%sinput '%s' axis %zu has neither a size nor a name",
                        *undeclared_count ? "; " : "", info->name, a);
            (*undeclared_count)++;
        }
    }
    append_text(shape, size, "]");
    if (strlen(shape) + 1 >= size)
        return onnx_fail(err, KILN_ERR_LIMIT, "input '%s': its shape text is too long", info->name);
    return KILN_OK;
}

static kiln_status input_dtype(const Onnx__ValueInfoProto *info, kiln_dtype *out, kiln_error *err)
{
    kiln_error dtype_err;
    if (onnx_dtype_to_kiln(info->type->tensor_type->elem_type, out, &dtype_err) != KILN_OK)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "input '%s': %s", info->name, dtype_err.message);
    return KILN_OK;
}

/* Declare the kiln input for graph-input entry `e`. */
static kiln_status create_input(onnx_importer *im, value_entry *e, kiln_error *err)
{
    char shape[1024], undeclared[1024] = "";
    uint32_t undeclared_count = 0;
    kiln_dtype dtype;
    kiln_status status = input_dtype(e->info, &dtype, err);
    if (status != KILN_OK)
        return status;
    if (e->constant && kiln_tensor_dtype(e->constant) != dtype)
        return onnx_fail(err, KILN_ERR_DTYPE_MISMATCH, "input '%s' is %s, its given value %s", e->onnx_name,
                         kiln_dtype_name(dtype), kiln_dtype_name(kiln_tensor_dtype(e->constant)));
    status = input_shape_text(im, e->info, e->constant, shape, sizeof shape, undeclared, sizeof undeclared,
                              &undeclared_count, err);
    if (status != KILN_OK)
        return status;
    if (undeclared_count)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "input '%s': %s", e->onnx_name, undeclared);
    const char *kiln_name;
    status = unique_kiln_name(im, &im->kiln_names, e->onnx_name, &kiln_name, err);
    if (status != KILN_OK)
        return status;
    status = kiln_builder_add_input(im->builder, kiln_name, dtype, shape, &e->value, err);
    if (status != KILN_OK)
        return status;
    e->has_value = true;
    onnx_import *r = im->result;
    char **onnx_names = realloc(r->input_onnx_names, (r->input_count + 1) * sizeof *onnx_names);
    if (onnx_names)
        r->input_onnx_names = onnx_names;
    char **kiln_names = realloc(r->input_kiln_names, (r->input_count + 1) * sizeof *kiln_names);
    if (kiln_names)
        r->input_kiln_names = kiln_names;
    if (!onnx_names || !kiln_names)
        return no_memory(err);
    r->input_onnx_names[r->input_count] = strdup(e->onnx_name);
    r->input_kiln_names[r->input_count] = strdup(kiln_name);
    r->input_count++;
    if (!r->input_onnx_names[r->input_count - 1] || !r->input_kiln_names[r->input_count - 1])
        return no_memory(err);
    return KILN_OK;
}

/* Make a constant entry usable as a value: a weight named after it. */
static kiln_status create_weight(onnx_importer *im, value_entry *e, kiln_error *err)
{
    const kiln_tensor *t = e->constant;
    const char *kiln_name;
    kiln_status status = unique_kiln_name(im, &im->kiln_names, e->onnx_name[0] ? e->onnx_name : "constant",
                                          &kiln_name, err);
    if (status != KILN_OK)
        return status;
    kiln_weight_kind kind = e->from_initializer ? KILN_WEIGHT_PARAMETER : KILN_WEIGHT_CONSTANT;
    status = kiln_builder_add_weight(im->builder, kiln_name, kind, kiln_tensor_dtype(t), kiln_tensor_rank(t),
                                     kiln_tensor_shape(t), kiln_tensor_const_data(t), &e->value, err);
    /* A name the builder gave a scalar constant already: try the next suffix. */
    for (uint32_t attempt = 0; status == KILN_ERR_INVALID_ARGUMENT && strstr(err->message, "already") && attempt < 8;
         attempt++) {
        status = unique_kiln_name(im, &im->kiln_names, kiln_name, &kiln_name, err);
        if (status == KILN_OK)
            status = kiln_builder_add_weight(im->builder, kiln_name, kind, kiln_tensor_dtype(t), kiln_tensor_rank(t),
                                             kiln_tensor_shape(t), kiln_tensor_const_data(t), &e->value, err);
    }
    if (status == KILN_OK)
        e->has_value = true;
    return status;
}

static kiln_status translate_symbolic(onnx_importer *im, value_entry *e, kiln_error *err);

static kiln_status entry_value(onnx_importer *im, value_entry *e, kiln_value *out, kiln_error *err)
{
    if (!e->has_value) {
        kiln_status status = e->kind == ENTRY_INPUT      ? create_input(im, e, err)
                             : e->kind == ENTRY_SYMBOLIC ? translate_symbolic(im, e, err)
                                                         : create_weight(im, e, err);
        if (status != KILN_OK)
            return status;
    }
    *out = e->value;
    return KILN_OK;
}

/* ----------------------------------------------- the node, for mappings */

static const char *node_input_name(const onnx_node *node, uint32_t index)
{
    return index < node->proto->n_input ? node->proto->input[index] : "";
}

bool onnx_node_has_input(const onnx_node *node, uint32_t index)
{
    return node_input_name(node, index)[0] != '\0';
}

kiln_status onnx_node_unsupported(onnx_node *node, const char *fmt, ...)
{
    char reason[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    kiln_status status = report_line(node->importer, node->err, "%s: %s", node->label, reason);
    if (status != KILN_OK)
        return status;
    return onnx_fail(node->err, KILN_ERR_UNSUPPORTED_OP, "%s: %s", node->label, reason);
}

kiln_status onnx_node_input(onnx_node *node, uint32_t index, kiln_value *out)
{
    const char *name = node_input_name(node, index);
    if (!name[0])
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: input %u is missing", node->label, index);
    value_entry *e = find_entry(node->importer, name);
    if (!e)
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: input %u ('%s') is not produced by an earlier node",
                         node->label, index, name);
    return entry_value(node->importer, e, out, node->err);
}

bool onnx_node_is_constant(const onnx_node *node, uint32_t index)
{
    const char *name = node_input_name(node, index);
    value_entry *e = name[0] ? find_entry(node->importer, name) : NULL;
    return e && e->constant;
}

kiln_status onnx_node_constant(onnx_node *node, uint32_t index, const kiln_tensor **out)
{
    const char *name = node_input_name(node, index);
    value_entry *e = name[0] ? find_entry(node->importer, name) : NULL;
    if (e && e->kind == ENTRY_SYMBOLIC) {
        char text[512] = "";
        for (uint32_t i = 0; i < e->symbolic_count; i++)
            append_text(text, sizeof text, "%s%s", i ? ", " : "", e->symbolic[i]);
        return onnx_node_unsupported(node, "input %u ('%s') is [%s], computed from symbolic sizes: %s does not "
                                           "take symbolic sizes there",
                                     index, name, text, node->proto->op_type);
    }
    if (!e || !e->constant)
        return onnx_node_unsupported(node, "input %u ('%s') must be a constant (an initializer or a Constant "
                                           "node): it is computed at run time",
                                     index, name);
    *out = e->constant;
    return KILN_OK;
}

kiln_status onnx_node_constant_ints(onnx_node *node, uint32_t index, int64_t *values, uint32_t max,
                                    uint32_t *count)
{
    const kiln_tensor *t;
    kiln_status status = onnx_node_constant(node, index, &t);
    if (status != KILN_OK)
        return status;
    uint64_t n = kiln_tensor_element_count(t);
    kiln_dtype dtype = kiln_tensor_dtype(t);
    if (dtype != KILN_I64 && dtype != KILN_I32)
        return onnx_node_unsupported(node, "input %u ('%s') must hold i32 or i64 integers, not %s", index,
                                     node_input_name(node, index), kiln_dtype_name(dtype));
    if (n > max)
        return onnx_node_unsupported(node, "input %u ('%s') holds %llu values, more than the %u kiln takes", index,
                                     node_input_name(node, index), (unsigned long long)n, max);
    for (uint64_t i = 0; i < n; i++)
        values[i] = dtype == KILN_I64 ? ((const int64_t *)kiln_tensor_const_data(t))[i]
                                      : ((const int32_t *)kiln_tensor_const_data(t))[i];
    *count = (uint32_t)n;
    return KILN_OK;
}

const Onnx__AttributeProto *onnx_node_attribute(const onnx_node *node, const char *name)
{
    for (size_t i = 0; i < node->proto->n_attribute; i++)
        if (node->proto->attribute[i]->name && strcmp(node->proto->attribute[i]->name, name) == 0)
            return node->proto->attribute[i];
    return NULL;
}

int64_t onnx_node_int(const onnx_node *node, const char *name, int64_t fallback)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    return a ? a->i : fallback;
}

double onnx_node_float(const onnx_node *node, const char *name, double fallback)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    return a ? (double)a->f : fallback;
}

const char *onnx_node_string(const onnx_node *node, const char *name, const char *fallback, char *buffer,
                             size_t size)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    if (!a || !a->has_s)
        return fallback;
    size_t n = a->s.len < size - 1 ? a->s.len : size - 1;
    if (n)
        memcpy(buffer, a->s.data, n);
    buffer[n] = '\0';
    return buffer;
}

kiln_status onnx_node_type(onnx_node *node, kiln_value value, kiln_dtype *dtype, uint32_t *rank,
                           int64_t sizes[KILN_MAX_RANK])
{
    return kiln_builder_value_type(node->importer->builder, value, dtype, rank, sizes, node->err);
}

bool onnx_node_is_symbolic(const onnx_node *node, uint32_t index)
{
    const char *name = node_input_name(node, index);
    value_entry *e = name[0] ? find_entry(node->importer, name) : NULL;
    return e && e->kind == ENTRY_SYMBOLIC;
}

kiln_status onnx_node_symbolic_sizes(onnx_node *node, uint32_t index, const char **texts, uint32_t max,
                                     uint32_t *count)
{
    const char *name = node_input_name(node, index);
    value_entry *e = name[0] ? find_entry(node->importer, name) : NULL;
    if (!e || e->kind != ENTRY_SYMBOLIC)
        return onnx_fail(node->err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is not symbolic", node->label, index);
    if (e->symbolic_rank > 1 || e->symbolic_count > max)
        return onnx_node_unsupported(node, "input %u ('%s') must hold at most %u sizes in one axis", index, name,
                                     max);
    for (uint32_t i = 0; i < e->symbolic_count; i++)
        texts[i] = e->symbolic[i];
    *count = e->symbolic_count;
    return KILN_OK;
}

kiln_status onnx_node_axis_text(onnx_node *node, kiln_value value, uint32_t axis, char *buffer, size_t size)
{
    return kiln_builder_value_axis_text(node->importer->builder, value, axis, buffer, size, NULL, node->err);
}

kiln_status onnx_node_canonical_size(onnx_node *node, const char *expression, char *buffer, size_t size)
{
    size_t length;
    kiln_status status =
        kiln_builder_canonical_size(node->importer->builder, expression, buffer, size, &length, node->err);
    if (status == KILN_OK && length >= size)
        status = onnx_fail(node->err, KILN_ERR_LIMIT, "%s: the size %s is too long", node->label, expression);
    return status;
}

bool onnx_node_find_sizes(onnx_node *node, const char *a, const char *b, kiln_value *value, uint32_t *rank,
                          uint32_t *axis_a, uint32_t *axis_b)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const value_entry *e = &im->entries[i];
        kiln_dtype dtype;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, rank, NULL, NULL) != KILN_OK)
            continue;
        bool found_a = false, found_b = false;
        for (uint32_t x = 0; x < *rank; x++) {
            if (kiln_builder_value_axis_text(im->builder, e->value, x, text, sizeof text, NULL, NULL) != KILN_OK)
                break;
            if (!found_a && strcmp(text, a) == 0) {
                found_a = true;
                *axis_a = x;
            } else if (!found_b && strcmp(text, b) == 0) {
                found_b = true;
                *axis_b = x;
            }
        }
        if (found_a && found_b) {
            *value = e->value;
            return true;
        }
    }
    return false;
}

bool onnx_node_find_size(onnx_node *node, const char *a, kiln_value *value, uint32_t *rank, uint32_t *axis)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const value_entry *e = &im->entries[i];
        kiln_dtype dtype;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, rank, NULL, NULL) != KILN_OK)
            continue;
        for (uint32_t x = 0; x < *rank; x++) {
            if (kiln_builder_value_axis_text(im->builder, e->value, x, text, sizeof text, NULL, NULL) != KILN_OK)
                break;
            if (strcmp(text, a) == 0) {
                *axis = x;
                *value = e->value;
                return true;
            }
        }
    }
    return false;
}

bool onnx_node_size_max(onnx_node *node, const char *text, int64_t *max)
{
    onnx_importer *im = node->importer;
    char *end;
    long long constant = strtoll(text, &end, 10);
    if (end != text && !*end) {
        *max = constant;
        return true;
    }
    for (uint32_t d = 0; d < im->options->dim_count; d++) {
        char identifier[256];
        make_identifier(im->options->dims[d].name, identifier, sizeof identifier);
        if (im->dim_declared[d] && strcmp(identifier, text) == 0) {
            *max = im->options->dims[d].max;
            return true;
        }
    }
    return false;
}

bool onnx_node_find_shape(onnx_node *node, const char *const *texts, uint32_t count, kiln_value *value)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const value_entry *e = &im->entries[i];
        kiln_dtype dtype;
        uint32_t rank, a = 0;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, &rank, NULL, NULL) != KILN_OK ||
            rank != count)
            continue;
        while (a < rank && kiln_builder_value_axis_text(im->builder, e->value, a, text, sizeof text, NULL, NULL) ==
                               KILN_OK &&
               strcmp(text, texts[a]) == 0)
            a++;
        if (a == rank) {
            *value = e->value;
            return true;
        }
    }
    return false;
}

kiln_status onnx_node_emit(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                           uint32_t attribute_count, const kiln_attribute *attributes, kiln_value *out)
{
    kiln_error kiln_err;
    kiln_status status = kiln_builder_add_op_with_attributes(node->importer->builder, op, input_count, inputs,
                                                             attribute_count, attributes, out, &kiln_err);
    if (status == KILN_ERR_OUT_OF_MEMORY)
        return onnx_fail(node->err, status, "%s", kiln_err.message);
    if (status != KILN_OK)
        return onnx_node_unsupported(node, "kiln refuses %s: %s", op, kiln_err.message);
    return KILN_OK;
}

kiln_status onnx_node_scalar(onnx_node *node, kiln_dtype dtype, double value, kiln_value *out)
{
    kiln_error kiln_err;
    kiln_status status = kiln_builder_add_scalar(node->importer->builder, dtype, value, out, &kiln_err);
    if (status != KILN_OK)
        return onnx_node_unsupported(node, "constant %g as %s: %s", value, kiln_dtype_name(dtype), kiln_err.message);
    return KILN_OK;
}

static kiln_status output_entry(onnx_node *node, uint32_t index, value_entry **out)
{
    if (index >= node->proto->n_output || !node->proto->output[index][0])
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: output %u is missing", node->label, index);
    const char *name = node->proto->output[index];
    if (find_entry(node->importer, name))
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: output '%s' is already defined", node->label, name);
    return new_entry(node->importer, name, ENTRY_VALUE, out, node->err);
}

kiln_status onnx_node_set_output(onnx_node *node, uint32_t index, kiln_value value)
{
    value_entry *e = NULL;
    kiln_status status = KILN_OK;
    /* A symbolic value translated because something uses it as data (translate_symbolic). */
    if (index < node->proto->n_output && node->proto->output[index][0])
        e = find_entry(node->importer, node->proto->output[index]);
    if (!e || e->kind != ENTRY_SYMBOLIC || e->has_value)
        status = output_entry(node, index, &e);
    if (status != KILN_OK)
        return status;
    e->has_value = true;
    e->value = value;
    return KILN_OK;
}

kiln_status onnx_node_set_constant_output(onnx_node *node, uint32_t index, kiln_tensor *tensor)
{
    value_entry *e;
    kiln_status status = output_entry(node, index, &e);
    if (status != KILN_OK) {
        kiln_tensor_free(tensor);
        return status;
    }
    e->kind = ENTRY_CONSTANT;
    e->constant = tensor;
    e->owns_constant = true;
    return KILN_OK;
}

/* ------------------------------------------------------------ the import */

static kiln_status record_metadata(onnx_importer *im, kiln_error *err)
{
    const Onnx__ModelProto *m = im->model;
    char text[1024];
    kiln_status status = kiln_builder_set_metadata(im->builder, "source_framework", "onnx", err);
    if (status == KILN_OK && m->producer_name && m->producer_name[0])
        status = kiln_builder_set_metadata(im->builder, "onnx.producer_name", m->producer_name, err);
    if (status == KILN_OK && m->producer_version && m->producer_version[0])
        status = kiln_builder_set_metadata(im->builder, "onnx.producer_version", m->producer_version, err);
    if (status == KILN_OK) {
        snprintf(text, sizeof text, "%lld", (long long)m->ir_version);
        status = kiln_builder_set_metadata(im->builder, "onnx.ir_version", text, err);
    }
    if (status == KILN_OK) {
        text[0] = '\0';
        for (size_t i = 0; i < m->n_opset_import; i++) {
            const char *domain = m->opset_import[i]->domain;
            append_text(text, sizeof text, "%s%s:%lld", i ? "," : "", domain && domain[0] ? domain : "ai.onnx",
                        (long long)m->opset_import[i]->version);
        }
        status = kiln_builder_set_metadata(im->builder, "onnx.opset_import", text, err);
    }
    if (status == KILN_OK && m->has_model_version) {
        snprintf(text, sizeof text, "%lld", (long long)m->model_version);
        status = kiln_builder_set_metadata(im->builder, "onnx.model_version", text, err);
    }
    if (status == KILN_OK && m->graph->name && m->graph->name[0])
        status = kiln_builder_set_metadata(im->builder, "onnx.graph_name", m->graph->name, err);
    for (size_t i = 0; status == KILN_OK && i < m->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *p = m->metadata_props[i];
        if (!p->key || !p->key[0])
            continue;
        snprintf(text, sizeof text, "onnx.meta.%s", p->key);
        status = kiln_builder_set_metadata(im->builder, text, p->value ? p->value : "", err);
    }
    return status;
}

static kiln_status add_initializers(onnx_importer *im, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t->name || !t->name[0])
            return onnx_fail(err, KILN_ERR_MALFORMED, "initializer %zu has no name", i);
        if (find_entry(im, t->name))
            return onnx_fail(err, KILN_ERR_MALFORMED, "initializer '%s' is defined twice", t->name);
        value_entry *e;
        kiln_status status = new_entry(im, t->name, ENTRY_CONSTANT, &e, err);
        if (status != KILN_OK)
            return status;
        e->from_initializer = true;
        kiln_error tensor_err;
        status = onnx_tensor_to_kiln(t, im->options->external_data_dir, &im->limits, &e->constant, &tensor_err);
        if (status == KILN_ERR_UNSUPPORTED_DTYPE) {
            e->kind = ENTRY_BROKEN;
            status = report_line(im, err, "initializer '%s': %s", t->name, tensor_err.message);
        } else if (status != KILN_OK) {
            if (err)
                *err = tensor_err;
            return status;
        }
        if (status != KILN_OK)
            return status;
        e->owns_constant = true;
    }
    return KILN_OK;
}

static kiln_status add_graph_inputs(onnx_importer *im, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    char undeclared[2048] = "";
    uint32_t undeclared_count = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *info = g->input[i];
        if (!info->name || !info->name[0])
            return onnx_fail(err, KILN_ERR_MALFORMED, "graph input %zu has no name", i);
        value_entry *existing = find_entry(im, info->name);
        if (existing && existing->from_initializer)
            continue; /* IR < 4 lists initializers as inputs too: the stored value is the program's */
        if (existing)
            return onnx_fail(err, KILN_ERR_MALFORMED, "graph input '%s' is declared twice", info->name);
        value_entry *e;
        kiln_status status = new_entry(im, info->name, ENTRY_INPUT, &e, err);
        if (status != KILN_OK)
            return status;
        e->info = info;
        if (!info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            e->kind = ENTRY_BROKEN;
            const char *what = !info->type ? "has no type"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "is a sequence"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE      ? "is a map"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "is an optional"
                                                                                                 : "is not a tensor";
            status = report_line(im, err, "graph input '%s' %s: only tensors are supported", info->name, what);
            if (status != KILN_OK)
                return status;
            continue;
        }
        kiln_dtype dtype;
        kiln_error dtype_err;
        if (input_dtype(info, &dtype, &dtype_err) != KILN_OK) {
            e->kind = ENTRY_BROKEN;
            status = report_line(im, err, "%s", dtype_err.message);
            if (status != KILN_OK)
                return status;
            continue;
        }
        const kiln_tensor *known = known_input(im, info->name);
        char shape[1024];
        /* A known value with --dim given: the sizes --dim names are declared here, its others are the value's. */
        if (!known || im->options->dim_count)
            status = input_shape_text(im, info, known, shape, sizeof shape, undeclared, sizeof undeclared,
                                      &undeclared_count, err);
        if (status != KILN_OK)
            return status;
        /* A known value is declared when first used as a value, and folded where a constant is needed. */
        if (known)
            e->constant = (kiln_tensor *)known;
    }
    if (undeclared_count)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%u input size%s need%s a declaration (--dim NAME=MIN..MAX): %s", undeclared_count,
                         undeclared_count == 1 ? "" : "s", undeclared_count == 1 ? "s" : "", undeclared);
    for (uint32_t d = 0; d < im->options->dim_count; d++)
        if (!im->dim_declared[d])
            append_text(undeclared, sizeof undeclared, "%s%s", undeclared[0] ? ", " : "", im->options->dims[d].name);
    if (undeclared[0])
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "--dim names no input size of the model: %s", undeclared);
    /* Every size is known: declare the inputs in the model's order. */
    for (size_t i = 0; i < g->n_input; i++) {
        value_entry *e = find_entry(im, g->input[i]->name);
        if (e->kind == ENTRY_INPUT && !e->constant) {
            kiln_status status = create_input(im, e, err);
            if (status != KILN_OK)
                return status;
        }
    }
    return KILN_OK;
}

static kiln_status mark_outputs_broken(onnx_importer *im, const Onnx__NodeProto *node, kiln_error *err)
{
    for (size_t o = 0; o < node->n_output; o++) {
        if (!node->output[o][0])
            continue;
        value_entry *e = find_entry(im, node->output[o]);
        if (e) {
            if (e->kind == ENTRY_VALUE && !e->has_value)
                e->kind = ENTRY_BROKEN;
            continue;
        }
        kiln_status status = new_entry(im, node->output[o], ENTRY_BROKEN, &e, err);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/* Largest constant computed at import, in elements (each input and each output). */
#define FOLD_MAX_ELEMENTS 4096

/* Release what an importer holds, except what onnx_import_model hands to its result. */
static void importer_release(onnx_importer *im)
{
    for (uint32_t i = 0; i < im->entry_count; i++) {
        if (im->entries[i].owns_constant)
            kiln_tensor_free(im->entries[i].constant);
        free(im->entries[i].symbolic);
    }
    free(im->entries);
    for (uint32_t i = 0; i < im->owned_count; i++)
        free(im->owned_names[i]);
    free(im->owned_names);
    table_release(&im->by_onnx_name);
    table_release(&im->kiln_names);
    free(im->dim_declared);
    kiln_builder_free(im->builder);
    im->builder = NULL;
}

static bool constant_is_small(const kiln_tensor *t)
{
    return t && kiln_tensor_element_count(t) <= FOLD_MAX_ELEMENTS;
}

/* A copy of output `index` of a finished run. */
static kiln_tensor *copy_tensor(const kiln_tensor *from)
{
    kiln_tensor *to;
    if (kiln_tensor_new(kiln_tensor_dtype(from), kiln_tensor_rank(from), kiln_tensor_shape(from), &to, NULL) !=
        KILN_OK)
        return NULL;
    if (kiln_tensor_byte_size(from))
        memcpy(kiln_tensor_data(to), kiln_tensor_const_data(from), kiln_tensor_byte_size(from));
    return to;
}

/*
 * Evaluate with kiln itself a node whose every input is a stored constant
 * (an initializer, a Constant node's value or an earlier folded result;
 * never a graph input, even one whose value the caller knows): the node is
 * translated into a scratch program whose weights are its inputs, which is
 * sealed, loaded and run, and its outputs become constants. So the shape
 * arithmetic of exported models (Shape, Gather, Concat, Unsqueeze, ...)
 * feeding a Reshape or an Expand folds into that op's attribute.
 * @return true if the node was folded; false to translate it as usual.
 */
static bool fold_node(onnx_importer *im, const Onnx__NodeProto *proto, const onnx_op_mapping *mapping, int64_t opset,
                      const char *label)
{
    if (proto->n_input == 0 || proto->n_output == 0 || proto->n_output > 16 || strcmp(proto->op_type, "Constant") == 0)
        return false;
    for (size_t i = 0; i < proto->n_input; i++) {
        value_entry *e = proto->input[i][0] ? find_entry(im, proto->input[i]) : NULL;
        if (proto->input[i][0] && (!e || e->kind != ENTRY_CONSTANT || !constant_is_small(e->constant)))
            return false;
    }
    onnx_import_options no_options = {0};
    onnx_import scratch_result = {0};
    onnx_importer sub = {.model = im->model, .options = &no_options, .limits = im->limits, .result = &scratch_result};
    kiln_error sub_err;
    kiln_tensor *outputs[16] = {0};
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    void *bytes = NULL;
    size_t size = 0;
    bool folded = false;
    if (!table_init(&sub.by_onnx_name, proto->n_input + proto->n_output) || !table_init(&sub.kiln_names, 8) ||
        !(sub.dim_declared = calloc(1, sizeof *sub.dim_declared)) ||
        kiln_builder_new("fold", &sub.builder, NULL) != KILN_OK)
        goto done;
    for (size_t i = 0; i < proto->n_input; i++) {
        value_entry *e;
        if (!proto->input[i][0] || find_entry(&sub, proto->input[i]))
            continue;
        if (new_entry(&sub, proto->input[i], ENTRY_CONSTANT, &e, NULL) != KILN_OK)
            goto done;
        e->constant = find_entry(im, proto->input[i])->constant; /* borrowed */
    }
    onnx_node node = {&sub, proto, opset, label, &sub_err};
    if (mapping->map(&node, mapping->kiln_op) != KILN_OK)
        goto done;
    uint32_t run_outputs = 0;
    for (size_t o = 0; o < proto->n_output; o++) {
        value_entry *e = proto->output[o][0] ? find_entry(&sub, proto->output[o]) : NULL;
        if (!e || e->constant)
            continue;
        kiln_dtype dtype;
        uint32_t rank;
        int64_t sizes[KILN_MAX_RANK];
        uint64_t count = 1;
        if (!e->has_value || kiln_builder_value_type(sub.builder, e->value, &dtype, &rank, sizes, NULL) != KILN_OK)
            goto done;
        for (uint32_t a = 0; a < rank; a++) {
            if (sizes[a] < 0 || (sizes[a] > 0 && count > FOLD_MAX_ELEMENTS / (uint64_t)sizes[a]))
                goto done;
            count *= (uint64_t)sizes[a];
        }
        char name[32];
        snprintf(name, sizeof name, "o%zu", o);
        if (count > FOLD_MAX_ELEMENTS || kiln_builder_add_output(sub.builder, name, e->value, NULL) != KILN_OK)
            goto done;
        run_outputs++;
    }
    if (run_outputs) {
        if (kiln_builder_encode(sub.builder, &bytes, &size, NULL) != KILN_OK ||
            kiln_program_load_memory(bytes, size, NULL, &program, NULL) != KILN_OK ||
            kiln_session_new(program, NULL, &session, NULL) != KILN_OK || kiln_session_run(session, NULL) != KILN_OK)
            goto done;
    }
    uint32_t next = 0;
    for (size_t o = 0; o < proto->n_output; o++) {
        value_entry *e = proto->output[o][0] ? find_entry(&sub, proto->output[o]) : NULL;
        if (!e)
            continue;
        outputs[o] = copy_tensor(e->constant ? e->constant : kiln_session_output(session, next++));
        if (!outputs[o])
            goto done;
    }
    onnx_node main_node = {im, proto, opset, label, &sub_err};
    folded = true;
    for (size_t o = 0; o < proto->n_output; o++) {
        if (!outputs[o])
            continue;
        kiln_tensor *t = outputs[o];
        outputs[o] = NULL;
        /* On failure (an output defined twice) the node is translated as usual and that reports it. */
        if (onnx_node_set_constant_output(&main_node, (uint32_t)o, t) != KILN_OK)
            folded = false;
    }
done:
    for (size_t o = 0; o < 16; o++)
        kiln_tensor_free(outputs[o]);
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
    for (uint32_t i = 0; i < sub.report_count; i++)
        free(sub.report[i]);
    free(sub.report);
    importer_release(&sub);
    return folded;
}

/* ------------------------------------------------------ symbolic folding */

/* An operand of a symbolic fold: rank 0 or 1, its elements as size texts. */
typedef struct size_operand {
    uint32_t rank, count;
    kiln_dtype dtype;
    bool symbolic; /* some element is not a constant */
    char texts[SYMBOLIC_MAX_ELEMENTS][SIZE_TEXT_MAX];
} size_operand;

/* @return true and the value if `text` is an integer constant ("-1", "32"). */
static bool text_constant(const char *text, int64_t *value)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno)
        return false;
    *value = v;
    return true;
}

/*
 * Input `name` as a size operand: a symbolic entry, or a small i32/i64
 * constant. @return false if it is neither (the node is not folded).
 */
static bool size_operand_of(onnx_importer *im, const char *name, size_operand *out)
{
    value_entry *e = name[0] ? find_entry(im, name) : NULL;
    if (!e)
        return false;
    if (e->kind == ENTRY_SYMBOLIC) {
        out->rank = e->symbolic_rank;
        out->count = e->symbolic_count;
        out->dtype = KILN_I64;
        out->symbolic = true;
        memcpy(out->texts, e->symbolic, e->symbolic_count * sizeof *out->texts);
        return true;
    }
    const kiln_tensor *t = e->constant;
    if (e->kind != ENTRY_CONSTANT || !t || kiln_tensor_rank(t) > 1 ||
        kiln_tensor_element_count(t) > SYMBOLIC_MAX_ELEMENTS ||
        (kiln_tensor_dtype(t) != KILN_I64 && kiln_tensor_dtype(t) != KILN_I32))
        return false;
    out->rank = kiln_tensor_rank(t);
    out->count = (uint32_t)kiln_tensor_element_count(t);
    out->dtype = kiln_tensor_dtype(t);
    out->symbolic = false;
    for (uint32_t i = 0; i < out->count; i++) {
        int64_t v = out->dtype == KILN_I64 ? ((const int64_t *)kiln_tensor_const_data(t))[i]
                                           : ((const int32_t *)kiln_tensor_const_data(t))[i];
        snprintf(out->texts[i], SIZE_TEXT_MAX, "%lld", (long long)v);
    }
    return true;
}

/* The canonical text of `expression` (kiln's own canonical form). @return false if it has none that fits. */
static bool canonical_text(onnx_importer *im, const char *expression, char *out)
{
    size_t length;
    kiln_error ignored;
    return kiln_builder_canonical_size(im->builder, expression, out, SIZE_TEXT_MAX, &length, &ignored) ==
               KILN_OK &&
           length < SIZE_TEXT_MAX;
}

/*
 * One element of Add, Sub, Mul or Div (`op` '+', '-', '*', '/') on size
 * texts. Constants are computed as ONNX does on integers (Div truncates);
 * a symbolic Div needs a positive constant divisor and becomes kiln's
 * floor division, the same on sizes, which are never negative.
 */
static bool size_arithmetic(onnx_importer *im, char op, const char *a, const char *b, char *out)
{
    int64_t x, y, r;
    if (text_constant(a, &x) && text_constant(b, &y)) {
        bool overflow = op == '+' ? __builtin_add_overflow(x, y, &r)
                        : op == '-' ? __builtin_sub_overflow(x, y, &r)
                        : op == '*' ? __builtin_mul_overflow(x, y, &r)
                                    : (y == 0 || (x == INT64_MIN && y == -1));
        if (overflow)
            return false;
        if (op == '/')
            r = x / y;
        snprintf(out, SIZE_TEXT_MAX, "%lld", (long long)r);
        return true;
    }
    if (op == '/' && (!text_constant(b, &y) || y <= 0))
        return false;
    char expression[3 * SIZE_TEXT_MAX];
    snprintf(expression, sizeof expression, "(%s) %c (%s)", a, op, b);
    return canonical_text(im, expression, out);
}

/* Constant integer list from attribute `name` (opset < `input_from`) or constant input `index`. */
static bool fold_ints(onnx_importer *im, const Onnx__NodeProto *proto, const char *name, int64_t input_from,
                      uint32_t index, int64_t *values, uint32_t max, uint32_t *count, bool *present)
{
    *count = 0;
    *present = false;
    if (im->opset < input_from) {
        for (size_t i = 0; i < proto->n_attribute; i++) {
            const Onnx__AttributeProto *a = proto->attribute[i];
            if (!a->name || strcmp(a->name, name) != 0)
                continue;
            if (a->n_ints > max)
                return false;
            memcpy(values, a->ints, a->n_ints * sizeof *values);
            *count = (uint32_t)a->n_ints;
            *present = true;
        }
        return true;
    }
    if (index >= proto->n_input || !proto->input[index][0])
        return true;
    size_operand operand;
    if (!size_operand_of(im, proto->input[index], &operand) || operand.symbolic || operand.count > max)
        return false;
    for (uint32_t i = 0; i < operand.count; i++)
        text_constant(operand.texts[i], &values[i]);
    *count = operand.count;
    *present = true;
    return true;
}

static int64_t fold_attribute_int(const Onnx__NodeProto *proto, const char *name, int64_t fallback)
{
    for (size_t i = 0; i < proto->n_attribute; i++)
        if (proto->attribute[i]->name && strcmp(proto->attribute[i]->name, name) == 0)
            return proto->attribute[i]->i;
    return fallback;
}

/* Shape(x) of a value with a symbolic size: x's axis texts from `start` to `end`. */
static bool fold_shape(onnx_importer *im, const Onnx__NodeProto *proto, size_operand *out, kiln_error *err,
                       kiln_status *status)
{
    value_entry *e = find_entry(im, proto->input[0]);
    if (!e || e->kind == ENTRY_CONSTANT || e->kind == ENTRY_BROKEN)
        return false;
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    if ((*status = entry_value(im, e, &x, err)) != KILN_OK ||
        (*status = kiln_builder_value_type(im->builder, x, &dtype, &rank, sizes, err)) != KILN_OK)
        return false;
    int64_t start = fold_attribute_int(proto, "start", 0), end = fold_attribute_int(proto, "end", rank);
    start = start < 0 ? start + rank : start;
    end = end < 0 ? end + rank : end;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    out->rank = 1;
    out->count = 0;
    out->dtype = KILN_I64;
    for (int64_t a = start; a < end; a++) {
        size_t length;
        out->symbolic = out->symbolic || sizes[a] < 0;
        if ((*status = kiln_builder_value_axis_text(im->builder, x, (uint32_t)a, out->texts[out->count],
                                                    SIZE_TEXT_MAX, &length, err)) != KILN_OK ||
            length >= SIZE_TEXT_MAX)
            return false;
        out->count++;
    }
    return out->symbolic; /* constant sizes: map_shape folds them as before */
}

/* The elementwise ops on sizes, with ONNX broadcasting of rank 0 and 1. */
static bool fold_arithmetic(onnx_importer *im, char op, const size_operand *a, const size_operand *b,
                            size_operand *out)
{
    /* An empty operand (a broadcast to no elements) is left to the translation. */
    if (a->count == 0 || b->count == 0 || (a->count != b->count && a->count != 1 && b->count != 1))
        return false;
    out->rank = a->rank > b->rank ? a->rank : b->rank;
    out->count = a->count > b->count ? a->count : b->count;
    out->dtype = a->dtype;
    for (uint32_t i = 0; i < out->count; i++)
        if (!size_arithmetic(im, op, a->texts[a->count == 1 ? 0 : i], b->texts[b->count == 1 ? 0 : i], out->texts[i]))
            return false;
    return true;
}

/* Compute the node's one output as a size operand. @return false if the node is not one symbolic folding covers. */
static bool fold_sizes(onnx_importer *im, const Onnx__NodeProto *proto, size_operand *out, kiln_error *err,
                       kiln_status *status)
{
    const char *op = proto->op_type;
    if (strcmp(op, "Shape") == 0)
        return proto->n_input == 1 && fold_shape(im, proto, out, err, status);
    size_operand in[8];
    uint32_t n = (uint32_t)proto->n_input;
    bool symbolic = false;
    if (n == 0 || n > 8)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!proto->input[i][0]) {
            in[i].count = 0;
            continue;
        }
        if (!size_operand_of(im, proto->input[i], &in[i]))
            return false;
        symbolic = symbolic || in[i].symbolic;
    }
    if (!symbolic)
        return false; /* all constant: fold_node evaluates it */
    int64_t values[SYMBOLIC_MAX_ELEMENTS];
    uint32_t count;
    bool present;
    out->symbolic = true;
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0) {
        int64_t to = fold_attribute_int(proto, "to", 7);
        if (to != 7 && to != 6) /* INT64, INT32 */
            return false;
        *out = in[0];
        out->dtype = to == 7 ? KILN_I64 : KILN_I32;
        return true;
    }
    if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0)
        return n == 2 && fold_arithmetic(im, op[0] == 'A' ? '+' : op[0] == 'S' ? '-' : op[0] == 'M' ? '*' : '/',
                                         &in[0], &in[1], out);
    if (strcmp(op, "Gather") == 0) {
        int64_t axis = fold_attribute_int(proto, "axis", 0);
        if (n != 2 || in[0].rank != 1 || (axis != 0 && axis != -1) || in[1].symbolic)
            return false;
        out->rank = in[1].rank;
        out->count = in[1].count;
        out->dtype = in[0].dtype;
        for (uint32_t i = 0; i < in[1].count; i++) {
            int64_t k;
            text_constant(in[1].texts[i], &k);
            k = k < 0 ? k + in[0].count : k;
            if (k < 0 || k >= in[0].count)
                return false; /* translated as usual: gather reports the index */
            memcpy(out->texts[i], in[0].texts[k], SIZE_TEXT_MAX);
        }
        return true;
    }
    if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
        bool unsqueeze = op[0] == 'U';
        if (!fold_ints(im, proto, "axes", 13, 1, values, SYMBOLIC_MAX_ELEMENTS, &count, &present))
            return false;
        bool axis_zero = count == 1 && (values[0] == 0 || values[0] == -1);
        if (unsqueeze ? in[0].rank != 0 || !axis_zero : in[0].rank != 1 || in[0].count != 1 || (present && !axis_zero))
            return false;
        *out = in[0];
        out->rank = unsqueeze ? 1 : 0;
        return true;
    }
    if (strcmp(op, "Concat") == 0) {
        int64_t axis = fold_attribute_int(proto, "axis", 0);
        if (axis != 0 && axis != -1)
            return false;
        out->rank = 1;
        out->count = 0;
        out->dtype = in[0].dtype;
        for (uint32_t i = 0; i < n; i++) {
            if (in[i].rank != 1 || in[i].count > SYMBOLIC_MAX_ELEMENTS - out->count)
                return false;
            memcpy(out->texts[out->count], in[i].texts, in[i].count * sizeof *in[i].texts);
            out->count += in[i].count;
        }
        return true;
    }
    if (strcmp(op, "Slice") == 0) {
        int64_t bounds[4][SYMBOLIC_MAX_ELEMENTS] = {{0}};
        static const char *const names[] = {"starts", "ends", "axes", "steps"};
        for (uint32_t k = 0; k < 4; k++) {
            if (!fold_ints(im, proto, names[k], 10, k + 1, bounds[k], 1, &count, &present))
                return false;
            if (!present && k < 2)
                return false;
            if (!present)
                bounds[k][0] = k == 2 ? 0 : 1;
        }
        int64_t size = in[0].count, start = bounds[0][0], end = bounds[1][0], step = bounds[3][0];
        if (in[0].rank != 1 || (bounds[2][0] != 0 && bounds[2][0] != -1) || step <= 0)
            return false;
        start = start < 0 ? start + size : start;
        end = end < 0 ? end + size : end;
        start = start < 0 ? 0 : start > size ? size : start;
        end = end < 0 ? 0 : end > size ? size : end;
        out->rank = 1;
        out->count = 0;
        out->dtype = in[0].dtype;
        for (int64_t i = start; i < end; i += step)
            memcpy(out->texts[out->count++], in[0].texts[i], SIZE_TEXT_MAX);
        return true;
    }
    return false;
}

/*
 * Symbolic folding of node `index`: when it computes a small integer
 * tensor from sizes that are kiln dims (Shape of a value with a symbolic
 * axis, or Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity, Add,
 * Sub, Mul, Div over such tensors and constants), its output becomes a
 * symbolic entry (or a constant when every element turns out constant),
 * and the node is translated only if something uses it as data.
 * @return KILN_OK with *folded set, or an error (out of memory).
 */
static kiln_status fold_symbolic(onnx_importer *im, size_t index, bool *folded, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    size_operand out;
    kiln_status status = KILN_OK;
    *folded = false;
    if (proto->n_output != 1 || !proto->output[0][0])
        return KILN_OK;
    memset(&out, 0, sizeof out);
    /* A failed Shape of an input (a declaration the import cannot make) is reported where the input is used. */
    if (!fold_sizes(im, proto, &out, err, &status))
        return status == KILN_ERR_OUT_OF_MEMORY ? status : KILN_OK;
    bool constant = true;
    int64_t values[SYMBOLIC_MAX_ELEMENTS];
    for (uint32_t i = 0; i < out.count; i++)
        constant = constant && text_constant(out.texts[i], &values[i]);
    value_entry *e;
    if (find_entry(im, proto->output[0]))
        return KILN_OK; /* defined twice: translated as usual, which reports it */
    if (constant) {
        kiln_tensor *t;
        int64_t shape[1] = {out.count};
        status = kiln_tensor_new(out.dtype, out.rank, shape, &t, err);
        if (status != KILN_OK)
            return status;
        for (uint32_t i = 0; i < out.count; i++) {
            if (out.dtype == KILN_I64)
                ((int64_t *)kiln_tensor_data(t))[i] = values[i];
            else
                ((int32_t *)kiln_tensor_data(t))[i] = (int32_t)values[i];
        }
        status = new_entry(im, proto->output[0], ENTRY_CONSTANT, &e, err);
        if (status != KILN_OK) {
            kiln_tensor_free(t);
            return status;
        }
        e->constant = t;
        e->owns_constant = true;
        *folded = true;
        return KILN_OK;
    }
    char (*texts)[SIZE_TEXT_MAX] = malloc((out.count ? out.count : 1) * sizeof *texts);
    if (!texts)
        return no_memory(err);
    memcpy(texts, out.texts, out.count * sizeof *texts);
    status = new_entry(im, proto->output[0], ENTRY_SYMBOLIC, &e, err);
    if (status != KILN_OK) {
        free(texts);
        return status;
    }
    e->symbolic = texts;
    e->symbolic_rank = out.rank;
    e->symbolic_count = out.count;
    e->source_node = index;
    *folded = true;
    return KILN_OK;
}

/* "node 3 'name' (Relu)" */
static void node_label(const Onnx__NodeProto *proto, size_t index, char *label, size_t size)
{
    snprintf(label, size, "node %zu%s%s%s (%s)", index, proto->name && proto->name[0] ? " '" : "",
             proto->name ? proto->name : "", proto->name && proto->name[0] ? "'" : "", proto->op_type);
}

/*
 * Translate the node that computed symbolic entry `e`, now that something
 * uses it as data: the mapping runs as it would have at the node's turn
 * (its inputs are translated on demand the same way) and binds `e`.
 */
static kiln_status translate_symbolic(onnx_importer *im, value_entry *e, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[e->source_node];
    char label[512];
    node_label(proto, e->source_node, label, sizeof label);
    const onnx_op_mapping *mapping = onnx_find_mapping(proto->op_type, im->opset, NULL);
    if (!mapping)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_OP, "%s: no mapping", label);
    onnx_node node = {im, proto, im->opset, label, err};
    kiln_status status = mapping->map(&node, mapping->kiln_op);
    if (status == KILN_OK && !e->has_value)
        status = onnx_fail(err, KILN_ERR_MALFORMED, "%s: output '%s' was not translated", label, e->onnx_name);
    return status;
}

static kiln_status import_node(onnx_importer *im, size_t index, int64_t opset, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    char label[512];
    node_label(proto, index, label, sizeof label);
    onnx_node node = {im, proto, opset, label, err};
    const char *domain = proto->domain ? proto->domain : "";
    if (domain[0] && strcmp(domain, "ai.onnx") != 0) {
        kiln_status status = onnx_node_unsupported(&node, "unsupported op %s.%s (domain '%s' is not supported)",
                                                   domain, proto->op_type, domain);
        return status == KILN_ERR_UNSUPPORTED_OP ? mark_outputs_broken(im, proto, err) : status;
    }
    const char *why = NULL;
    const onnx_op_mapping *mapping = onnx_find_mapping(proto->op_type, opset, &why);
    bool reads_broken = false;
    for (size_t i = 0; i < proto->n_input; i++) {
        if (!proto->input[i][0])
            continue;
        value_entry *e = find_entry(im, proto->input[i]);
        if (!e)
            return onnx_fail(err, KILN_ERR_MALFORMED, "%s: input '%s' is not produced by an earlier node "
                                                      "(nodes must be in topological order)",
                             label, proto->input[i]);
        reads_broken = reads_broken || e->kind == ENTRY_BROKEN;
    }
    kiln_status status;
    bool folded = false;
    if (!mapping)
        status = onnx_node_unsupported(&node, "%s", why);
    else if (reads_broken)
        status = KILN_ERR_UNSUPPORTED_OP; /* the cause is reported where the broken value came from */
    else if ((status = fold_symbolic(im, index, &folded, err)) != KILN_OK || folded)
        ; /* folded, or out of memory */
    else if (fold_node(im, proto, mapping, opset, label))
        status = KILN_OK;
    else
        status = mapping->map(&node, mapping->kiln_op);
    if (status == KILN_ERR_UNSUPPORTED_OP)
        return mark_outputs_broken(im, proto, err);
    return status;
}

static kiln_status add_graph_outputs(onnx_importer *im, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    name_table output_names;
    if (!table_init(&output_names, g->n_output))
        return table_release(&output_names), no_memory(err);
    kiln_status status = KILN_OK;
    for (size_t i = 0; status == KILN_OK && i < g->n_output; i++) {
        const char *name = g->output[i]->name ? g->output[i]->name : "";
        value_entry *e = find_entry(im, name);
        if (!e) {
            status = onnx_fail(err, KILN_ERR_MALFORMED, "graph output '%s' is not produced by any node", name);
            break;
        }
        if (e->kind == ENTRY_BROKEN)
            continue;
        kiln_value value;
        status = entry_value(im, e, &value, err);
        /* An output that is an input or a stored value is copied, so every output is an op result. */
        if (status == KILN_OK && e->kind != ENTRY_VALUE)
            status = kiln_builder_add_op(im->builder, "identity", 1, &value, &value, err);
        const char *kiln_name;
        if (status == KILN_OK)
            status = unique_kiln_name(im, &output_names, name, &kiln_name, err);
        if (status == KILN_OK)
            status = kiln_builder_add_output(im->builder, kiln_name, value, err);
    }
    table_release(&output_names);
    return status;
}

static kiln_status run_import(onnx_importer *im, const char *program_name, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    if (!g)
        return onnx_fail(err, KILN_ERR_MALFORMED, "the model has no graph");
    uint64_t expected = g->n_input + g->n_initializer + g->n_output;
    for (size_t i = 0; i < g->n_node; i++)
        expected += g->node[i]->n_output;
    if (!table_init(&im->by_onnx_name, expected) || !table_init(&im->kiln_names, g->n_input + g->n_initializer))
        return no_memory(err);
    im->dim_declared = calloc(im->options->dim_count + 1, sizeof *im->dim_declared);
    if (!im->dim_declared)
        return no_memory(err);
    kiln_status status = kiln_builder_new(program_name, &im->builder, err);
    if (status == KILN_OK)
        status = record_metadata(im, err);
    if (status == KILN_OK)
        status = add_initializers(im, err);
    if (status == KILN_OK)
        status = add_graph_inputs(im, err);
    int64_t opset = onnx_model_default_opset(im->model);
    im->opset = opset;
    for (size_t i = 0; status == KILN_OK && i < g->n_node; i++)
        status = import_node(im, i, opset, err);
    if (status == KILN_OK)
        status = add_graph_outputs(im, err);
    if (status == KILN_OK && im->report_count)
        status = onnx_fail(err, KILN_ERR_UNSUPPORTED_OP, "%u construct%s cannot be imported; the first: %s",
                           im->report_count, im->report_count == 1 ? "" : "s", im->report[0]);
    return status;
}

kiln_status onnx_import_model(const Onnx__ModelProto *model, const char *program_name,
                              const onnx_import_options *options, onnx_import *result, kiln_error *err)
{
    onnx_import_options no_options = {0};
    onnx_importer im = {.model = model, .options = options ? options : &no_options, .result = result};
    memset(result, 0, sizeof *result);
    if (im.options->limits)
        im.limits = *im.options->limits;
    else
        onnx_limits_default(&im.limits);
    kiln_status status = run_import(&im, program_name, err);
    if (status == KILN_OK) {
        result->builder = im.builder;
        im.builder = NULL;
    }
    result->unsupported = im.report;
    result->unsupported_count = im.report_count;
    importer_release(&im);
    return status;
}

void onnx_import_release(onnx_import *result)
{
    kiln_builder_free(result->builder);
    for (uint32_t i = 0; i < result->unsupported_count; i++)
        free(result->unsupported[i]);
    free(result->unsupported);
    for (uint32_t i = 0; i < result->input_count; i++) {
        free(result->input_onnx_names[i]);
        free(result->input_kiln_names[i]);
    }
    free(result->input_onnx_names);
    free(result->input_kiln_names);
    memset(result, 0, sizeof *result);
}
