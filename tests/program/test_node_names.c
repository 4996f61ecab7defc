/*
 * test_node_names.c — node names (section NNAM, spec/format.md §7.12):
 * set through the builder, stored only when some node has one (so a
 * program without names is written as before, at its old minor), read
 * back by the loader, outside the program identity, refused by the
 * builder when they are not text, spelled by the text format; and every
 * corrupt NNAM refused with MALFORMED or LIMIT, never read past its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/text.h>

#include "format/container.h"
#include "format/cursor.h"
#include "model.h"
#include "section_node_names.h"
#include "sections.h"

/* y = -(2 * x) + x over x: f32[batch, 2], with the mul and neg named when `named`. */
static kiln_builder *small_program(bool named)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, two, product, negated, sum;
    assert_int_equal(kiln_builder_new("names", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 2, &two, &err), KILN_OK);
    kiln_value mul_operands[] = {x, two};
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, mul_operands, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &product, &negated, &err), KILN_OK);
    kiln_value add_operands[] = {negated, x};
    assert_int_equal(kiln_builder_add_op(b, "add", 2, add_operands, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", sum, &err), KILN_OK);
    if (named) {
        assert_int_equal(kiln_builder_set_node_name(b, product, "/layer1/layer1.0/conv1/Conv", &err), KILN_OK);
        assert_int_equal(kiln_builder_set_node_name(b, negated, "négation \xe2\x86\x92 코드", &err), KILN_OK);
    }
    return b;
}

typedef struct artifact {
    uint8_t *bytes;
    size_t size;
} artifact;

static artifact encode(const kiln_builder *b)
{
    artifact a;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b, NULL, (void **)&a.bytes, &a.size, &err), KILN_OK);
    return a;
}

static kiln_program *load(const artifact *a)
{
    kiln_program *p = NULL;
    kiln_error err;
    kiln_status status = kiln_program_load_memory(a->bytes, a->size, NULL, &p, NULL, &err);
    if (status != KILN_OK)
        fail_msg("load: %s", err.message);
    return p;
}

static bool has_section(const kiln_program *p, const char *type, bool *critical)
{
    for (uint32_t i = 0; i < kiln_program_section_count(p); i++) {
        kiln_section_info s;
        kiln_program_section(p, i, &s);
        if (strcmp(s.type, type) == 0) {
            *critical = s.critical;
            return true;
        }
    }
    return false;
}

static void names_round_trip_outside_the_identity(void **state)
{
    (void)state;
    kiln_builder *plain = small_program(false), *named = small_program(true);
    artifact a = encode(plain), b = encode(named);
    kiln_program *p = load(&a), *q = load(&b);
    uint16_t major, minor;
    bool critical = true;

    /* Without names: no NNAM, format 1.0, as before names existed. */
    kiln_program_format_version(p, &major, &minor);
    assert_int_equal(minor, 0);
    assert_false(has_section(p, "NNAM", &critical));
    assert_null(kiln_program_node_name(p, 0));

    /* With names: an ancillary NNAM, format 1.2, names read back per node. */
    kiln_program_format_version(q, &major, &minor);
    assert_int_equal(minor, 2);
    assert_true(has_section(q, "NNAM", &critical));
    assert_false(critical);
    assert_string_equal(kiln_program_node_name(q, 0), "/layer1/layer1.0/conv1/Conv");
    assert_string_equal(kiln_program_node_name(q, 1), "négation \xe2\x86\x92 코드");
    assert_null(kiln_program_node_name(q, 2));
    assert_null(kiln_program_node_name(q, 3)); /* out of range */

    /* Names are metadata: the architecture and the state are the same. */
    uint8_t one[32], other[32];
    kiln_program_identity(p, KILN_IDENTITY_PROGRAM, one);
    kiln_program_identity(q, KILN_IDENTITY_PROGRAM, other);
    assert_memory_equal(one, other, 32);
    kiln_program_identity(p, KILN_IDENTITY_STATE, one);
    kiln_program_identity(q, KILN_IDENTITY_STATE, other);
    assert_memory_equal(one, other, 32);

    kiln_program_free(p);
    kiln_program_free(q);
    free(a.bytes);
    free(b.bytes);
    kiln_builder_free(plain);
    kiln_builder_free(named);
}

