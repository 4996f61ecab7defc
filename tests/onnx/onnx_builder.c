/* onnx_builder.c — see onnx_builder.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_builder.h"

static void **arena;
static size_t arena_count, arena_capacity;

static void *take(size_t size)
{
    if (arena_count == arena_capacity) {
        arena_capacity = arena_capacity ? arena_capacity * 2 : 64;
        arena = realloc(arena, arena_capacity * sizeof *arena);
        if (!arena)
            abort();
    }
    void *p = calloc(1, size ? size : 1);
    if (!p)
        abort();
    arena[arena_count++] = p;
    return p;
}

void onnx_arena_release(void)
{
    for (size_t i = 0; i < arena_count; i++)
        free(arena[i]);
    free(arena);
    arena = NULL;
    arena_count = arena_capacity = 0;
}

static char *text(const char *s)
{
    char *copy = take(strlen(s) + 1);
    strcpy(copy, s);
    return copy;
}

static size_t list_length(const void *const *list)
{
    size_t n = 0;
    while (list && list[n])
        n++;
    return n;
}

static char **text_list(const char *const *list, size_t *count)
{
    *count = list_length((const void *const *)list);
    char **copy = take(*count * sizeof *copy);
    for (size_t i = 0; i < *count; i++)
        copy[i] = text(list[i]);
    return copy;
}

Onnx__ValueInfoProto *onnx_value(const char *name, int32_t elem_type, size_t rank, const char *const *dims)
{
    Onnx__ValueInfoProto *v = take(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = text(name);
    v->type = take(sizeof *v->type);
    onnx__type_proto__init(v->type);
    v->type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    v->type->tensor_type = take(sizeof *v->type->tensor_type);
    onnx__type_proto__tensor__init(v->type->tensor_type);
    v->type->tensor_type->has_elem_type = 1;
    v->type->tensor_type->elem_type = elem_type;
    if (!dims)
        return v;
    Onnx__TensorShapeProto *shape = take(sizeof *shape);
    onnx__tensor_shape_proto__init(shape);
    shape->n_dim = rank;
    shape->dim = take(rank * sizeof *shape->dim);
    for (size_t a = 0; a < rank; a++) {
        Onnx__TensorShapeProto__Dimension *d = take(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        /* All digits: a size; anything else but "?" a dim_param ("batch", or an expression: "2*s3"). */
        if (dims[a][0] && strspn(dims[a], "0123456789") == strlen(dims[a])) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(dims[a], NULL, 10);
        } else if (strcmp(dims[a], "?") != 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = text(dims[a]);
        }
        shape->dim[a] = d;
    }
    v->type->tensor_type->shape = shape;
    return v;
}

