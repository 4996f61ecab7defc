/* model.c — the program model's data: releasing it, naming its dims, rendering shapes. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "evidence.h"
#include "semantic_check.h"

/* The name, metadata, opset, weights and states: a method borrows its root's. */
static void release_tables(kiln_model *m)
{
    free(m->name);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        free(m->metadata[i].key);
        free(m->metadata[i].value);
    }
    free(m->metadata);
    for (uint32_t i = 0; i < m->weight_count; i++)
        free(m->weights[i].name);
    free(m->weights);
    for (uint32_t i = 0; i < m->opset_count; i++)
        free(m->opset[i].name);
    free(m->opset);
    for (uint32_t i = 0; i < m->state_count; i++)
        kiln_state_decl_release(&m->states[i]);
    free(m->states);
    for (uint32_t i = 0; i < m->generation_count; i++)
        kiln_generation_record_release(&m->generations[i]);
    free(m->generations);
}

/* The tables a method borrows from its root. */
static void borrow_tables(kiln_model *method, const kiln_model *root)
{
    method->name = root->name;
    method->mode = root->mode;
    method->metadata = root->metadata;
    method->metadata_count = root->metadata_count;
    method->weights = root->weights;
    method->weight_count = root->weight_count;
    method->opset = root->opset;
    method->opset_count = root->opset_count;
    method->states = root->states;
    method->state_count = root->state_count;
}

void kiln_model_method_init(kiln_model *method, const kiln_model *root, char *name)
{
    memset(method, 0, sizeof *method);
    kiln_expr_pool_init(&method->exprs);
    borrow_tables(method, root);
    method->method_name = name;
    method->borrows_tables = true;
}

void kiln_model_share_tables(kiln_model *root)
{
    for (uint32_t i = 0; i < root->method_count; i++)
        borrow_tables(&root->methods[i], root);
}

void kiln_model_release(kiln_model *m)
{
    for (uint32_t i = 0; i < m->method_count; i++)
        kiln_model_release(&m->methods[i]);
    free(m->methods);
    free(m->method_name);
    if (!m->borrows_tables)
        release_tables(m);
    for (uint32_t i = 0; i < m->dim_count; i++)
        free(m->dims[i].name);
    free(m->dims);
    for (uint32_t i = 0; i < m->derived_count; i++)
        free(m->derived[i].name);
    free(m->derived);
    free(m->relations);
    kiln_expr_pool_release(&m->exprs);
    for (uint32_t i = 0; i < m->input_count; i++)
        free(m->inputs[i].name);
    free(m->inputs);
    for (uint32_t i = 0; i < m->node_count; i++) {
        free(m->nodes[i].inputs);
        for (uint32_t a = 0; a < m->nodes[i].attribute_count; a++)
            kiln_attribute_release(&m->nodes[i].attributes[a]);
        free(m->nodes[i].attributes);
        free(m->nodes[i].name);
    }
    free(m->nodes);
    for (uint32_t i = 0; i < m->output_count; i++)
        free(m->outputs[i].name);
    free(m->outputs);
    for (uint32_t i = 0; i < m->evidence_count; i++)
        kiln_evidence_record_release(&m->evidence[i]);
    for (uint32_t i = 0; i < m->check_count; i++)
        kiln_input_check_release(&m->checks[i]);
    free(m->checks);
    free(m->evidence);
    kiln_guard_list_release(&m->guards);
    free(m->stored_plan.offsets);
    free(m->stored_plan.sizes);
    free(m->value_types);
    memset(m, 0, sizeof *m);
}

const char **kiln_model_dim_names(const kiln_model *m)
{
    const char **names = malloc((m->dim_count ? m->dim_count : 1) * sizeof *names);
    if (names)
        for (uint32_t i = 0; i < m->dim_count; i++)
            names[i] = m->dims[i].name;
    return names;
}

int kiln_model_format_shape(const kiln_model *m, const kiln_shape *shape, char *buffer, size_t size)
{
    const char **names = kiln_model_dim_names(m);
    char text[1024];
    size_t used = 0;
    text[used++] = '[';
    for (uint32_t i = 0; i < shape->rank && names; i++) {
        if (i) {
            text[used++] = ',';
            text[used++] = ' ';
        }
        int n = kiln_expr_format(&m->exprs, shape->axes[i], names, text + used, sizeof text - used - 2);
        used += (size_t)n < sizeof text - used - 2 ? (size_t)n : sizeof text - used - 3;
        if (used > sizeof text - 8)
            break;
    }
    text[used++] = ']';
    text[used] = '\0';
    free(names);
    return snprintf(buffer, size, "%s", text);
}

int kiln_model_format_relation(const kiln_model *m, const kiln_dim_relation *r, char *buffer, size_t size)
{
    const char **names = kiln_model_dim_names(m);
    char lhs[512] = "?", rhs[512] = "?";
    if (names) {
        kiln_expr_format(&m->exprs, r->lhs, names, lhs, sizeof lhs);
        kiln_expr_format(&m->exprs, r->rhs, names, rhs, sizeof rhs);
    }
    free(names);
    return snprintf(buffer, size, "%s <= %s", lhs, rhs);
}

bool kiln_model_state_length_dim(const kiln_model *m, uint32_t d)
{
    for (uint32_t i = 0; d < m->dim_count && i < m->state_count; i++)
        if (strcmp(m->states[i].length_dim, m->dims[d].name) == 0)
            return true;
    return false;
}
