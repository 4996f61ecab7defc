/*
 * node_name.h — the rule for node names (spec/format.md §7.12): the name a
 * source framework gave a node ("/layer1/layer1.0/conv1/Conv"), kept as
 * metadata and shown by tools. Shown on terminals, in JSON and in Graphviz
 * labels, so a name is text: well-formed UTF-8 with no control character.
 */
#ifndef KILN_LIB_NODE_NAME_H
#define KILN_LIB_NODE_NAME_H

#include <stddef.h>

/* Longest node name, in bytes (ONNX exporters' names are far shorter). */
#define KILN_MAX_NODE_NAME 1024

/*
 * Judge `length` bytes at `name` as a node name.
 * @return NULL if they are one, else why not ("is empty", "is longer than
 *         1024 bytes", "is not well-formed UTF-8 at byte 3", "holds a control
 *         character at byte 0"), a static string.
 */
const char *kiln_node_name_problem(const char *name, size_t length);

#endif