static Onnx__AttributeProto *attribute(const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = take(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = text(name);
    a->has_type = 1;
    a->type = type;
    return a;
}

Onnx__AttributeProto *onnx_attr_int(const char *name, int64_t value)
{
    Onnx__AttributeProto *a = attribute(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = value;
    return a;
}

Onnx__AttributeProto *onnx_attr_float(const char *name, float value)
{
    Onnx__AttributeProto *a = attribute(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = value;
    return a;
}

Onnx__AttributeProto *onnx_attr_ints(const char *name, size_t count, const int64_t *values)
{
    Onnx__AttributeProto *a = attribute(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = count;
    a->ints = take(count * sizeof *a->ints);
    memcpy(a->ints, values, count * sizeof *values);
    return a;
}

Onnx__AttributeProto *onnx_attr_string(const char *name, const char *value)
{
    Onnx__AttributeProto *a = attribute(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(value);
    a->s.data = (uint8_t *)text(value);
    return a;
}

Onnx__NodeProto *onnx_node(const char *op, const char *name, const char *const *inputs,
                           const char *const *outputs, Onnx__AttributeProto *const *attributes)
{
    Onnx__NodeProto *n = take(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = text(op);
    n->name = text(name);
    n->input = text_list(inputs, &n->n_input);
    n->output = text_list(outputs, &n->n_output);
    n->n_attribute = list_length((const void *const *)attributes);
    n->attribute = take(n->n_attribute * sizeof *n->attribute);
    for (size_t i = 0; i < n->n_attribute; i++)
        n->attribute[i] = attributes[i];
    return n;
}

static Onnx__TensorProto *tensor(const char *name, int32_t type, size_t rank, const int64_t *dims)
{
    Onnx__TensorProto *t = take(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = text(name);
    t->has_data_type = 1;
    t->data_type = type;
    t->n_dims = rank;
    t->dims = take(rank * sizeof *t->dims);
    memcpy(t->dims, dims, rank * sizeof *dims);
    return t;
}

static size_t element_count(size_t rank, const int64_t *dims)
{
    size_t n = 1;
    for (size_t a = 0; a < rank; a++)
        n *= (size_t)dims[a];
    return n;
}

Onnx__TensorProto *onnx_tensor_f32(const char *name, size_t rank, const int64_t *dims, const float *data, int raw)
{
    Onnx__TensorProto *t = tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims);
    size_t n = element_count(rank, dims);
    if (raw) {
        t->has_raw_data = 1;
        t->raw_data.len = n * sizeof(float);
        t->raw_data.data = take(t->raw_data.len);
        memcpy(t->raw_data.data, data, t->raw_data.len);
    } else {
        t->n_float_data = n;
        t->float_data = take(n * sizeof(float));
        memcpy(t->float_data, data, n * sizeof(float));
    }
    return t;
}

Onnx__TensorProto *onnx_tensor_i64(const char *name, size_t rank, const int64_t *dims, const int64_t *data)
{
    Onnx__TensorProto *t = tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, rank, dims);
    size_t n = element_count(rank, dims);
    t->n_int64_data = n;
    t->int64_data = take(n * sizeof(int64_t));
    memcpy(t->int64_data, data, n * sizeof(int64_t));
    return t;
}

/* An arena copy of a NULL-terminated pointer list (callers pass compound literals). */
static void *copy_list(void *const *list, size_t *count)
{
    *count = list_length((const void *const *)list);
    void **copy = take(*count * sizeof *copy);
    for (size_t i = 0; i < *count; i++)
        copy[i] = list[i];
    return copy;
}

Onnx__ModelProto *onnx_model(int64_t ir_version, int64_t opset, Onnx__NodeProto *const *nodes,
                             Onnx__ValueInfoProto *const *inputs, Onnx__ValueInfoProto *const *outputs,
                             Onnx__TensorProto *const *initializers)
{
    Onnx__ModelProto *m = take(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = ir_version;
    m->producer_name = text("kiln-tests");
    m->producer_version = text("1.2.3");
    m->n_opset_import = 1;
    m->opset_import = take(sizeof *m->opset_import);
    m->opset_import[0] = take(sizeof **m->opset_import);
    onnx__operator_set_id_proto__init(m->opset_import[0]);
    m->opset_import[0]->domain = text("");
    m->opset_import[0]->has_version = 1;
    m->opset_import[0]->version = opset;
    Onnx__GraphProto *g = take(sizeof *g);
    onnx__graph_proto__init(g);
    g->name = text("test_graph");
    g->node = copy_list((void *const *)nodes, &g->n_node);
    g->input = copy_list((void *const *)inputs, &g->n_input);
    g->output = copy_list((void *const *)outputs, &g->n_output);
    g->initializer = copy_list((void *const *)initializers, &g->n_initializer);
    m->graph = g;
    return m;
}

uint8_t *onnx_pack(const Onnx__ModelProto *model, size_t *size)
{
    *size = onnx__model_proto__get_packed_size(model);
    uint8_t *bytes = take(*size);
    onnx__model_proto__pack(model, bytes);
    return bytes;
}

Onnx__ModelProto *onnx_deep_symbolic_chain(uint32_t adds)
{
    static const char *const dims[] = {"batch", "4"};
    static const int64_t one_shape[] = {1}, one_value[] = {1};
    Onnx__NodeProto **nodes = take((adds + 2) * sizeof *nodes);
    char in[32], out[32] = "s0";
    nodes[0] = onnx_node("Shape", "", (const char *const[]){"x", NULL}, (const char *const[]){"s0", NULL}, NULL);
    for (uint32_t i = 1; i <= adds; i++) {
        snprintf(in, sizeof in, "s%u", i - 1);
        snprintf(out, sizeof out, "s%u", i);
        nodes[i] = onnx_node("Add", "", (const char *const[]){in, "one", NULL}, (const char *const[]){out, NULL},
                             NULL);
    }
    nodes[adds + 1] = NULL;
    return onnx_model(8, 13, nodes, (Onnx__ValueInfoProto *const[]){onnx_value("x", 1, 2, dims), NULL},
                      (Onnx__ValueInfoProto *const[]){onnx_value(out, 7, 1, NULL), NULL},
                      (Onnx__TensorProto *const[]){onnx_tensor_i64("one", 1, one_shape, one_value), NULL});
}

/* Protobuf bytes written back to front: bytes[pos, capacity) holds what is written so far. */
typedef struct backward_writer {
    uint8_t *bytes;
    size_t pos;
    size_t capacity;
} backward_writer;

static void put_bytes(backward_writer *w, const void *data, size_t size)
{
    if (size > w->pos)
        abort(); /* the capacity estimate below was too small */
    w->pos -= size;
    memcpy(w->bytes + w->pos, data, size);
}

static void put_varint(backward_writer *w, uint64_t value)
{
    uint8_t encoded[10];
    size_t n = 0;
    do {
        encoded[n] = (uint8_t)(value & 0x7f);
        value >>= 7;
        if (value)
            encoded[n] |= 0x80;
        n++;
    } while (value);
    put_bytes(w, encoded, n);
}

/* A varint field: its value, then (before it) its tag. */
static void put_varint_field(backward_writer *w, uint32_t field, uint64_t value)
{
    put_varint(w, value);
    put_varint(w, (uint64_t)field << 3);
}

static void put_string_field(backward_writer *w, uint32_t field, const char *value)
{
    put_bytes(w, value, strlen(value));
    put_varint(w, strlen(value));
    put_varint(w, (uint64_t)field << 3 | 2);
}

/* Make everything written so far the value of length-delimited field `field`. */
static void wrap_field(backward_writer *w, uint32_t field)
{
    put_varint(w, w->capacity - w->pos);
    put_varint(w, (uint64_t)field << 3 | 2);
}

/* A message packed by protobuf-c (shallow ones only) as field `field`. */
static void put_message_field(backward_writer *w, uint32_t field, const ProtobufCMessage *message)
{
    size_t size = protobuf_c_message_get_packed_size(message);
    uint8_t *packed = take(size);
    protobuf_c_message_pack(message, packed);
    put_bytes(w, packed, size);
    put_varint(w, size);
    put_varint(w, (uint64_t)field << 3 | 2);
}

uint8_t *onnx_nested_if_bytes(uint32_t levels, size_t *size)
{
    /* Under 48 bytes per level (the fields below and three 3-byte lengths at 114 KB) and a few hundred around. */
    backward_writer w = {.capacity = (size_t)levels * 48 + 512};
    w.bytes = take(w.capacity);
    w.pos = w.capacity;
    /* Each nested message is the last field of its parent, so it ends where the bytes end. */
    put_string_field(&w, 2, "innermost");                  /* GraphProto.name */
    for (uint32_t level = 0; level < levels; level++) {
        wrap_field(&w, 6);                                 /* AttributeProto.g */
        put_varint_field(&w, 20, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
        put_string_field(&w, 1, "then_branch");
        wrap_field(&w, 5);                                 /* NodeProto.attribute */
        put_string_field(&w, 4, "If");
        put_string_field(&w, 2, "y");
        put_string_field(&w, 1, "c");
        wrap_field(&w, 1);                                 /* GraphProto.node */
    }
    put_message_field(&w, 12, &onnx_value("y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL)->base);
    const char *const scalar[] = {NULL};
    put_message_field(&w, 11, &onnx_value("c", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, scalar)->base);
    wrap_field(&w, 7);                                     /* ModelProto.graph */
    Onnx__OperatorSetIdProto opset;
    onnx__operator_set_id_proto__init(&opset);
    opset.has_version = 1;
    opset.version = 13;
    put_message_field(&w, 8, &opset.base);
    put_varint_field(&w, 1, 8);                            /* ModelProto.ir_version */
    *size = w.capacity - w.pos;
    return w.bytes + w.pos;
}
