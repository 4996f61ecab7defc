/* semantic_check.c — semantic checks on input values (see semantic_check.h). */
#include "semantic_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "dtype.h"
#include "error.h"
#include "half.h"
#include "integer_range.h"

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define INPUT_CHECK_SIZE_1_0 KILN_SIZE_THROUGH(kiln_input_check, description)

void kiln_input_check_init(kiln_input_check *check, size_t struct_size)
{
    kiln_input_check defaults;
    memset(&defaults, 0, sizeof defaults);
    defaults.struct_size = sizeof defaults;
    kiln_struct_fill(check, struct_size, &defaults, sizeof defaults);
}

kiln_status kiln_input_check_read(const kiln_input_check *check, kiln_input_check *out, kiln_error *err)
{
    kiln_input_check_init(out, sizeof *out);
    if (!check)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the input check is NULL");
    return kiln_struct_read(out, sizeof *out, check, INPUT_CHECK_SIZE_1_0, "kiln_input_check", err);
}

const kiln_input_check *kiln_input_check_at(const kiln_input_check *checks, uint32_t index)
{
    return (const kiln_input_check *)((const unsigned char *)checks + (size_t)index * checks->struct_size);
}

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

/* ---------------------------------------------------------- enforcing */

/* One input value: a double for every dtype, and for integer dtypes (bool
 * included) the exact value, signed or unsigned as its dtype is. */
typedef struct element_value {
    double real;
    bool integer;
    bool is_unsigned;
    int64_t s; /* integer && !is_unsigned */
    uint64_t u; /* integer && is_unsigned */
} element_value;

static element_value element(const kiln_tensor *t, uint64_t i)
{
    const uint8_t *p = (const uint8_t *)t->data + i * kiln_dtype_size(t->dtype);
    element_value e = {.real = NAN};
    switch (t->dtype) {
#define SIGNED(CODE, T)                                          \
    case CODE: {                                                 \
        T v;                                                     \
        memcpy(&v, p, sizeof v);                                 \
        return (element_value){(double)v, true, false, v, 0};    \
    }
#define UNSIGNED(CODE, T)                                        \
    case CODE: {                                                 \
        T v;                                                     \
        memcpy(&v, p, sizeof v);                                 \
        return (element_value){(double)v, true, true, 0, v};     \
    }
        SIGNED(KILN_I8, int8_t)
        SIGNED(KILN_I16, int16_t)
        SIGNED(KILN_I32, int32_t)
        SIGNED(KILN_I64, int64_t)
        UNSIGNED(KILN_U8, uint8_t)
        UNSIGNED(KILN_U16, uint16_t)
        UNSIGNED(KILN_U32, uint32_t)
        UNSIGNED(KILN_U64, uint64_t)
        UNSIGNED(KILN_BOOL, uint8_t)
#undef SIGNED
#undef UNSIGNED
    case KILN_F32: {
        float v;
        memcpy(&v, p, sizeof v);
        e.real = v;
        return e;
    }
    case KILN_F64: {
        double v;
        memcpy(&v, p, sizeof v);
        e.real = v;
        return e;
    }
    case KILN_F16:
    case KILN_BF16: {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        e.real = t->dtype == KILN_F16 ? kiln_f16_to_f32(v) : kiln_bf16_to_f32(v);
        return e;
    }
    default:
        return e;
    }
}

/* Integers are compared exactly (integer_range.h); through double, 2^53 + 1 passed 0..2^53. */
static bool in_range(const kiln_input_check_decl *c, const element_value *e)
{
    if (!e->integer)
        return e->real >= c->min && e->real <= c->max; /* NaN is outside */
    return e->is_unsigned ? kiln_u64_in_range(e->u, c->min, c->max) : kiln_i64_in_range(e->s, c->min, c->max);
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

static bool in_categories(const kiln_input_check_decl *c, const element_value *e)
{
    if (!e->integer || (e->is_unsigned && e->u > INT64_MAX))
        return false; /* categories are int64 */
    int64_t value = e->is_unsigned ? (int64_t)e->u : e->s;
    return bsearch(&value, c->categories, c->category_count, sizeof value, compare_i64) != NULL;
}

kiln_status kiln_input_check_enforce(const kiln_input_check_decl *c, const char *name, const kiln_tensor *t,
                                     kiln_error *err)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        element_value e = element(t, i);
        const char *rule = NULL;
        char detail[160] = "";
        if (c->finite_only && !isfinite(e.real))
            rule = "is not finite";
        else if (c->has_range && !in_range(c, &e))
            snprintf(detail, sizeof detail, "is outside the range %.17g..%.17g", c->min, c->max), rule = detail;
        else if (c->category_count && !in_categories(c, &e))
            rule = "is not one of the declared categories";
        if (!rule)
            continue;
        char where[KILN_MAX_RANK * 22 + 4];
        format_index(t, i, where, sizeof where);
        if (e.integer && e.is_unsigned)
            return kiln_fail(err, KILN_ERR_INPUT_CHECK, "input '%s' element %s: %llu %s", name, where,
                             (unsigned long long)e.u, rule);
        if (e.integer)
            return kiln_fail(err, KILN_ERR_INPUT_CHECK, "input '%s' element %s: %lld %s", name, where,
                             (long long)e.s, rule);
        return kiln_fail(err, KILN_ERR_INPUT_CHECK, "input '%s' element %s: %.17g %s", name, where, e.real, rule);
    }
    return KILN_OK;
}
