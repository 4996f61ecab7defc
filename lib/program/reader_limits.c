/* reader_limits.c — see reader_limits.h. */
#include "reader_limits.h"

#include <string.h>

#include "attribute.h"
#include "error.h"

/* `count` of `what` against `limit` (the kiln_limits field `field`). */
static kiln_status check_count(const char *what, uint64_t count, uint64_t limit, const char *field, kiln_error *err)
{
    if (count <= limit)
        return KILN_OK;
    return kiln_fail(err, KILN_ERR_LIMIT,
                     "%s: %llu, more than readers with these limits accept (%llu, kiln_limits.%s); an artifact "
                     "they refuse is not written",
                     what, (unsigned long long)count, (unsigned long long)limit, field);
}

/* The string `s` of `what` against max_string_length. */
static kiln_status check_string(const char *what, const char *s, const kiln_limits *limits, kiln_error *err)
{
    size_t length = s ? strlen(s) : 0;
    if (length <= limits->max_string_length)
        return KILN_OK;
    return kiln_fail(err, KILN_ERR_LIMIT,
                     "%s is %zu bytes long, more than readers with these limits accept (%u, "
                     "kiln_limits.max_string_length); an artifact they refuse is not written",
                     what, length, limits->max_string_length);
}

static kiln_status check_header(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_string("the program name", m->name, limits, err));
    KILN_TRY(check_count("metadata entries", m->metadata_count, limits->max_metadata, "max_metadata", err));
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        KILN_TRY(check_string("a metadata key", m->metadata[i].key, limits, err));
        KILN_TRY(check_string(m->metadata[i].key, m->metadata[i].value, limits, err));
    }
    KILN_TRY(check_count("opset entries", m->opset_count, limits->max_opset_entries, "max_opset_entries", err));
    KILN_TRY(check_count("dims", m->dim_count, limits->max_dims, "max_dims", err));
    KILN_TRY(check_count("derived dims", m->derived_count, limits->max_dims, "max_dims", err));
    for (uint32_t i = 0; i < m->dim_count; i++)
        KILN_TRY(check_string("a dim name", m->dims[i].name, limits, err));
    for (uint32_t i = 0; i < m->derived_count; i++)
        KILN_TRY(check_string("a derived dim name", m->derived[i].name, limits, err));
    return check_count("shape expressions", m->stored_expr_count, limits->max_expr_nodes, "max_expr_nodes", err);
}

static kiln_status check_signature(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_count("inputs", m->input_count, limits->max_inputs, "max_inputs", err));
    KILN_TRY(check_count("outputs", m->output_count, limits->max_outputs, "max_outputs", err));
    KILN_TRY(check_count("weights", m->weight_count, limits->max_weights, "max_weights", err));
    KILN_TRY(check_count("values (inputs, weights and nodes)", kiln_model_value_count(m), limits->max_values,
                         "max_values", err));
    for (uint32_t i = 0; i < m->input_count; i++)
        KILN_TRY(check_string("an input name", m->inputs[i].name, limits, err));
    for (uint32_t i = 0; i < m->output_count; i++)
        KILN_TRY(check_string("an output name", m->outputs[i].name, limits, err));
    uint64_t weight_bytes = 0;
    for (uint32_t i = 0; i < m->weight_count; i++) {
        KILN_TRY(check_string("a weight name", m->weights[i].name, limits, err));
        weight_bytes += m->weights[i].byte_size; /* each is bounded by the builder's memory */
    }
    KILN_TRY(check_count("weight bytes", weight_bytes, limits->max_weight_bytes, "max_weight_bytes", err));
    for (uint32_t i = 0; i < m->check_count; i++) {
        KILN_TRY(check_count("categories of an input check", m->checks[i].category_count,
                             limits->max_string_length, "max_string_length", err));
        KILN_TRY(check_string("an input check's unit", m->checks[i].unit, limits, err));
        KILN_TRY(check_string("an input check's description", m->checks[i].description, limits, err));
    }
    return KILN_OK;
}

static kiln_status check_graph(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_count("nodes", m->node_count, limits->max_nodes, "max_nodes", err));
    for (uint32_t n = 0; n < m->node_count; n++) {
        const kiln_node_decl *node = &m->nodes[n];
        KILN_TRY(check_count("operands of one node", node->input_count, limits->max_node_inputs, "max_node_inputs",
                             err));
        KILN_TRY(check_count("attributes of one node", node->attribute_count, limits->max_attributes,
                             "max_attributes", err));
        KILN_TRY(check_string("a node name", node->name, limits, err));
        for (uint32_t a = 0; a < node->attribute_count; a++) {
            const kiln_node_attribute *attribute = &node->attributes[a];
            KILN_TRY(check_string("an attribute name", attribute->name, limits, err));
            KILN_TRY(check_string("a string attribute", attribute->s, limits, err));
            KILN_TRY(check_count("values of one attribute list", attribute->count, limits->max_string_length,
                                 "max_string_length", err));
        }
    }
    return KILN_OK;
}

static kiln_status check_evidence(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_count("evidence cases", m->evidence_count, limits->max_outputs, "max_outputs", err));
    for (uint32_t c = 0; c < m->evidence_count; c++) {
        const kiln_evidence_record *e = &m->evidence[c];
        KILN_TRY(check_string("an evidence case name", e->name, limits, err));
        KILN_TRY(check_count("inputs of an evidence case", e->input_count, limits->max_inputs, "max_inputs", err));
        KILN_TRY(check_count("expected outputs of an evidence case", e->output_count, limits->max_outputs,
                             "max_outputs", err));
        for (uint32_t i = 0; i < e->input_count; i++)
            KILN_TRY(check_string("an evidence input name", e->inputs[i].name, limits, err));
        for (uint32_t i = 0; i < e->output_count; i++)
            KILN_TRY(check_string("an evidence output name", e->outputs[i].name, limits, err));
    }
    return KILN_OK;
}

/* One method (its dims are its own; the tables it shares are checked again, cheaply). */
static kiln_status check_method(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_header(m, limits, err));
    KILN_TRY(check_signature(m, limits, err));
    KILN_TRY(check_graph(m, limits, err));
    return check_evidence(m, limits, err);
}

kiln_status kiln_model_fits_reader_limits(const kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    KILN_TRY(check_method(m, limits, err));
    if (m->method_count)
        KILN_TRY(check_count("methods", (uint64_t)m->method_count + 1, limits->max_methods, "max_methods", err));
    for (uint32_t i = 0; i < m->method_count; i++) {
        KILN_TRY(check_string("a method name", m->methods[i].method_name, limits, err));
        KILN_TRY(check_method(&m->methods[i], limits, err));
    }
    return KILN_OK;
}