static void builder_refuses_names_that_are_not_text(void **state)
{
    (void)state;
    kiln_builder *b = small_program(false);
    kiln_error err;
    char long_name[1026];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *bad[] = {"", "tab\there", "del\x7f", "c1 \xc2\x85", "cut \xe2\x86", "overlong \xc0\xaf",
                         "surrogate \xed\xa0\x80", long_name};
    kiln_value y = 4; /* the add: x, scalar_0, mul, neg, add */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(kiln_builder_set_node_name(b, y, bad[i], &err), KILN_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "node 2 (add): the name"));
    }
    long_name[1024] = '\0'; /* exactly 1024 bytes is allowed */
    assert_int_equal(kiln_builder_set_node_name(b, y, long_name, &err), KILN_OK);
    /* Inputs and weights are not nodes. */
    assert_int_equal(kiln_builder_set_node_name(b, 0, "x", &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "only nodes have names"));
    assert_int_equal(kiln_builder_set_node_name(b, 99, "x", &err), KILN_ERR_INVALID_ARGUMENT);
    /* NULL removes a name: the file is the unnamed one again. */
    assert_int_equal(kiln_builder_set_node_name(b, y, NULL, &err), KILN_OK);
    kiln_builder *plain = small_program(false);
    artifact a = encode(b), c = encode(plain);
    assert_int_equal(a.size, c.size);
    assert_memory_equal(a.bytes, c.bytes, a.size);
    free(a.bytes);
    free(c.bytes);
    kiln_builder_free(plain);
    kiln_builder_free(b);
}

static void text_spells_names_exactly(void **state)
{
    (void)state;
    kiln_builder *named = small_program(true);
    artifact a = encode(named);
    kiln_program *p = load(&a);
    char *text;
    kiln_error err;
    assert_int_equal(kiln_text_disassemble(p, NULL, &text, &err), KILN_OK);
    assert_non_null(strstr(text, "%0 = mul(x, scalar_0) name \"/layer1/layer1.0/conv1/Conv\"\n"));
    assert_non_null(strstr(text, "%1 = neg(%0) name \"négation \xe2\x86\x92 코드\"\n"));
    assert_non_null(strstr(text, "%2 = add(%1, x)\n"));
    kiln_builder *again;
    assert_int_equal(kiln_text_assemble(text, strlen(text), "names.ktxt", NULL, &again, &err), KILN_OK);
    artifact b = encode(again);
    kiln_builder_free(again);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.bytes, b.bytes, a.size);

    /* A name the builder refuses is an error at the name's string. */
    const char *bad = "kiln 1.0\nprogram \"t\"\ninput x: f32[2]\n%0 = neg(x) name \"\\x01\"\noutput y = %0\n";
    assert_int_equal(kiln_text_assemble(bad, strlen(bad), "bad.ktxt", NULL, &again, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "bad.ktxt:4:18:"));
    const char *missing = "kiln 1.0\nprogram \"t\"\ninput x: f32[2]\n%0 = neg(x) name neg\noutput y = %0\n";
    assert_int_equal(kiln_text_assemble(missing, strlen(missing), "m.ktxt", NULL, &again, &err), KILN_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "the node's name as a string after 'name'"));

    free(text);
    free(a.bytes);
    free(b.bytes);
    kiln_program_free(p);
    kiln_builder_free(named);
}

/* ------------------------------------------------ decoding NNAM itself */

/* A model with `nodes` nodes and nothing else: all NNAM's decoder looks at. */
static void model_with_nodes(kiln_model *m, uint32_t nodes)
{
    memset(m, 0, sizeof *m);
    m->nodes = calloc(nodes + 1, sizeof *m->nodes);
    assert_non_null(m->nodes);
    m->node_count = nodes;
}

static void model_free(kiln_model *m)
{
    for (uint32_t n = 0; n < m->node_count; n++)
        free(m->nodes[n].name);
    free(m->nodes);
}

static void put_string(kiln_writer *w, uint32_t length, const char *bytes)
{
    kiln_write_u32(w, length);
    kiln_write_bytes(w, bytes, strlen(bytes));
}

/* Decode `w`'s bytes against a 3-node model. */
static kiln_status decode_bytes(kiln_writer *w, kiln_model *m, kiln_error *err)
{
    kiln_limits limits;
    kiln_limits_default(&limits);
    model_with_nodes(m, 3);
    return kiln_node_names_decode(w->data, w->size, &limits, m, err);
}

