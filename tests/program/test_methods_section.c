/*
 * test_methods_section.c — the MTHD section (spec/format.md §7.13), and
 * the STAT section and DIMS relations of format 1.3 (§7.14, §7.3): each
 * decode rule refused with its message, the error naming the method whose
 * part failed, every truncation and byte change of a well-formed MTHD (and STAT and DIMS)
 * either loading or refused cleanly (never reading past the section: the
 * ASan build checks), and a runtime that reads no MTHD refusing the file
 * as an unknown critical section; and the same of the GENV section of
 * generation cases (§7.15), which such a runtime skips.
 *
 * Usage: test_methods_section GOLDEN_1_3_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "format/container.h"
#include "format/cursor.h"
#include "sections.h"
#include "seed_program.h"

static const char *golden_dir;

typedef struct artifact {
    uint8_t *bytes;
    size_t size;
} artifact;

/* The bytes of golden artifact `file` of format 1.3. */
static artifact golden_file(const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", golden_dir, file);
    artifact a;
    a.bytes = read_file_bytes(path, &a.size);
    return a;
}

/* The golden two-method artifact's bytes. */
static artifact golden(void)
{
    return golden_file("methods.kiln");
}

/* The raw bytes of section `type` of `a` (a view into a->bytes; uncompressed). */
static const uint8_t *section_of(const artifact *a, uint32_t type, size_t *size)
{
    const kiln_container_limits wide = {UINT32_MAX, UINT64_MAX, UINT64_MAX};
    kiln_container c;
    kiln_error err;
    assert_int_equal(kiln_container_parse(a->bytes, a->size, &wide, &c, &err), KILN_OK);
    int64_t index = kiln_container_find(&c, type);
    assert_true(index >= 0);
    const uint8_t *data = a->bytes + c.sections[index].offset;
    *size = (size_t)c.sections[index].stored_size;
    kiln_container_release(&c);
    return data;
}

/* `a` laid out again with section `type` replaced by `payload` (or, with type_as, retyped to `type_as`). */
static artifact with_section(const artifact *a, uint32_t type, const uint8_t *payload, size_t size,
                             uint32_t type_as)
{
    const kiln_container_limits wide = {UINT32_MAX, UINT64_MAX, UINT64_MAX};
    kiln_container c;
    kiln_error err;
    kiln_section_spec specs[16];
    assert_int_equal(kiln_container_parse(a->bytes, a->size, &wide, &c, &err), KILN_OK);
    assert_true(c.section_count <= 16);
    for (uint32_t i = 0; i < c.section_count; i++) {
        specs[i] = (kiln_section_spec){.type = c.sections[i].type, .flags = c.sections[i].flags,
                                       .version = c.sections[i].version, .data = a->bytes + c.sections[i].offset,
                                       .size = (size_t)c.sections[i].stored_size};
        if (specs[i].type == type) {
            specs[i].data = payload;
            specs[i].size = size;
            if (type_as)
                specs[i].type = type_as;
        }
    }
    kiln_writer out;
    kiln_writer_init(&out);
    assert_int_equal(kiln_container_encode_progress(specs, c.section_count, c.minor, c.features, &out, NULL, &err),
                     KILN_OK);
    kiln_container_release(&c);
    return (artifact){out.data, out.size};
}

static kiln_status load(const artifact *a, kiln_error *err)
{
    kiln_program *p = NULL;
    kiln_status status = kiln_program_load_memory(a->bytes, a->size, NULL, &p, NULL, err);
    kiln_program_free(p);
    return status;
}

/* The further method of the golden MTHD, as its parts: type and bytes, in file order. */
typedef struct part {
    uint32_t type;
    const uint8_t *data;
    uint64_t size;
} part;

typedef struct golden_methods {
    artifact file;
    part parts[8];
    uint32_t part_count;
} golden_methods;

