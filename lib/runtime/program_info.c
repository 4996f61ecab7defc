/* program_info.c — read-only introspection of a loaded program. */
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "attribute.h"
#include "error.h"
#include "program_info.h"

const char *kiln_version(void) { return KILN_VERSION_STRING; }
unsigned kiln_version_number(void) { return KILN_VERSION_NUMBER; }

const char *kiln_program_name(const kiln_program *p) { return p->model.name; }
kiln_mode kiln_program_mode(const kiln_program *p) { return p->model.mode; }
bool kiln_program_is_strict(const kiln_program *p) { return !p->model.non_strict; }
uint32_t kiln_program_runtime_guard_count(const kiln_program *p) { return p->model.guards.count; }

const char *kiln_program_runtime_guard(const kiln_program *p, uint32_t index, uint32_t *node)
{
    if (index >= p->model.guards.count)
        return NULL;
    if (node)
        *node = p->model.guards.items[index].node;
    return p->model.guards.items[index].text;
}

uint32_t kiln_program_state_count(const kiln_program *p) { return p ? p->model.state_count : 0; }

kiln_status kiln_program_state_at(const kiln_program *p, uint32_t index, const char **name, kiln_dtype *dtype,
                                  uint32_t *rank, const int64_t **shape, uint32_t *axis, const char **length_dim,
                                  kiln_error *err)
{
    if (!p || index >= p->model.state_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state %u: the program declares %u states", index,
                         p ? p->model.state_count : 0);
    const kiln_state_decl *st = &p->model.states[index];
    if (name)
        *name = st->name;
    if (dtype)
        *dtype = st->dtype;
    if (rank)
        *rank = st->rank;
    if (shape)
        *shape = st->shape;
    if (axis)
        *axis = st->axis;
    if (length_dim)
        *length_dim = st->length_dim;
    return KILN_OK;
}

uint32_t kiln_program_relation_count(const kiln_program *p) { return p ? p->model.relation_count : 0; }

kiln_status kiln_program_relation(const kiln_program *p, uint32_t index, char *buffer, size_t size, kiln_error *err)
{
    if (!p || index >= p->model.relation_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "relation %u: the method declares %u relations", index,
                         p ? p->model.relation_count : 0);
    int length = kiln_model_format_relation(&p->model, &p->model.relations[index], buffer, buffer ? size : 0);
    if (!buffer || length < 0 || (size_t)length >= size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "relation %u needs a buffer of %d bytes", index, length + 1);
    return KILN_OK;
}

void kiln_program_format_version(const kiln_program *p, uint16_t *major, uint16_t *minor)
{
    *major = kiln_program_root(p)->container.major;
    *minor = kiln_program_root(p)->container.minor;
}

void kiln_program_artifact_digest(const kiln_program *p, uint8_t out[32])
{
    memcpy(out, kiln_program_root(p)->container.digest, KILN_DIGEST_SIZE);
}

void kiln_program_identity(const kiln_program *method, kiln_identity identity, uint8_t out[32])
{
    /* The artifact's identities: a method's handle has those of the program it belongs to. */
    const kiln_program *p = kiln_program_root(method);
    switch (identity) {
    case KILN_IDENTITY_PROGRAM: memcpy(out, p->program_identity, 32); return;
    case KILN_IDENTITY_STATE: memcpy(out, p->state_identity, 32); return;
    case KILN_IDENTITY_ARTIFACT: break;
    }
    memcpy(out, p->container.digest, 32);
}

void kiln_program_signature(const kiln_program *p, kiln_signature_info *out)
{
    *out = kiln_program_root(p)->signature;
}

uint32_t kiln_program_metadata_count(const kiln_program *p) { return p->model.metadata_count; }

void kiln_program_metadata(const kiln_program *p, uint32_t index, const char **key, const char **value)
{
    if (index >= p->model.metadata_count) {
        *key = *value = NULL;
        return;
    }
    *key = p->model.metadata[index].key;
    *value = p->model.metadata[index].value;
}

uint32_t kiln_program_dim_count(const kiln_program *p) { return p->model.dim_count; }

