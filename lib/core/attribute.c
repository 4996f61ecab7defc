/* attribute.c — typed node attributes (see attribute.h). */
#include "attribute.h"

#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"

kiln_attribute kiln_attribute_view(const kiln_node_attribute *a)
{
    return (kiln_attribute){a->name, a->type, a->i, a->f, a->s, a->ints, a->floats, a->count};
}

void kiln_attribute_release(kiln_node_attribute *a)
{
    free(a->name);
    free(a->s);
    free(a->ints);
    free(a->floats);
    memset(a, 0, sizeof *a);
}

static bool known_type(kiln_attribute_type type)
{
    return type >= KILN_ATTRIBUTE_INT && type <= KILN_ATTRIBUTE_FLOATS;
}

static kiln_status copy_one(const kiln_attribute *from, kiln_node_attribute *to, kiln_error *err)
{
    if (!from->name || !from->name[0])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "an attribute has no name");
    if (!known_type(from->type))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "attribute '%s' has unknown type %d", from->name,
                         (int)from->type);
    to->type = from->type;
    to->i = from->i;
    to->f = from->f;
    to->count = 0;
    bool ok = (to->name = strdup(from->name)) != NULL;
    if (ok && from->type == KILN_ATTRIBUTE_STRING) {
        if (!from->s)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "attribute '%s': string is NULL", from->name);
        ok = (to->s = strdup(from->s)) != NULL;
    }
    if (ok && (from->type == KILN_ATTRIBUTE_INTS || from->type == KILN_ATTRIBUTE_FLOATS)) {
        const void *items = from->type == KILN_ATTRIBUTE_INTS ? (const void *)from->ints : (const void *)from->floats;
        if (from->count && !items)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "attribute '%s': list is NULL", from->name);
        size_t bytes = (size_t)from->count * 8;
        void *copy = malloc(bytes ? bytes : 1);
        ok = copy != NULL;
        if (ok && bytes)
            memcpy(copy, items, bytes);
        if (from->type == KILN_ATTRIBUTE_INTS)
            to->ints = copy;
        else
            to->floats = copy;
        to->count = from->count;
    }
    return ok ? KILN_OK : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for attributes");
}

static int compare_by_name(const void *a, const void *b)
{
    return strcmp(((const kiln_node_attribute *)a)->name, ((const kiln_node_attribute *)b)->name);
}

kiln_status kiln_attributes_copy(uint32_t count, const kiln_attribute *from, kiln_node_attribute **out,
                                 kiln_error *err)
{
    *out = NULL;
    if (count && !from)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "attributes is NULL");
    kiln_node_attribute *copy = calloc(count ? count : 1, sizeof *copy);
    if (!copy)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for attributes");
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; status == KILN_OK && i < count; i++)
        status = copy_one(&from[i], &copy[i], err);
    if (status == KILN_OK) {
        qsort(copy, count, sizeof *copy, compare_by_name);
        for (uint32_t i = 1; status == KILN_OK && i < count; i++)
            if (strcmp(copy[i - 1].name, copy[i].name) == 0)
                status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "attribute '%s' is given twice", copy[i].name);
    }
    if (status != KILN_OK) {
        for (uint32_t i = 0; i < count; i++)
            kiln_attribute_release(&copy[i]);
        free(copy);
        return status;
    }
    *out = copy;
    return KILN_OK;
}

void kiln_attributes_encode(kiln_writer *w, uint32_t count, const kiln_node_attribute *attributes)
{
    kiln_write_u32(w, count);
    for (uint32_t i = 0; i < count; i++) {
        const kiln_node_attribute *a = &attributes[i];
        kiln_write_string(w, a->name);
        kiln_write_u8(w, (uint8_t)a->type);
        switch (a->type) {
        case KILN_ATTRIBUTE_INT: kiln_write_i64(w, a->i); break;
        case KILN_ATTRIBUTE_FLOAT: kiln_write_f64(w, a->f); break;
        case KILN_ATTRIBUTE_STRING: kiln_write_string(w, a->s); break;
        case KILN_ATTRIBUTE_INTS:
            kiln_write_u32(w, a->count);
            for (uint32_t k = 0; k < a->count; k++)
                kiln_write_i64(w, a->ints[k]);
            break;
        case KILN_ATTRIBUTE_FLOATS:
            kiln_write_u32(w, a->count);
            for (uint32_t k = 0; k < a->count; k++)
                kiln_write_f64(w, a->floats[k]);
            break;
        }
    }
}

