/* section_methods.c — see section_methods.h. */
#include "section_methods.h"

#include "required_features.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format/hashing.h"
#include "identifier.h"
#include "section_checks.h"
#include "section_dims.h"
#include "section_evidence.h"
#include "section_graph.h"
#include "section_io_signature.h"
#include "section_node_names.h"
#include "section_plan.h"
#include "section_runtime_guards.h"
#include "sections.h"

/*
 * The parts a method may have, in the order the writer stores them (and a
 * reader requires: one encoding per method), whether each is required and
 * whether the program identity covers it (the contract: not the evidence,
 * names or plan, which may change without changing what the method means).
 */
enum { DIMS, IOSG, CHKS, RGRD, GRPH, NNAM, EVID, PLAN, PART_COUNT };

static const struct {
    uint32_t type;
    bool required;
    bool in_identity;
} parts[PART_COUNT] = {
    [DIMS] = {KILN_SECTION_DIMS, true, true},   [IOSG] = {KILN_SECTION_IOSG, true, true},
    [CHKS] = {KILN_SECTION_CHKS, false, true},  [RGRD] = {KILN_SECTION_RGRD, false, true},
    [GRPH] = {KILN_SECTION_GRPH, true, true},   [NNAM] = {KILN_SECTION_NNAM, false, false},
    [EVID] = {KILN_SECTION_EVID, false, false}, [PLAN] = {KILN_SECTION_PLAN, false, false},
};

/* type 4 + size 8 */
#define PART_HEADER_SIZE 12

/* Which parts `method` has: the required ones, and the others when it holds what they hold. */
static void parts_present(const kiln_model *method, bool store_memory_plan, bool present[PART_COUNT])
{
    for (int k = 0; k < PART_COUNT; k++)
        present[k] = parts[k].required;
    present[CHKS] = method->check_count > 0;
    present[RGRD] = method->non_strict;
    present[NNAM] = kiln_node_names_present(method);
    present[EVID] = method->evidence_count > 0;
    present[PLAN] = store_memory_plan;
}

/* `with_relations`: the file sets feature bit 1, so every DIMS part ends with its relations. */
static kiln_status encode_part(const kiln_model *method, int kind, bool with_relations, kiln_writer *w,
                               kiln_error *err)
{
    switch (kind) {
    case DIMS: kiln_dims_encode(method, with_relations, w); break;
    case IOSG: kiln_io_signature_encode(method, w); break;
    case CHKS: kiln_input_checks_encode(method, w); break;
    case RGRD: kiln_runtime_guards_encode(method, w); break;
    case GRPH: kiln_graph_encode(method, w); break;
    case NNAM: kiln_node_names_encode(method, w); break;
    case EVID: kiln_evidence_encode(method, w); break;
    case PLAN: return kiln_stored_plan_encode(method, w, err);
    default: break;
    }
    return KILN_OK;
}

kiln_status kiln_methods_encode(const kiln_model *m, bool store_memory_plan, kiln_writer *w, kiln_error *err)
{
    bool with_relations = kiln_model_declares_relations(m);
    kiln_write_u32(w, m->method_count + 1);
    kiln_write_string(w, kiln_model_method_name(m));
    for (uint32_t i = 0; i < m->method_count; i++) {
        const kiln_model *method = &m->methods[i];
        bool present[PART_COUNT];
        parts_present(method, store_memory_plan, present);
        uint32_t count = 0;
        for (int k = 0; k < PART_COUNT; k++)
            count += present[k];
        kiln_write_string(w, kiln_model_method_name(method));
        kiln_write_u32(w, count);
        for (int k = 0; k < PART_COUNT; k++) {
            if (!present[k])
                continue;
            kiln_writer part;
            kiln_writer_init(&part);
            kiln_status status = encode_part(method, k, with_relations, &part, err);
            if (status == KILN_OK)
                status = kiln_writer_finish(&part, err);
            if (status == KILN_OK) {
                kiln_write_u32(w, parts[k].type);
                kiln_write_u64(w, part.size);
                kiln_write_bytes(w, part.data, part.size);
            }
            kiln_writer_release(&part);
            KILN_TRY(status);
        }
    }
    return kiln_writer_finish(w, err);
}

/* Where each part of one method lies in the section's bytes. */
typedef struct method_parts {
    const uint8_t *data[PART_COUNT];
    uint64_t size[PART_COUNT];
    bool present[PART_COUNT];
} method_parts;