void kiln_program_dim(const kiln_program *p, uint32_t index, kiln_dim_info *out)
{
    if (index >= p->model.dim_count) {
        *out = (kiln_dim_info){0};
        return;
    }
    out->name = p->model.dims[index].name;
    out->min = p->model.dims[index].min;
    out->max = p->model.dims[index].max;
    out->multiple_of = p->model.dims[index].multiple_of;
}

uint32_t kiln_program_derived_dim_count(const kiln_program *p) { return p->model.derived_count; }

int kiln_program_derived_dim(const kiln_program *p, uint32_t index, const char **name, char *buffer, size_t size)
{
    const kiln_model *m = &p->model;
    if (index >= m->derived_count) {
        *name = NULL;
        return -1;
    }
    const char **names = kiln_model_dim_names(m);
    *name = m->derived[index].name;
    int length = names ? kiln_expr_format(&m->exprs, m->derived[index].expr, names, buffer, size) : 0;
    free(names);
    return length;
}

uint32_t kiln_program_input_count(const kiln_program *p) { return p->model.input_count; }

void kiln_program_input(const kiln_program *p, uint32_t index, kiln_io_info *out)
{
    if (index >= p->model.input_count) {
        *out = (kiln_io_info){0};
        return;
    }
    const kiln_input_decl *in = &p->model.inputs[index];
    out->name = in->name;
    out->dtype = in->type.dtype;
    out->rank = in->type.shape.rank;
}

static kiln_status shape_at(const kiln_model *m, const kiln_shape *s, const int64_t *dim_values, int64_t *shape,
                            kiln_error *err)
{
    bool bound[256];
    if (m->dim_count > 256)
        return kiln_fail(err, KILN_ERR_LIMIT, "more than 256 dims");
    for (uint32_t d = 0; d < m->dim_count; d++)
        bound[d] = true;
    for (uint32_t a = 0; a < s->rank; a++)
        KILN_TRY(kiln_expr_eval(&m->exprs, s->axes[a], dim_values, bound, &shape[a], err));
    return KILN_OK;
}

kiln_status kiln_program_input_shape_at(const kiln_program *p, uint32_t index, const int64_t *dim_values,
                                        int64_t shape[KILN_MAX_RANK], kiln_error *err)
{
    if (index >= p->model.input_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input %u of a program with %u inputs", index,
                         p->model.input_count);
    return shape_at(&p->model, &p->model.inputs[index].type.shape, dim_values, shape, err);
}

kiln_status kiln_program_output_shape_at(const kiln_program *p, uint32_t index, const int64_t *dim_values,
                                         int64_t shape[KILN_MAX_RANK], kiln_error *err)
{
    const kiln_model *m = &p->model;
    if (index >= m->output_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "output %u of a program with %u outputs", index,
                         m->output_count);
    return shape_at(m, &m->value_types[m->outputs[index].value].shape, dim_values, shape, err);
}

bool kiln_program_input_check(const kiln_program *p, uint32_t index, kiln_input_check *out)
{
    const kiln_model *m = &p->model;
    for (uint32_t i = 0; i < m->check_count; i++) {
        const kiln_input_check_decl *c = &m->checks[i];
        if (c->input != index)
            continue;
        kiln_input_check filled;
        kiln_input_check_default(&filled);
        filled.has_range = c->has_range;
        filled.min = c->min;
        filled.max = c->max;
        filled.finite_only = c->finite_only;
        filled.category_count = c->category_count;
        filled.categories = c->categories;
        filled.unit = c->unit;
        filled.description = c->description;
        /* Up to the caller's size: an older header's struct is shorter. */
        if (out->struct_size < KILN_SIZE_THROUGH(kiln_input_check, description))
            return false;
        kiln_struct_fill(out, out->struct_size, &filled, sizeof filled);
        return true;
    }
    return false;
}

uint32_t kiln_program_output_count(const kiln_program *p) { return p->model.output_count; }

void kiln_program_output(const kiln_program *p, uint32_t index, kiln_io_info *out)
{
    if (index >= p->model.output_count) {
        *out = (kiln_io_info){0};
        return;
    }
    const kiln_output_decl *o = &p->model.outputs[index];
    const kiln_value_type *type = &p->model.value_types[o->value];
    out->name = o->name;
    out->dtype = type->dtype;
    out->rank = type->shape.rank;
}