kiln_status kiln_attributes_decode(kiln_reader *r, const kiln_limits *limits, uint32_t count,
                                   kiln_node_attribute *attributes, kiln_error *err)
{
    for (uint32_t i = 0; i < count; i++) {
        kiln_node_attribute *a = &attributes[i];
        uint8_t type;
        KILN_TRY(kiln_read_string(r, limits->max_string_length, &a->name, err));
        KILN_TRY(kiln_read_u8(r, &type, err));
        if (!known_type((kiln_attribute_type)type))
            return kiln_fail(err, KILN_ERR_MALFORMED, "%s: attribute '%s' has unknown type %u", r->context, a->name,
                             type);
        a->type = (kiln_attribute_type)type;
        switch (a->type) {
        case KILN_ATTRIBUTE_INT: KILN_TRY(kiln_read_i64(r, &a->i, err)); break;
        case KILN_ATTRIBUTE_FLOAT: KILN_TRY(kiln_read_f64(r, &a->f, err)); break;
        case KILN_ATTRIBUTE_STRING: KILN_TRY(kiln_read_string(r, limits->max_string_length, &a->s, err)); break;
        case KILN_ATTRIBUTE_INTS:
        case KILN_ATTRIBUTE_FLOATS: {
            uint32_t n;
            KILN_TRY(kiln_read_count(r, limits->max_string_length, 8, "attribute values", &n, err));
            void *items = malloc(n ? (size_t)n * 8 : 1);
            if (!items)
                return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for attributes");
            if (a->type == KILN_ATTRIBUTE_INTS)
                a->ints = items;
            else
                a->floats = items;
            a->count = n;
            for (uint32_t k = 0; k < n; k++) {
                if (a->type == KILN_ATTRIBUTE_INTS)
                    KILN_TRY(kiln_read_i64(r, &a->ints[k], err));
                else
                    KILN_TRY(kiln_read_f64(r, &a->floats[k], err));
            }
            break;
        }
        }
    }
    return KILN_OK;
}

kiln_status kiln_attributes_check(const char *label, const char *op, uint32_t count,
                                  const kiln_node_attribute *attributes, const kiln_attribute_spec *accepted,
                                  kiln_error *err)
{
    for (uint32_t i = 0; i < count; i++) {
        const kiln_node_attribute *a = &attributes[i];
        if (i > 0 && strcmp(attributes[i - 1].name, a->name) >= 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attributes must be unique and sorted by name ('%s')",
                             label, a->name);
        const kiln_attribute_spec *spec = NULL;
        for (const kiln_attribute_spec *s = accepted; s && s->name; s++)
            if (strcmp(s->name, a->name) == 0)
                spec = s;
        if (!spec)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: op '%s' takes no attribute '%s'", label, op, a->name);
        if (spec->type != a->type)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' of op '%s' has the wrong type", label,
                             a->name, op);
    }
    return KILN_OK;
}

const kiln_node_attribute *kiln_attribute_find(const kiln_node_attribute *attributes, uint32_t count,
                                               const char *name)
{
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(attributes[i].name, name) == 0)
            return &attributes[i];
    return NULL;
}

int64_t kiln_attribute_int(const kiln_node_attribute *attributes, uint32_t count, const char *name,
                           int64_t fallback)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, name);
    return a && a->type == KILN_ATTRIBUTE_INT ? a->i : fallback;
}

double kiln_attribute_float(const kiln_node_attribute *attributes, uint32_t count, const char *name,
                            double fallback)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, name);
    return a && a->type == KILN_ATTRIBUTE_FLOAT ? a->f : fallback;
}

kiln_status kiln_attributes_coerce(uint32_t count, kiln_node_attribute *attributes,
                                   const kiln_attribute_spec *accepted, kiln_error *err)
{
    for (uint32_t i = 0; i < count; i++) {
        kiln_node_attribute *a = &attributes[i];
        const kiln_attribute_spec *spec = NULL;
        for (const kiln_attribute_spec *s = accepted; s && s->name; s++)
            if (strcmp(s->name, a->name) == 0)
                spec = s;
        if (!spec)
            continue;
        if (spec->type == KILN_ATTRIBUTE_FLOAT && a->type == KILN_ATTRIBUTE_INT) {
            a->f = (double)a->i;
            a->i = 0;
            a->type = KILN_ATTRIBUTE_FLOAT;
        } else if (spec->type == KILN_ATTRIBUTE_FLOATS && a->type == KILN_ATTRIBUTE_INTS) {
            double *floats = malloc(a->count ? (size_t)a->count * sizeof *floats : 1);
            if (!floats)
                return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for attributes");
            for (uint32_t k = 0; k < a->count; k++)
                floats[k] = (double)a->ints[k];
            free(a->ints);
            a->ints = NULL;
            a->floats = floats;
            a->type = KILN_ATTRIBUTE_FLOATS;
        }
    }
    return KILN_OK;
}
