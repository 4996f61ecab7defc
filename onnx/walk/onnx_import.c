/*
 * onnx_import.c — an ONNX graph into a kiln builder (see onnx_import.h):
 * metadata, initializers, graph inputs, then every node in order through
 * the mapping table (or folded), then the graph outputs.
 *
 * A node that reads a broken value is not translated, but its op is still
 * looked up, so the report names every op the model needs that kiln lacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_entry_value.h"
#include "onnx_error.h"
#include "onnx_fold.h"
#include "onnx_graph_inputs.h"
#include "onnx_import.h"
#include "onnx_mapping.h"
#include "onnx_model.h"
#include "onnx_state.h"
#include "onnx_symbolic.h"
#include "onnx_value_table.h"

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
            onnx_append_text(text, sizeof text, "%s%s:%lld", i ? "," : "", domain && domain[0] ? domain : "ai.onnx",
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
        if (onnx_entry_find(im, t->name))
            return onnx_fail(err, KILN_ERR_MALFORMED, "initializer '%s' is defined twice", t->name);
        onnx_entry *e;
        kiln_status status = onnx_entry_new(im, t->name, ENTRY_CONSTANT, &e, err);
        if (status != KILN_OK)
            return status;
        e->from_initializer = true;
        kiln_error tensor_err;
        status = onnx_tensor_to_kiln(t, im->options->external_data_dir, &im->limits, &e->owned_constant,
                                     &tensor_err);
        if (status == KILN_ERR_UNSUPPORTED_DTYPE) {
            e->kind = ENTRY_BROKEN;
            status = onnx_report_line(im, err, "initializer '%s': %s", t->name, tensor_err.message);
        } else if (status != KILN_OK) {
            if (err)
                *err = tensor_err;
            return status;
        }
        if (status != KILN_OK)
            return status;
        e->constant = e->owned_constant;
    }
    return KILN_OK;
}

static kiln_status mark_outputs_broken(onnx_importer *im, const Onnx__NodeProto *node, kiln_error *err)
{
    for (size_t o = 0; o < node->n_output; o++) {
        if (!node->output[o][0])
            continue;
        onnx_entry *e = onnx_entry_find(im, node->output[o]);
        if (e) {
            if (e->kind == ENTRY_VALUE && !e->has_value)
                e->kind = ENTRY_BROKEN;
            continue;
        }
        kiln_status status = onnx_entry_new(im, node->output[o], ENTRY_BROKEN, &e, err);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/*
 * Record every value the graph reads: the inputs of every node and the
 * graph outputs (onnx_node_output_read). The names stay borrowed from the
 * model.
 */
static kiln_status collect_read_names(onnx_importer *im, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    uint64_t expected = g->n_output;
    for (size_t i = 0; i < g->n_node; i++)
        expected += g->node[i]->n_input;
    if (!onnx_names_init(&im->read_table, expected))
        return onnx_no_memory(err);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            if (g->node[i]->input[k][0] && !onnx_names_put(&im->read_table, g->node[i]->input[k], 0))
                return onnx_no_memory(err);
    for (size_t i = 0; i < g->n_output; i++)
        if (g->output[i]->name && !onnx_names_put(&im->read_table, g->output[i]->name, 0))
            return onnx_no_memory(err);
    im->read_names = &im->read_table;
    uint64_t outputs = 0;
    for (size_t i = 0; i < g->n_node; i++)
        outputs += g->node[i]->n_output;
    if (!onnx_names_init(&im->producers, outputs))
        return onnx_no_memory(err);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (g->node[i]->output[k][0] && !onnx_names_put(&im->producers, g->node[i]->output[k], (uint32_t)i))
                return onnx_no_memory(err);
    return KILN_OK;
}