int kiln_program_input_shape_text(const kiln_program *p, uint32_t index, char *buffer, size_t size)
{
    if (index >= p->model.input_count)
        return -1;
    return kiln_model_format_shape(&p->model, &p->model.inputs[index].type.shape, buffer, size);
}

int kiln_program_output_shape_text(const kiln_program *p, uint32_t index, char *buffer, size_t size)
{
    if (index >= p->model.output_count)
        return -1;
    const kiln_value_type *type = &p->model.value_types[p->model.outputs[index].value];
    return kiln_model_format_shape(&p->model, &type->shape, buffer, size);
}

uint32_t kiln_program_weight_count(const kiln_program *p) { return p->model.weight_count; }

void kiln_program_weight(const kiln_program *p, uint32_t index, kiln_weight_info *out)
{
    if (index >= p->model.weight_count) {
        *out = (kiln_weight_info){0};
        return;
    }
    const kiln_weight_decl *w = &p->model.weights[index];
    out->name = w->name;
    out->kind = w->kind;
    out->dtype = w->dtype;
    out->rank = w->rank;
    out->shape = w->shape;
    out->byte_size = w->byte_size;
}

uint32_t kiln_program_node_count(const kiln_program *p) { return p->model.node_count; }

void kiln_program_node(const kiln_program *p, uint32_t index, kiln_node_info *out)
{
    if (index >= p->model.node_count) {
        *out = (kiln_node_info){0};
        return;
    }
    const kiln_node_decl *node = &p->model.nodes[index];
    out->op = p->model.opset[node->op].name;
    out->op_version = p->model.opset[node->op].version;
    out->input_count = node->input_count;
}

const char *kiln_program_node_name(const kiln_program *p, uint32_t index)
{
    return index < p->model.node_count ? p->model.nodes[index].name : NULL;
}

uint32_t kiln_program_node_attribute_count(const kiln_program *p, uint32_t index)
{
    return index < p->model.node_count ? p->model.nodes[index].attribute_count : 0;
}

bool kiln_program_node_attribute(const kiln_program *p, uint32_t node, uint32_t attribute, kiln_attribute *out)
{
    memset(out, 0, sizeof *out);
    if (node >= p->model.node_count || attribute >= p->model.nodes[node].attribute_count)
        return false;
    *out = kiln_attribute_view(&p->model.nodes[node].attributes[attribute]);
    return true;
}

uint32_t kiln_program_section_count(const kiln_program *p) { return kiln_program_root(p)->container.section_count; }

void kiln_program_section(const kiln_program *p, uint32_t index, kiln_section_info *out)
{
    const kiln_container *c = &kiln_program_root(p)->container;
    if (index >= c->section_count) {
        *out = (kiln_section_info){0};
        return;
    }
    const kiln_section_entry *s = &c->sections[index];
    kiln_fourcc_text(s->type, out->type);
    out->critical = (s->flags & KILN_SECTION_CRITICAL) != 0;
    out->compressed = (s->flags & KILN_SECTION_COMPRESSED) != 0;
    out->version = s->version;
    out->offset = s->offset;
    out->stored_size = s->stored_size;
    out->raw_size = s->raw_size;
    out->crc32 = s->crc;
}

/* ------------------------------------------- graph and memory, for inspection */

uint32_t kiln_program_node_input(const kiln_program *p, uint32_t node, uint32_t index)
{
    if (node >= p->model.node_count || index >= p->model.nodes[node].input_count)
        return UINT32_MAX;
    return p->model.nodes[node].inputs[index];
}

uint32_t kiln_program_output_value(const kiln_program *p, uint32_t index)
{
    return index < p->model.output_count ? p->model.outputs[index].value : UINT32_MAX;
}

int kiln_program_node_shape_text(const kiln_program *p, uint32_t node, char *buffer, size_t size)
{
    if (node >= p->model.node_count)
        return -1;
    const kiln_value_type *type = &p->model.value_types[kiln_model_first_node_value(&p->model) + node];
    return kiln_model_format_shape(&p->model, &type->shape, buffer, size);
}