/* A method name: an identifier, unique among the program's methods (those before `index`). */
static kiln_status check_method_name(const kiln_model *m, uint32_t index, const char *name, kiln_error *err)
{
    if (!kiln_is_identifier(name))
        return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD: the name of method %u, '%s', is not an identifier",
                         index, name);
    if (strcmp(name, kiln_model_method_name(m)) == 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD: method %u is named '%s' like method 0", index, name);
    for (uint32_t i = 0; i + 1 < index; i++)
        if (strcmp(name, m->methods[i].method_name) == 0)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD: methods %u and %u are both named '%s'", i + 1,
                             index, name);
    return KILN_OK;
}

/* Read one method's part table: known types, in the writer's order, each at most once, the required ones present. */
static kiln_status read_parts(kiln_reader *r, const char *name, method_parts *out, kiln_error *err)
{
    memset(out, 0, sizeof *out);
    uint32_t count;
    KILN_TRY(kiln_read_count(r, PART_COUNT, PART_HEADER_SIZE, "method parts", &count, err));
    int previous = -1;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t type;
        uint64_t size;
        KILN_TRY(kiln_read_u32(r, &type, err));
        KILN_TRY(kiln_read_u64(r, &size, err));
        int kind = -1;
        for (int k = 0; k < PART_COUNT; k++)
            if (parts[k].type == type)
                kind = k;
        char text[5];
        kiln_fourcc_text(type, text);
        if (kind < 0)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section MTHD: method '%s' has a part of type '%s'; a method's parts are DIMS, IOSG, "
                             "CHKS, RGRD, GRPH, NNAM, EVID and PLAN", name, text);
        if (kind <= previous)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section MTHD: method '%s' has its %s part out of order or twice (the order is DIMS, "
                             "IOSG, CHKS, RGRD, GRPH, NNAM, EVID, PLAN)", name, text);
        previous = kind;
        if (size > kiln_reader_remaining(r))
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section MTHD: method '%s''s %s part claims %llu bytes, %zu remain", name, text,
                             (unsigned long long)size, kiln_reader_remaining(r));
        KILN_TRY(kiln_read_bytes(r, (size_t)size, &out->data[kind], err));
        out->size[kind] = size;
        out->present[kind] = true;
    }
    for (int k = 0; k < PART_COUNT; k++) {
        char text[5];
        kiln_fourcc_text(parts[k].type, text);
        if (parts[k].required && !out->present[k])
            return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD: method '%s' has no %s part", name, text);
    }
    return KILN_OK;
}

/* Decode one part of `method` by its section type's decoder. */
static kiln_status decode_part(int kind, const method_parts *at, const kiln_limits *limits, uint64_t features,
                               kiln_model *method, struct kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    const uint8_t *data = at->data[kind];
    size_t size = (size_t)at->size[kind];
    switch (kind) {
    case DIMS: return kiln_dims_decode(data, size, limits, features, method, err);
    case IOSG: return kiln_io_signature_decode(data, size, limits, features, method, report, unsupported, err);
    case CHKS: return kiln_input_checks_decode(data, size, limits, method, err);
    case RGRD: return kiln_runtime_guards_decode(data, size, limits, method, err);
    case GRPH: return kiln_graph_decode(data, size, limits, method, err);
    case NNAM: return kiln_node_names_decode(data, size, limits, method, err);
    case EVID: return kiln_evidence_decode(data, size, limits, method, err);
    case PLAN: return kiln_stored_plan_decode(data, size, limits, method, err);
    default: return KILN_OK;
    }
}

/* A name as the section stores it (u32 length, bytes), into the identity's digest. */
static void hash_name(kiln_blake2b_state *digest, const char *name)
{
    uint8_t length[4];
    kiln_store_u32(length, (uint32_t)strlen(name));
    kiln_blake2b_256_update(digest, length, sizeof length);
    kiln_blake2b_256_update(digest, (const uint8_t *)name, strlen(name));
}

