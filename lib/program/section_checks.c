/* section_checks.c — see section_checks.h. */
#include "section_checks.h"

#include <stdlib.h>

#include "error.h"

enum { HAS_RANGE = 1, FINITE_ONLY = 2, KNOWN_FLAGS = HAS_RANGE | FINITE_ONLY };

void kiln_input_checks_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->check_count);
    for (uint32_t i = 0; i < m->check_count; i++) {
        const kiln_input_check_decl *c = &m->checks[i];
        kiln_write_u32(w, c->input);
        kiln_write_u8(w, (uint8_t)((c->has_range ? HAS_RANGE : 0) | (c->finite_only ? FINITE_ONLY : 0)));
        kiln_write_f64(w, c->has_range ? c->min : 0.0);
        kiln_write_f64(w, c->has_range ? c->max : 0.0);
        kiln_write_u32(w, c->category_count);
        for (uint32_t k = 0; k < c->category_count; k++)
            kiln_write_i64(w, c->categories[k]);
        kiln_write_string(w, c->unit);
        kiln_write_string(w, c->description);
    }
}

kiln_status kiln_input_checks_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                     kiln_error *err)
{
    kiln_reader r;
    uint32_t count;
    kiln_reader_init(&r, data, size, "section CHKS");
    KILN_TRY(kiln_read_count(&r, limits->max_inputs, 33, "input checks", &count, err));
    if (!(m->checks = calloc(count ? count : 1, sizeof *m->checks)))
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for input checks");
    m->check_count = count;
    for (uint32_t i = 0; i < count; i++) {
        kiln_input_check_decl *c = &m->checks[i];
        uint8_t flags;
        uint32_t categories;
        KILN_TRY(kiln_read_u32(&r, &c->input, err));
        KILN_TRY(kiln_read_u8(&r, &flags, err));
        if (flags & ~KNOWN_FLAGS)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section CHKS: check %u has unknown flags 0x%x", i, flags);
        c->has_range = flags & HAS_RANGE;
        c->finite_only = flags & FINITE_ONLY;
        KILN_TRY(kiln_read_f64(&r, &c->min, err));
        KILN_TRY(kiln_read_f64(&r, &c->max, err));
        KILN_TRY(kiln_read_count(&r, limits->max_string_length, 8, "categories", &categories, err));
        if (!(c->categories = malloc((categories ? categories : 1) * sizeof *c->categories)))
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for input checks");
        c->category_count = categories;
        for (uint32_t k = 0; k < categories; k++)
            KILN_TRY(kiln_read_i64(&r, &c->categories[k], err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &c->unit, err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &c->description, err));
    }
    return kiln_reader_expect_end(&r, err);
}