/* Read the golden MTHD (count 2, "prefill", then "decode" with its parts) into its parts. */
static void read_golden(golden_methods *g)
{
    g->file = golden();
    size_t size;
    const uint8_t *mthd = section_of(&g->file, KILN_SECTION_MTHD, &size);
    kiln_reader r;
    kiln_error err;
    uint32_t count, length;
    const uint8_t *skip;
    kiln_reader_init(&r, mthd, size, "MTHD");
    assert_int_equal(kiln_read_u32(&r, &count, &err), KILN_OK);
    assert_int_equal(count, 2);
    assert_int_equal(kiln_read_u32(&r, &length, &err), KILN_OK);
    assert_int_equal(kiln_read_bytes(&r, length, &skip, &err), KILN_OK);
    assert_memory_equal(skip, "prefill", 7);
    assert_int_equal(kiln_read_u32(&r, &length, &err), KILN_OK);
    assert_int_equal(kiln_read_bytes(&r, length, &skip, &err), KILN_OK);
    assert_memory_equal(skip, "decode", 6);
    assert_int_equal(kiln_read_u32(&r, &g->part_count, &err), KILN_OK);
    assert_true(g->part_count == 5); /* DIMS, IOSG, GRPH, NNAM, EVID */
    for (uint32_t i = 0; i < g->part_count; i++) {
        part *p = &g->parts[i];
        assert_int_equal(kiln_read_u32(&r, &p->type, &err), KILN_OK);
        assert_int_equal(kiln_read_u64(&r, &p->size, &err), KILN_OK);
        assert_int_equal(kiln_read_bytes(&r, (size_t)p->size, &p->data, &err), KILN_OK);
    }
    assert_int_equal(kiln_reader_expect_end(&r, &err), KILN_OK);
}

static void put_name(kiln_writer *w, const char *name)
{
    kiln_write_u32(w, (uint32_t)strlen(name));
    kiln_write_bytes(w, name, strlen(name));
}

/* An MTHD with method 0 `first` and one further method `name` of the parts `order` picks (-1 ends it). */
static void build_methods(kiln_writer *w, const golden_methods *g, uint32_t count, const char *first,
                          const char *name, const int *order)
{
    kiln_writer_init(w);
    kiln_write_u32(w, count);
    put_name(w, first);
    put_name(w, name);
    uint32_t parts = 0;
    while (order[parts] >= 0)
        parts++;
    kiln_write_u32(w, parts);
    for (uint32_t i = 0; i < parts; i++) {
        const part *p = &g->parts[order[i]];
        kiln_write_u32(w, p->type);
        kiln_write_u64(w, p->size);
        kiln_write_bytes(w, p->data, (size_t)p->size);
    }
}

/* Load the golden file with MTHD = `w`; expect `status` and a message containing `message`. */
static void expect_load(const golden_methods *g, kiln_writer *w, kiln_status status, const char *message)
{
    artifact a = with_section(&g->file, KILN_SECTION_MTHD, w->data, w->size, 0);
    kiln_error err;
    kiln_status got = load(&a, &err);
    if (got != status || (message && !strstr(err.message, message)))
        fail_msg("expected status %d with \"%s\", got %d: %s", status, message ? message : "", got,
                 got == KILN_OK ? "" : err.message);
    free(a.bytes);
    kiln_writer_release(w);
}