uint64_t kiln_program_arena_bytes(const kiln_program *p) { return p->arena_plan.arena_bytes; }
uint64_t kiln_program_intermediate_bytes(const kiln_program *p) { return p->arena_plan.intermediate_bytes; }
bool kiln_program_memory_plan_stored(const kiln_program *p) { return p->plan_stored; }

uint64_t kiln_program_feature_bits(const kiln_program *p) { return kiln_program_root(p)->container.features; }

void kiln_program_evidence_output(const kiln_program *p, uint32_t evidence, uint32_t index, const char **name,
                                  kiln_compare_rule *rule)
{
    if (evidence >= p->model.evidence_count || index >= p->model.evidence[evidence].output_count) {
        *name = NULL;
        memset(rule, 0, sizeof *rule);
        return;
    }
    const kiln_evidence_record *c = &p->model.evidence[evidence];
    *name = c->outputs[index].name;
    *rule = c->rules[index];
}

/* The expression of axis `axis` of `shape`, rendered with the program's dim names. */
static int axis_text(const kiln_program *p, const kiln_shape *shape, uint32_t axis, char *buffer, size_t size)
{
    if (axis >= shape->rank)
        return -1;
    const char **names = kiln_model_dim_names(&p->model);
    if (!names)
        return -1;
    int length = kiln_expr_format(&p->model.exprs, shape->axes[axis], names, buffer, size);
    free(names);
    return length;
}

int kiln_program_input_axis_text(const kiln_program *p, uint32_t index, uint32_t axis, char *buffer, size_t size)
{
    if (index >= p->model.input_count)
        return -1;
    return axis_text(p, &p->model.inputs[index].type.shape, axis, buffer, size);
}

int kiln_program_output_axis_text(const kiln_program *p, uint32_t index, uint32_t axis, char *buffer, size_t size)
{
    if (index >= p->model.output_count)
        return -1;
    return axis_text(p, &p->model.value_types[p->model.outputs[index].value].shape, axis, buffer, size);
}

const char *kiln_program_metadata_value(const kiln_program *p, const char *key)
{
    for (uint32_t i = 0; i < p->model.metadata_count; i++)
        if (strcmp(p->model.metadata[i].key, key) == 0)
            return p->model.metadata[i].value;
    return NULL;
}

int64_t kiln_program_find_dim(const kiln_program *p, const char *name)
{
    for (uint32_t d = 0; d < p->model.dim_count; d++)
        if (strcmp(p->model.dims[d].name, name) == 0)
            return d;
    return -1;
}

kiln_status kiln_program_count_op_uses(kiln_program *p, kiln_error *err)
{
    const kiln_model *m = &p->model;
    /* Per opset entry, its place among the uses; several entries may name one (op, version). */
    uint32_t *use_of = malloc((m->opset_count + 1) * sizeof *use_of);
    p->op_uses = calloc(m->opset_count + 1, sizeof *p->op_uses);
    if (!use_of || !p->op_uses) {
        free(use_of);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory counting the ops");
    }
    for (uint32_t e = 0; e < m->opset_count; e++)
        use_of[e] = UINT32_MAX;
    for (uint32_t n = 0; n < m->node_count; n++) {
        uint32_t e = m->nodes[n].op;
        if (use_of[e] == UINT32_MAX) {
            const kiln_opset_entry *entry = &m->opset[e];
            uint32_t found = UINT32_MAX;
            for (uint32_t u = 0; u < p->op_use_count && found == UINT32_MAX; u++)
                if (p->op_uses[u].version == entry->version && strcmp(p->op_uses[u].name, entry->name) == 0)
                    found = u;
            if (found == UINT32_MAX) {
                found = p->op_use_count++;
                p->op_uses[found] = (kiln_op_use){entry->name, entry->version, 0};
            }
            use_of[e] = found;
        }
        p->op_uses[use_of[e]].nodes++;
    }
    free(use_of);
    return KILN_OK;
}

uint32_t kiln_program_op_use_count(const kiln_program *p)
{
    return p->op_use_count;
}

void kiln_program_op_use(const kiln_program *p, uint32_t index, kiln_op_use *out)
{
    *out = index < p->op_use_count ? p->op_uses[index] : (kiln_op_use){NULL, 0, 0};
}
