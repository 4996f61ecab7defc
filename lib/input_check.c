/* input_check.c — semantic checks on input values (see input_check.h). */
#include "input_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "format/error.h"
#include "half.h"

void kiln_input_check_release(kiln_input_check_decl *check)
{
    free(check->categories);
    free(check->unit);
    free(check->description);
    memset(check, 0, sizeof *check);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

kiln_status kiln_input_check_copy(uint32_t input, const kiln_input_check *from, kiln_input_check_decl *out,
                                  kiln_error *err)
{
    memset(out, 0, sizeof *out);
    if (from->category_count && !from->categories)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "categories is NULL");
    out->input = input;
    out->has_range = from->has_range;
    out->min = from->min;
    out->max = from->max;
    out->finite_only = from->finite_only;
    out->unit = strdup(from->unit ? from->unit : "");
    out->description = strdup(from->description ? from->description : "");
    out->categories = malloc((from->category_count ? from->category_count : 1) * sizeof *out->categories);
    if (!out->unit || !out->description || !out->categories) {
        kiln_input_check_release(out);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for input checks");
    }
    /* Sorted and unique: the canonical form the file stores. */
    if (from->category_count)
        memcpy(out->categories, from->categories, from->category_count * sizeof *out->categories);
    qsort(out->categories, from->category_count, sizeof *out->categories, compare_i64);
    for (uint32_t i = 0; i < from->category_count; i++)
        if (out->category_count == 0 || out->categories[out->category_count - 1] != out->categories[i])
            out->categories[out->category_count++] = out->categories[i];
    return KILN_OK;
}

/* ------------------------------------------------------------ encoding */

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

/* ---------------------------------------------------------- validation */

kiln_status kiln_input_checks_validate(const kiln_model *m, kiln_error *err)
{
    for (uint32_t i = 0; i < m->check_count; i++) {
        const kiln_input_check_decl *c = &m->checks[i];
        if (c->input >= m->input_count || (i > 0 && m->checks[i - 1].input >= c->input))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "input checks must name each input at most once, in input order (check %u)", i);
        const kiln_input_decl *in = &m->inputs[c->input];
        if (c->has_range && !(c->min <= c->max))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': range %g..%g is empty or NaN", in->name,
                             c->min, c->max);
        if (c->finite_only && !kiln_dtype_is_floating(in->type.dtype))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': a finite-only check needs a float input, "
                             "not %s", in->name, kiln_dtype_name(in->type.dtype));
        if (c->category_count && (kiln_dtype_is_floating(in->type.dtype) || in->type.dtype == KILN_BOOL))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': categories need an integer input, not %s",
                             in->name, kiln_dtype_name(in->type.dtype));
        for (uint32_t k = 1; k < c->category_count; k++)
            if (c->categories[k - 1] >= c->categories[k])
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': categories must be sorted and unique",
                                 in->name);
    }
    return KILN_OK;
}

/* ---------------------------------------------------------- enforcing */

/* Element `i` as a double, and (for integer dtypes) exactly as an int64. */
static double element(const kiln_tensor *t, uint64_t i, int64_t *exact, bool *exact_ok)
{
    const uint8_t *p = (const uint8_t *)t->data + i * kiln_dtype_size(t->dtype);
    *exact_ok = true;
    switch (t->dtype) {
#define INTEGER(CODE, T)                       \
    case CODE: {                               \
        T v;                                   \
        memcpy(&v, p, sizeof v);               \
        *exact = (int64_t)v;                   \
        return (double)v;                      \
    }
        INTEGER(KILN_I8, int8_t)
        INTEGER(KILN_I16, int16_t)
        INTEGER(KILN_I32, int32_t)
        INTEGER(KILN_I64, int64_t)
        INTEGER(KILN_U8, uint8_t)
        INTEGER(KILN_U16, uint16_t)
        INTEGER(KILN_U32, uint32_t)
        INTEGER(KILN_BOOL, uint8_t)
#undef INTEGER
    case KILN_U64: {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        *exact_ok = v <= INT64_MAX;
        *exact = (int64_t)(v & INT64_MAX);
        return (double)v;
    }
    case KILN_F32: {
        float v;
        memcpy(&v, p, sizeof v);
        *exact_ok = false;
        return v;
    }
    case KILN_F64: {
        double v;
        memcpy(&v, p, sizeof v);
        *exact_ok = false;
        return v;
    }
    case KILN_F16:
    case KILN_BF16: {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        *exact_ok = false;
        return t->dtype == KILN_F16 ? kiln_f16_to_f32(v) : kiln_bf16_to_f32(v);
    }
    default:
        *exact_ok = false;
        return NAN;
    }
}

/* "[1, 2]": the multi-index of flat element `i`. */
static void format_index(const kiln_tensor *t, uint64_t i, char *out, size_t size)
{
    uint64_t index[KILN_MAX_RANK];
    for (uint32_t a = t->rank; a-- > 0;) {
        uint64_t extent = (uint64_t)t->shape[a];
        index[a] = extent ? i % extent : 0;
        i = extent ? i / extent : 0;
    }
    size_t used = (size_t)snprintf(out, size, "[");
    for (uint32_t a = 0; a < t->rank && used < size; a++)
        used += (size_t)snprintf(out + used, size - used, "%s%llu", a ? ", " : "", (unsigned long long)index[a]);
    if (used < size)
        snprintf(out + used, size - used, "]");
}

static bool in_categories(const kiln_input_check_decl *c, int64_t value)
{
    return bsearch(&value, c->categories, c->category_count, sizeof value, compare_i64) != NULL;
}

static kiln_status check_one(const kiln_model *m, const kiln_input_check_decl *c, const kiln_tensor *t,
                             kiln_error *err)
{
    const char *name = m->inputs[c->input].name;
    for (uint64_t i = 0; i < t->element_count; i++) {
        int64_t exact = 0;
        bool exact_ok = false;
        double v = element(t, i, &exact, &exact_ok);
        const char *rule = NULL;
        char detail[160] = "";
        if (c->finite_only && !isfinite(v))
            rule = "is not finite";
        else if (c->has_range && !(v >= c->min && v <= c->max))
            snprintf(detail, sizeof detail, "is outside the range %.17g..%.17g", c->min, c->max), rule = detail;
        else if (c->category_count && !(exact_ok && in_categories(c, exact)))
            rule = "is not one of the declared categories";
        if (!rule)
            continue;
        char where[KILN_MAX_RANK * 22 + 4];
        format_index(t, i, where, sizeof where);
        if (exact_ok)
            return kiln_fail(err, KILN_ERR_INPUT_CHECK, "input '%s' element %s: %lld %s", name, where,
                             (long long)exact, rule);
        return kiln_fail(err, KILN_ERR_INPUT_CHECK, "input '%s' element %s: %.17g %s", name, where, v, rule);
    }
    return KILN_OK;
}

kiln_status kiln_input_checks_enforce(const kiln_model *m, const kiln_tensor *const *inputs, kiln_error *err)
{
    for (uint32_t i = 0; i < m->check_count; i++)
        KILN_TRY(check_one(m, &m->checks[i], inputs[m->checks[i].input], err));
    return KILN_OK;
}