static void each_decode_rule_is_refused_by_name(void **state)
{
    (void)state;
    golden_methods g;
    read_golden(&g);
    kiln_writer w;
    static const int all[] = {0, 1, 2, 3, 4, -1};
    build_methods(&w, &g, 2, "prefill", "decode", all);
    expect_load(&g, &w, KILN_OK, NULL); /* the golden section, rebuilt: the builder above is right */

    build_methods(&w, &g, 1, "prefill", "decode", all);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "declares 1 method(s); a program with one method has no MTHD");
    build_methods(&w, &g, 3, "prefill", "decode", all);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "section MTHD");
    build_methods(&w, &g, 65, "prefill", "decode", all);
    expect_load(&g, &w, KILN_ERR_LIMIT, "methods");
    build_methods(&w, &g, 2, "prefill", "prefill", all);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "method 1 is named 'prefill' like method 0");
    build_methods(&w, &g, 2, "pre fill", "decode", all);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "the name of method 0, 'pre fill', is not an identifier");
    build_methods(&w, &g, 2, "prefill", "1decode", all);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "'1decode', is not an identifier");
    static const int no_graph[] = {0, 1, 3, 4, -1};
    build_methods(&w, &g, 2, "prefill", "decode", no_graph);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "method 'decode' has no GRPH part");
    static const int swapped[] = {1, 0, 2, 3, 4, -1};
    build_methods(&w, &g, 2, "prefill", "decode", swapped);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "method 'decode' has its DIMS part out of order or twice");
    static const int twice[] = {0, 1, 2, 2, -1};
    build_methods(&w, &g, 2, "prefill", "decode", twice);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "its GRPH part out of order or twice");

    /* A part of a type a method does not have. */
    kiln_writer_init(&w);
    kiln_write_u32(&w, 2);
    put_name(&w, "prefill");
    put_name(&w, "decode");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, KILN_SECTION_WTAB);
    kiln_write_u64(&w, 0);
    kiln_write_zeros(&w, 40); /* the section is long enough for one method */
    expect_load(&g, &w, KILN_ERR_MALFORMED, "method 'decode' has a part of type 'WTAB'");
    /* A part claiming more bytes than remain. */
    kiln_writer_init(&w);
    kiln_write_u32(&w, 2);
    put_name(&w, "prefill");
    put_name(&w, "decode");
    kiln_write_u32(&w, 1);
    kiln_write_u32(&w, KILN_SECTION_DIMS);
    kiln_write_u64(&w, UINT64_MAX);
    kiln_write_zeros(&w, 40);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "part claims 18446744073709551615 bytes, 40 remain");
    /* A part its own decoder refuses: the message names the method. */
    part broken = g.parts[2];
    broken.size--;
    g.parts[7] = broken;
    static const int short_graph[] = {0, 1, 7, -1};
    build_methods(&w, &g, 2, "prefill", "decode", short_graph);
    expect_load(&g, &w, KILN_ERR_MALFORMED, "method 'decode': ");
    free(g.file.bytes);
}

/*
 * Every truncation and single-byte change of section `type` of golden
 * artifact `file` (its hash recomputed, so the decoder sees it) loads or
 * is refused with a clean error, never a crash or a read past the section
 * (ASan).
 */
static void damage_is_safe(const char *file, uint32_t type)
{
    artifact a = golden_file(file);
    size_t size;
    const uint8_t *section = section_of(&a, type, &size);
    uint8_t *bytes = malloc(size);
    assert_non_null(bytes);
    uint32_t refused = 0;
    for (size_t cut = 0; cut <= size; cut++) {
        for (int flip = 0; flip < 4; flip++) {
            static const uint8_t changes[] = {0x00, 0x01, 0x80, 0xff};
            /* Truncations with the intact bytes, then each byte of the whole section changed. */
            if (cut < size && flip > 0)
                continue;
            for (size_t at = 0; at < (cut == size && flip ? size : 1); at++) {
                memcpy(bytes, section, cut);
                if (cut == size && flip)
                    bytes[at] ^= changes[flip];
                artifact changed = with_section(&a, type, bytes, cut, 0);
                kiln_error err;
                kiln_status status = load(&changed, &err);
                if (status != KILN_OK && status != KILN_ERR_MALFORMED && status != KILN_ERR_LIMIT &&
                    status != KILN_ERR_INVALID_PROGRAM && status != KILN_ERR_UNSUPPORTED_DTYPE &&
                    status != KILN_ERR_UNSUPPORTED_OP)
                    fail_msg("%s: cut %zu, byte %zu: status %d (%s)", file, cut, at, status, err.message);
                refused += status != KILN_OK;
                free(changed.bytes);
            }
        }
    }
    /* The check can fail: most damage is refused. */
    assert_true(refused > size);
    free(bytes);
    free(a.bytes);
}

static void every_truncation_and_byte_change_is_safe(void **state)
{
    (void)state;
    damage_is_safe("methods.kiln", KILN_SECTION_MTHD);
    /* The state tensors, and the relations at the end of DIMS (feature bit 1). */
    damage_is_safe("state.kiln", KILN_SECTION_STAT);
    damage_is_safe("state.kiln", KILN_SECTION_DIMS);
    damage_is_safe("state.kiln", KILN_SECTION_MTHD);
    damage_is_safe("generation.kiln", KILN_SECTION_GENV);
}