kiln_status kiln_methods_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                                kiln_model *m, struct kiln_report *report, uint32_t *unsupported,
                                uint8_t contract_digest[KILN_DIGEST_SIZE], kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section MTHD");
    uint32_t count;
    /* name 4 + 1, part count 4, three part headers: 41 bytes per further method at least. */
    KILN_TRY(kiln_read_count(&r, limits->max_methods, 5, "methods", &count, err));
    if (count < 2)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section MTHD declares %u method(s); a program with one method has no MTHD section", count);
    KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->method_name, err));
    if (!kiln_is_identifier(m->method_name))
        return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD: the name of method 0, '%s', is not an identifier",
                         m->method_name);
    if ((size_t)(count - 1) > kiln_reader_remaining(&r) / 41)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section MTHD declares %u methods in %zu bytes", count,
                         kiln_reader_remaining(&r));
    m->methods = calloc(count - 1, sizeof *m->methods);
    if (!m->methods)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for %u methods", count);
    kiln_blake2b_state digest;
    kiln_blake2b_256_init(&digest);
    hash_name(&digest, m->method_name);
    for (uint32_t i = 1; i < count; i++) {
        char *name;
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &name, err));
        kiln_model *method = &m->methods[i - 1];
        kiln_model_method_init(method, m, name); /* owns the name from here */
        m->method_count++;
        KILN_TRY(check_method_name(m, i, name, err));
        method_parts at;
        KILN_TRY(read_parts(&r, name, &at, err));
        /* The root's order: the required parts, then the optional ones as section_decode.c reads them. */
        static const int order[] = {DIMS, IOSG, GRPH, EVID, CHKS, PLAN, RGRD, NNAM};
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
            if (at.present[order[k]])
                /* A part's decoder speaks of "section X": say which method's part it was. */
                KILN_TRY(kiln_fail_within(
                    err, decode_part(order[k], &at, limits, features, method, report, unsupported, err),
                    "method '%s'", name));
        hash_name(&digest, name);
        for (int k = 0; k < PART_COUNT; k++) {
            if (!at.present[k] || !parts[k].in_identity)
                continue;
            uint8_t header[PART_HEADER_SIZE];
            kiln_store_u32(header, parts[k].type);
            kiln_store_u64(header + 4, at.size[k]);
            kiln_blake2b_256_update(&digest, header, sizeof header);
            kiln_blake2b_256_update(&digest, at.data[k], at.size[k]);
        }
    }
    kiln_blake2b_256_final(&digest, contract_digest);
    return kiln_reader_expect_end(&r, err);
}

/* Copy a stored name (u32 length, bytes) from `r` to `w`; *name its bytes (not terminated) and length. */
static kiln_status copy_name(kiln_reader *r, kiln_writer *w, const uint8_t **name, uint32_t *length, kiln_error *err)
{
    KILN_TRY(kiln_read_u32(r, length, err));
    KILN_TRY(kiln_read_bytes(r, *length, name, err));
    kiln_write_u32(w, *length);
    kiln_write_bytes(w, *name, *length);
    return KILN_OK;
}

static int part_kind(uint32_t type)
{
    for (int k = 0; k < PART_COUNT; k++)
        if (parts[k].type == type)
            return k;
    return -1;
}

kiln_status kiln_methods_replace_part(const uint8_t *data, size_t size, const char *method, uint32_t type,
                                      const kiln_writer *part, kiln_writer *out, kiln_error *err)
{
    int kind = part_kind(type);
    if (kind < 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "a method has no part of that type");
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section MTHD");
    uint32_t count, length, found = 0;
    const uint8_t *name;
    KILN_TRY(kiln_read_u32(&r, &count, err));
    kiln_write_u32(out, count);
    KILN_TRY(copy_name(&r, out, &name, &length, err));
    for (uint32_t i = 1; i < count; i++) {
        KILN_TRY(copy_name(&r, out, &name, &length, err));
        bool target = length == strlen(method) && memcmp(name, method, length) == 0;
        method_parts at;
        KILN_TRY(read_parts(&r, method, &at, err));
        if (target) {
            found++;
            at.present[kind] = part != NULL;
            at.data[kind] = part ? part->data : NULL;
            at.size[kind] = part ? part->size : 0;
        }
        uint32_t parts_now = 0;
        for (int k = 0; k < PART_COUNT; k++)
            parts_now += at.present[k];
        kiln_write_u32(out, parts_now);
        for (int k = 0; k < PART_COUNT; k++) {
            if (!at.present[k])
                continue;
            kiln_write_u32(out, parts[k].type);
            kiln_write_u64(out, at.size[k]);
            kiln_write_bytes(out, at.data[k], (size_t)at.size[k]);
        }
    }
    KILN_TRY(kiln_reader_expect_end(&r, err));
    if (!found)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "section MTHD has no further method '%s'", method);
    return kiln_writer_finish(out, err);
}