static void expect_refused(kiln_writer *w, kiln_status expected, const char *message)
{
    kiln_model m;
    kiln_error err;
    kiln_status status = decode_bytes(w, &m, &err);
    if (status != expected || !strstr(err.message, message))
        fail_msg("expected %d '%s', got %d '%s'", expected, message, status, status ? err.message : "");
    model_free(&m);
    kiln_writer_release(w);
    kiln_writer_init(w);
}

static void corrupt_sections_are_refused(void **state)
{
    (void)state;
    kiln_writer w;
    kiln_model m;
    kiln_error err;
    kiln_writer_init(&w);

    /* Well-formed: two names, read back. */
    kiln_write_u32(&w, 2);
    kiln_write_u32(&w, 0);
    put_string(&w, 4, "conv");
    kiln_write_u32(&w, 2);
    put_string(&w, 4, "relu");
    assert_int_equal(decode_bytes(&w, &m, &err), KILN_OK);
    assert_string_equal(m.nodes[0].name, "conv");
    assert_null(m.nodes[1].name);
    assert_string_equal(m.nodes[2].name, "relu");
    model_free(&m);
    kiln_writer_release(&w);
    kiln_writer_init(&w);

    /* Empty section: not even a count. */
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    /* A count the bytes cannot hold, and one above the node count. */
    kiln_write_u32(&w, 1000);
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    kiln_write_u32(&w, 4);
    for (int i = 0; i < 4; i++) {
        kiln_write_u32(&w, (uint32_t)i);
        put_string(&w, 1, "n");
    }
    expect_refused(&w, KILN_ERR_MALFORMED, "names 4 nodes, but the graph has 3");
    /* A node index out of range. */
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 3);
    put_string(&w, 1, "n");
    expect_refused(&w, KILN_ERR_MALFORMED, "names node 3, but the graph has 3 nodes");
    /* The same node twice, and nodes out of order. */
    kiln_write_u32(&w, 2);
    kiln_write_u32(&w, 1);
    put_string(&w, 1, "a");
    kiln_write_u32(&w, 1);
    put_string(&w, 1, "b");
    expect_refused(&w, KILN_ERR_MALFORMED, "entry 1 names node 1 after node 1");
    kiln_write_u32(&w, 2);
    kiln_write_u32(&w, 2);
    put_string(&w, 1, "a");
    kiln_write_u32(&w, 0);
    put_string(&w, 1, "b");
    expect_refused(&w, KILN_ERR_MALFORMED, "entry 1 names node 0 after node 2");
    /* A string length past the end, and one above the name limit. */
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    put_string(&w, 200, "short");
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    kiln_write_u32(&w, 1025);
    kiln_write_zeros(&w, 1025);
    expect_refused(&w, KILN_ERR_LIMIT, "");
    /* Names that are not text. */
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    put_string(&w, 0, "");
    kiln_write_zeros(&w, 1); /* keeps the count plausible */
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    put_string(&w, 3, "a\x1b" "b");
    expect_refused(&w, KILN_ERR_MALFORMED, "the name of node 0 holds a control character");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    put_string(&w, 2, "\xff\xfe");
    expect_refused(&w, KILN_ERR_MALFORMED, "the name of node 0 is not well-formed UTF-8");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    kiln_write_u32(&w, 3);
    kiln_write_bytes(&w, "a\0b", 3);
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    /* Bytes left over. */
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, 0);
    put_string(&w, 1, "n");
    kiln_write_u8(&w, 0);
    expect_refused(&w, KILN_ERR_MALFORMED, "");
    kiln_writer_release(&w);
}

/*
 * Every truncation and every single-byte change of a well-formed NNAM
 * either decodes or fails with MALFORMED or LIMIT, never reading past the
 * section (the ASan build checks that) or leaking a name.
 */
