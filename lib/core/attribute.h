/*
 * attribute.h — typed node attributes: owned copies, their encoding in the
 * GRPH section, and their validation against what each op accepts.
 */
#ifndef KILN_LIB_ATTRIBUTE_H
#define KILN_LIB_ATTRIBUTE_H

#include "format/cursor.h"
#include <kiln/kiln.h>

/* An attribute owned by the model. */
typedef struct kiln_node_attribute {
    char *name;
    kiln_attribute_type type;
    int64_t i;
    double f;
    char *s;
    int64_t *ints;
    double *floats;
    uint32_t count;
} kiln_node_attribute;

/* An attribute an op accepts. */
typedef struct kiln_attribute_spec {
    const char *name;
    kiln_attribute_type type;
} kiln_attribute_spec;

void kiln_attribute_release(kiln_node_attribute *a);

/* The public form of an owned attribute, borrowing its storage. */
kiln_attribute kiln_attribute_view(const kiln_node_attribute *a);

/*
 * Copy public attributes into a fresh array sorted by name (the canonical
 * order the file stores), refusing NULLs, unknown types and duplicates.
 */
kiln_status kiln_attributes_copy(uint32_t count, const kiln_attribute *from, kiln_node_attribute **out,
                                 kiln_error *err);

void kiln_attributes_encode(kiln_writer *w, uint32_t count, const kiln_node_attribute *attributes);

kiln_status kiln_attributes_decode(kiln_reader *r, const kiln_limits *limits, uint32_t count,
                                   kiln_node_attribute *attributes, kiln_error *err);

/*
 * Check a node's attributes: sorted and unique by name, each accepted by
 * the op (`accepted`, NULL-name terminated; NULL = none) with its type.
 * `label` names the node in messages.
 */
kiln_status kiln_attributes_check(const char *label, const char *op, uint32_t count,
                                  const kiln_node_attribute *attributes, const kiln_attribute_spec *accepted,
                                  kiln_error *err);

/*
 * Where the op expects FLOAT (FLOATS) and an INT (INTS) was given, convert
 * it, so that builders may write `min=-1` for a float attribute. Stored
 * artifacts carry the expected type; the loader does not coerce.
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_attributes_coerce(uint32_t count, kiln_node_attribute *attributes,
                                   const kiln_attribute_spec *accepted, kiln_error *err);

/* The attribute called `name`, or NULL. (Types were checked against the op's spec.) */
const kiln_node_attribute *kiln_attribute_find(const kiln_node_attribute *attributes, uint32_t count,
                                               const char *name);

/* An INT attribute's value, or `fallback` when the node does not have it. */
int64_t kiln_attribute_int(const kiln_node_attribute *attributes, uint32_t count, const char *name,
                           int64_t fallback);

/* A FLOAT attribute's value, or `fallback` when the node does not have it. */
double kiln_attribute_float(const kiln_node_attribute *attributes, uint32_t count, const char *name,
                            double fallback);

#endif