/* A GENV of one case, as §7.15 lays it out, with the given fields. */
static void put_generation(kiln_writer *w, uint32_t count, const char *decode, uint32_t prompt_length,
                           double margin)
{
    kiln_write_u32(w, count);
    kiln_write_string(w, "count");
    kiln_write_string(w, "prefill");
    kiln_write_string(w, decode);
    kiln_write_u32(w, prompt_length);
    for (uint32_t i = 0; i < prompt_length; i++)
        kiln_write_i64(w, 0);
    kiln_write_u32(w, 1);
    kiln_write_i64(w, 1);
    kiln_write_f64(w, margin);
}

static void each_generation_rule_is_refused_by_name(void **state)
{
    (void)state;
    static const struct {
        uint32_t count, prompt_length;
        const char *decode;
        double margin;
        bool trailing;
        kiln_status status;
        const char *message;
    } rules[] = {
        {1, 2, "decode", 0, false, KILN_OK, NULL},
        {2, 2, "decode", 0, false, KILN_ERR_MALFORMED, "generation cases"},
        {1, 0, "decode", 0, false, KILN_ERR_MALFORMED, "section GENV: case 'count' has no prompt tokens"},
        {1, 2, "decode", 0, true, KILN_ERR_MALFORMED, "section GENV"},
        {1, 2, "step", 0, false, KILN_ERR_INVALID_PROGRAM, "the program has no method 'step' (its decode method)"},
        {1, 2, "prefill", 0, false, KILN_ERR_INVALID_PROGRAM, "is both its prefill and its decode method"},
        {1, 2, "decode", -0.5, false, KILN_ERR_INVALID_PROGRAM, "margin -0.5 is not a finite number >= 0"},
    };
    artifact a = golden_file("generation.kiln");
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        kiln_writer w;
        kiln_writer_init(&w);
        put_generation(&w, rules[i].count, rules[i].decode, rules[i].prompt_length, rules[i].margin);
        if (rules[i].trailing)
            kiln_write_u8(&w, 0);
        artifact changed = with_section(&a, KILN_SECTION_GENV, w.data, w.size, 0);
        kiln_error err;
        kiln_status status = load(&changed, &err);
        if (status != rules[i].status || (rules[i].message && !strstr(err.message, rules[i].message)))
            fail_msg("rule %zu: status %d (%s), expected %d and '%s'", i, status,
                     status == KILN_OK ? "" : err.message, rules[i].status, rules[i].message ? rules[i].message : "");
        free(changed.bytes);
        kiln_writer_release(&w);
    }
    /* A runtime that reads no GENV skips it, with a warning: the program loads without its cases. */
    size_t size;
    const uint8_t *genv = section_of(&a, KILN_SECTION_GENV, &size);
    artifact renamed = with_section(&a, KILN_SECTION_GENV, genv, size, KILN_FOURCC('G', 'E', 'N', 'X'));
    kiln_program *p = NULL;
    kiln_report *report = NULL;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(renamed.bytes, renamed.size, NULL, &p, &report, &err), KILN_OK);
    assert_int_equal(kiln_program_generation_count(p), 0);
    assert_int_equal(kiln_report_count(report), 1);
    kiln_program_free(p);
    kiln_report_free(report);
    free(renamed.bytes);
    free(a.bytes);
}

/* A runtime that reads no MTHD sees an unknown critical section: shown by renaming the section's type. */
static void a_runtime_without_methods_refuses_the_file(void **state)
{
    (void)state;
    artifact a = golden();
    size_t size;
    const uint8_t *mthd = section_of(&a, KILN_SECTION_MTHD, &size);
    artifact renamed = with_section(&a, KILN_SECTION_MTHD, mthd, size, KILN_FOURCC('M', 'T', 'H', 'X'));
    kiln_program *p = NULL;
    kiln_report *report = NULL;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(renamed.bytes, renamed.size, NULL, &p, &report, &err),
                     KILN_ERR_UNKNOWN_CRITICAL);
    assert_null(p);
    assert_non_null(strstr(err.message, "unknown critical section type 'MTHX' (format 1.3)"));
    kiln_report_free(report);
    free(renamed.bytes);
    free(a.bytes);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_methods_section GOLDEN_1_3_DIR\n");
        return 2;
    }
    golden_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_decode_rule_is_refused_by_name),
        cmocka_unit_test(every_truncation_and_byte_change_is_safe),
        cmocka_unit_test(a_runtime_without_methods_refuses_the_file),
        cmocka_unit_test(each_generation_rule_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