static void every_truncation_and_byte_change_is_safe(void **state)
{
    (void)state;
    kiln_writer good;
    kiln_writer_init(&good);
    kiln_write_u32(&good, 2);
    kiln_write_u32(&good, 0);
    put_string(&good, 11, "/conv1/Conv");
    kiln_write_u32(&good, 2);
    put_string(&good, 9, "r\xc3\xa9lu/\xe2\x86\x92");
    kiln_limits limits;
    kiln_limits_default(&limits);
    kiln_model whole;
    kiln_error whole_err;
    model_with_nodes(&whole, 3);
    assert_int_equal(kiln_node_names_decode(good.data, good.size, &limits, &whole, &whole_err), KILN_OK);
    assert_string_equal(whole.nodes[2].name, "r\xc3\xa9lu/\xe2\x86\x92");
    model_free(&whole);
    uint8_t *bytes = malloc(good.size);
    assert_non_null(bytes);
    for (size_t cut = 0; cut <= good.size; cut++) {
        for (size_t at = 0; at <= cut; at++) {
            for (int flip = 0; flip < (at < cut ? 3 : 1); flip++) {
                static const uint8_t changes[] = {0x01, 0x80, 0xff};
                memcpy(bytes, good.data, cut);
                if (at < cut)
                    bytes[at] ^= changes[flip];
                kiln_model m;
                kiln_error err;
                model_with_nodes(&m, 3);
                kiln_status status = kiln_node_names_decode(bytes, cut, &limits, &m, &err);
                if (status != KILN_OK && status != KILN_ERR_MALFORMED && status != KILN_ERR_LIMIT)
                    fail_msg("cut %zu, byte %zu: status %d", cut, at, status);
                model_free(&m);
            }
        }
    }
    free(bytes);
    kiln_writer_release(&good);
}

/* Re-lay `a` out with its NNAM replaced by `payload` at `version`. */
static artifact with_nnam(const artifact *a, const kiln_writer *payload, uint16_t version)
{
    const kiln_container_limits wide = {UINT32_MAX, UINT64_MAX, UINT64_MAX};
    kiln_container c;
    kiln_error err;
    kiln_section_spec specs[16];
    assert_int_equal(kiln_container_parse(a->bytes, a->size, &wide, &c, &err), KILN_OK);
    for (uint32_t i = 0; i < c.section_count; i++) {
        specs[i] = (kiln_section_spec){.type = c.sections[i].type, .flags = c.sections[i].flags,
                                       .version = c.sections[i].version, .data = a->bytes + c.sections[i].offset,
                                       .size = (size_t)c.sections[i].stored_size};
        if (specs[i].type == KILN_SECTION_NNAM) {
            specs[i].data = payload->data;
            specs[i].size = payload->size;
            specs[i].version = version;
        }
    }
    kiln_writer out;
    kiln_writer_init(&out);
    assert_int_equal(kiln_container_encode_progress(specs, c.section_count, c.minor, 0, &out, NULL, &err), KILN_OK);
    kiln_container_release(&c);
    return (artifact){out.data, out.size};
}

static void loader_on_corrupt_and_newer_sections(void **state)
{
    (void)state;
    kiln_builder *named = small_program(true);
    artifact a = encode(named);
    kiln_writer payload;
    kiln_writer_init(&payload);
    kiln_write_u32(&payload, 1);
    kiln_write_u32(&payload, 7); /* the graph has 3 nodes */
    put_string(&payload, 1, "n");

    /* A corrupt NNAM refuses the file, naming the section. */
    artifact bad = with_nnam(&a, &payload, 1);
    kiln_program *p = NULL;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(bad.bytes, bad.size, NULL, &p, NULL, &err), KILN_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "section NNAM: entry 0 names node 7"));

    /* An NNAM of a newer version is skipped with a warning: the names go, the program stays. */
    artifact newer = with_nnam(&a, &payload, 2);
    assert_int_equal(kiln_program_load_memory(newer.bytes, newer.size, NULL, &p, NULL, &err), KILN_OK);
    assert_null(kiln_program_node_name(p, 0));
    kiln_program_free(p);

    kiln_writer_release(&payload);
    free(a.bytes);
    free(bad.bytes);
    free(newer.bytes);
    kiln_builder_free(named);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_round_trip_outside_the_identity),
        cmocka_unit_test(builder_refuses_names_that_are_not_text),
        cmocka_unit_test(text_spells_names_exactly),
        cmocka_unit_test(corrupt_sections_are_refused),
        cmocka_unit_test(every_truncation_and_byte_change_is_safe),
        cmocka_unit_test(loader_on_corrupt_and_newer_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
