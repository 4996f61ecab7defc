/*
 * onnx_nesting.h — how deep the messages of serialized protobuf bytes nest,
 * measured before protobuf-c unpacks them. protobuf-c's unpack (and its
 * free) recurse once per nested message with no limit of their own, and
 * ONNX nests without bound (an If's branch is a GraphProto inside an
 * AttributeProto inside a NodeProto inside a GraphProto, and a TypeProto's
 * sequence_type holds a TypeProto), so a small file could exhaust the stack.
 */
#ifndef KILN_ONNX_NESTING_H
#define KILN_ONNX_NESTING_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include <protobuf-c/protobuf-c.h>

/**
 * Walk `bytes` as a message of type `root` without recursion, descending
 * into every length-delimited field that `root`'s descriptors declare a
 * message (so exactly the fields protobuf-c's unpack recurses into), and
 * refuse when a message would be nested deeper than `max_depth` (the
 * top-level message is depth 1). `what` names the bytes in messages ("the
 * model"). Bytes that are not a well-formed protobuf encoding are refused
 * too: protobuf-c would refuse them.
 * @return KILN_OK; KILN_ERR_LIMIT naming the field that opens the level
 *         over the limit and kiln_onnx_limits.max_nesting_depth;
 *         KILN_ERR_MALFORMED; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status onnx_check_nesting(const ProtobufCMessageDescriptor *root, const uint8_t *bytes, size_t size,
                               uint32_t max_depth, const char *what, kiln_error *err);

#endif
