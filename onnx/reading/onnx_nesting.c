/*
 * onnx_nesting.c — the nesting depth of protobuf bytes, by a linear scan
 * with an explicit stack (onnx_nesting.h says why).
 *
 * The scan follows protobuf-c 1.x's own reading of the wire format, so
 * that it descends wherever the unpack would recurse:
 *  - a tag is a varint of at most 5 bytes, field number and wire type in
 *    its low 32 bits, field number 0 refused (parse_tag_and_wiretype);
 *  - a length prefix is a varint of at most 5 bytes, and its data must lie
 *    inside the enclosing message (scan_length_prefixed_data);
 *  - a varint value is at most 10 bytes; groups (wire types 3 and 4) and
 *    wire types 6 and 7 are refused.
 * Which fields are messages comes from the descriptors protoc-c generated
 * from onnx.proto, not from a table kept beside it, so the scan cannot
 * drift from the schema. Unknown fields are skipped whole, as protobuf-c
 * keeps them as bytes without looking inside.
 *
 * Measured with protobuf-c 1.4.1 and an 8 MiB stack: its unpack takes
 * about 960 bytes of stack per level (2900 nested Ifs, 8702 levels,
 * decoded; 2950 crashed), so the 3000-level model of tests/fuzz/crashers/
 * onnx-nested-if-3000 (113 KB, 9002 levels) crashed the importer. The scan
 * refuses it at level 65, at byte 828.
 */
#include <stdlib.h>

#include "onnx_error.h"
#include "onnx_nesting.h"

/* One open message: its type and where its bytes end. */
typedef struct nesting_frame {
    const ProtobufCMessageDescriptor *type;
    size_t end;
} nesting_frame;

/* Read a varint of at most `max_bytes` bytes at bytes[*pos], before `end`. */
static bool read_varint(const uint8_t *bytes, size_t *pos, size_t end, unsigned max_bytes, uint64_t *out)
{
    uint64_t value = 0;
    for (unsigned i = 0; i < max_bytes && *pos < end; i++) {
        uint8_t byte = bytes[(*pos)++];
        value |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *out = value;
            return true;
        }
    }
    return false;
}

static kiln_status malformed(kiln_error *err, const char *what, size_t at, const char *problem)
{
    return onnx_fail(err, KILN_ERR_MALFORMED, "%s does not decode as protobuf: %s at byte %zu", what, problem, at);
}

/*
 * Skip the value of a field of wire type `wire` at bytes[*pos], or, when it
 * is a message, report its end in *message_end (and leave *pos at its start).
 */
static kiln_status skip_or_open(const uint8_t *bytes, size_t *pos, size_t end, unsigned wire, bool is_message,
                                size_t *message_end, const char *what, kiln_error *err)
{
    size_t at = *pos;
    uint64_t value;
    *message_end = 0;
    switch (wire) {
    case 0: /* varint */
        if (!read_varint(bytes, pos, end, 10, &value))
            return malformed(err, what, at, "a truncated or overlong varint");
        return KILN_OK;
    case 1: /* 64-bit */
    case 5: /* 32-bit */
        if (end - *pos < (wire == 1 ? 8u : 4u))
            return malformed(err, what, at, "a truncated fixed-size value");
        *pos += wire == 1 ? 8 : 4;
        return KILN_OK;
    case 2: /* length-delimited */
        if (!read_varint(bytes, pos, end, 5, &value))
            return malformed(err, what, at, "a truncated or overlong length");
        if (value > end - *pos)
            return malformed(err, what, at, "a length running past the end of its message");
        if (is_message)
            *message_end = *pos + (size_t)value;
        else
            *pos += (size_t)value;
        return KILN_OK;
    default: return malformed(err, what, at, "a group or an unknown wire type");
    }
}

/* Make room for one more frame than `count`; the stack grows only with the nesting the bytes really have. */
static bool reserve_frame(nesting_frame **stack, size_t *capacity, size_t count)
{
    if (count < *capacity)
        return true;
    size_t wanted = *capacity ? *capacity * 2 : 16;
    nesting_frame *grown = realloc(*stack, wanted * sizeof **stack);
    if (!grown)
        return false;
    *stack = grown;
    *capacity = wanted;
    return true;
}

kiln_status onnx_check_nesting(const ProtobufCMessageDescriptor *root, const uint8_t *bytes, size_t size,
                               uint32_t max_depth, const char *what, kiln_error *err)
{
    if (max_depth < 1)
        return onnx_fail(err, KILN_ERR_LIMIT,
                         "%s is a message, over kiln_onnx_limits.max_nesting_depth = 0 (it must be at least 1)",
                         what);
    nesting_frame *stack = NULL;
    size_t capacity = 0, depth = 0, pos = 0;
    if (!reserve_frame(&stack, &capacity, depth))
        return onnx_no_memory(err);
    stack[depth++] = (nesting_frame){root, size};
    kiln_status status = KILN_OK;
    while (status == KILN_OK && depth > 0) {
        const nesting_frame *top = &stack[depth - 1];
        if (pos == top->end) {
            depth--;
            continue;
        }
        size_t at = pos;
        uint64_t tag = 0;
        bool read = read_varint(bytes, &pos, top->end, 5, &tag);
        unsigned wire = (unsigned)(tag & 7);
        unsigned number = (unsigned)(tag >> 3); /* 35 bits at most, so 32 after the shift */
        if (!read || number == 0) {
            status = malformed(err, what, at, "a bad field tag");
            break;
        }
        const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(top->type, number);
        /* Only a length-delimited value of a message field is unpacked as a message. */
        bool is_message = field && field->type == PROTOBUF_C_TYPE_MESSAGE && wire == 2;
        size_t message_end;
        status = skip_or_open(bytes, &pos, top->end, wire, is_message, &message_end, what, err);
        if (status != KILN_OK || !is_message)
            continue;
        if (depth + 1 > max_depth) {
            status = onnx_fail(err, KILN_ERR_LIMIT,
                               "%s nests messages deeper than the limit of %u: field '%s' of %s at byte %zu opens "
                               "level %zu (each If/Loop/Scan subgraph adds 3 levels); raise "
                               "kiln_onnx_limits.max_nesting_depth if the model is genuine",
                               what, max_depth, field->name, top->type->name, at, depth + 1);
            break;
        }
        if (!reserve_frame(&stack, &capacity, depth)) {
            status = onnx_no_memory(err);
            break;
        }
        stack[depth++] = (nesting_frame){field->descriptor, message_end};
    }
    free(stack);
    return status;
}