static kiln_status import_node(onnx_importer *im, size_t index, int64_t opset, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    char label[512];
    onnx_node_label(proto, index, label, sizeof label);
    onnx_node node = {im, proto, opset, label, err};
    const char *domain = proto->domain ? proto->domain : "";
    if (domain[0] && strcmp(domain, "ai.onnx") != 0) {
        kiln_status status = onnx_node_unsupported(&node, "unsupported op %s.%s (domain '%s' is not supported)",
                                                   domain, proto->op_type, domain);
        return status == KILN_ERR_UNSUPPORTED_OP ? mark_outputs_broken(im, proto, err) : status;
    }
    char why[256];
    const onnx_op_mapping *mapping = onnx_find_mapping(proto->op_type, opset, why, sizeof why);
    bool reads_broken = false;
    for (size_t i = 0; i < proto->n_input; i++) {
        if (!proto->input[i][0])
            continue;
        onnx_entry *e = onnx_entry_find(im, proto->input[i]);
        if (!e)
            return onnx_fail(err, KILN_ERR_MALFORMED, "%s: input '%s' is not produced by an earlier node "
                                                      "(nodes must be in topological order)",
                             label, proto->input[i]);
        reads_broken = reads_broken || e->kind == ENTRY_BROKEN;
    }
    kiln_status status;
    bool folded = false, appended = false;
    if (!mapping)
        status = onnx_node_unsupported(&node, "%s", why);
    else if (reads_broken)
        status = KILN_ERR_UNSUPPORTED_OP; /* the cause is reported where the broken value came from */
    else if ((status = onnx_state_try_append(im, index, &appended, err)) != KILN_OK || appended)
        ; /* a cache extended in place, or the builder's refusal */
    else if ((status = onnx_symbolic_fold(im, index, &folded, err)) != KILN_OK || folded)
        ; /* folded, or out of memory */
    else if (onnx_fold_constant_node(im, proto, mapping, opset, label))
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
    onnx_name_table output_names;
    if (!onnx_names_init(&output_names, g->n_output))
        return onnx_names_release(&output_names), onnx_no_memory(err);
    kiln_status status = KILN_OK;
    for (size_t i = 0; status == KILN_OK && i < g->n_output; i++) {
        const char *name = g->output[i]->name ? g->output[i]->name : "";
        onnx_entry *e = onnx_entry_find(im, name);
        if (!e) {
            status = onnx_fail(err, KILN_ERR_MALFORMED, "graph output '%s' is not produced by any node", name);
            break;
        }
        bool is_state;
        status = onnx_state_output(im, name, &is_state, err);
        if (status != KILN_OK)
            break;
        if (e->kind == ENTRY_BROKEN || is_state)
            continue;
        kiln_value value;
        status = onnx_entry_value(im, e, &value, err);
        /* An output that is an input or a stored value is copied, so every output is an op result. */
        if (status == KILN_OK && e->kind != ENTRY_VALUE)
            status = kiln_builder_add_op(im->builder, "identity", 1, &value, &value, err);
        const char *kiln_name;
        if (status == KILN_OK)
            status = onnx_unique_kiln_name(im, &output_names, name, &kiln_name, err);
        if (status == KILN_OK)
            status = kiln_builder_add_output(im->builder, kiln_name, value, err);
    }
    onnx_names_release(&output_names);
    return status;
}

/*
 * Report every node whose op kiln has no mapping for at the model's opset
 * (or whose domain it does not read), as translating it would, without
 * translating anything. Out of memory here leaves the report shorter.
 */
static void report_unmapped_ops(onnx_importer *im)
{
    const Onnx__GraphProto *g = im->model->graph;
    int64_t opset = onnx_model_default_opset(im->model);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *proto = g->node[i];
        const char *domain = proto->domain ? proto->domain : "";
        char label[512], why[256];
        onnx_node_label(proto, i, label, sizeof label);
        kiln_error ignored;
        if (domain[0] && strcmp(domain, "ai.onnx") != 0)
            snprintf(why, sizeof why, "unsupported op %s.%s (domain '%s' is not supported)", domain, proto->op_type,
                     domain);
        else if (onnx_find_mapping(proto->op_type, opset, why, sizeof why))
            continue;
        if (onnx_report_line(im, &ignored, "%s: %s", label, why) != KILN_OK)
            return;
    }
}

static kiln_status run_import(onnx_importer *im, const char *program_name, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    if (!g)
        return onnx_fail(err, KILN_ERR_MALFORMED, "the model has no graph");
    uint64_t expected = g->n_input + g->n_initializer + g->n_output;
    for (size_t i = 0; i < g->n_node; i++)
        expected += g->node[i]->n_output;
    if (!onnx_names_init(&im->by_onnx_name, expected) || !onnx_names_init(&im->kiln_names, g->n_input + g->n_initializer))
        return onnx_no_memory(err);
    im->dim_declared = calloc(im->options->dim_count + 1, sizeof *im->dim_declared);
    if (!im->dim_declared)
        return onnx_no_memory(err);
    kiln_status status = kiln_builder_new(program_name, &im->builder, err);
    if (status == KILN_OK && im->options->non_strict)
        status = kiln_builder_set_strict(im->builder, false, err);
    if (status == KILN_OK)
        status = record_metadata(im, err);
    if (status == KILN_OK)
        status = onnx_states_prepare(im, err);
    if (status == KILN_OK)
        status = add_initializers(im, err);
    if (status == KILN_OK) {
        status = onnx_graph_inputs_add(im, err);
        if (status == KILN_OK)
            status = onnx_states_declare(im, err);
        /* Without the declarations no node can be translated; the ops
         * kiln lacks are listed all the same, so that one attempt shows
         * everything standing in the way. */
        if (status == KILN_ERR_INVALID_ARGUMENT)
            report_unmapped_ops(im);
    }
    if (status == KILN_OK)
        status = collect_read_names(im, err);
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
                              const kiln_onnx_options *options, kiln_onnx_result *result, kiln_error *err)
{
    kiln_onnx_options no_options = {0};
    onnx_importer im = {.model = model, .options = options ? options : &no_options, .result = result,
                        .translate_symbolic = onnx_symbolic_translate};
    memset(result, 0, sizeof *result);
    if (im.options->limits)
        im.limits = *im.options->limits;
    else
        kiln_onnx_limits_default(&im.limits);
    kiln_status status = run_import(&im, program_name, err);
    if (status == KILN_OK) {
        result->builder = im.builder;
        im.builder = NULL;
    }
    result->unsupported = im.report;
    result->unsupported_count = im.report_count;
    onnx_importer_release(&im);
    return status;
}
